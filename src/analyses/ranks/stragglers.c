/* Which rank holds the others back, by how much, and why. Per rank and
 * step: the step's window and GPU busy share and the rank's own main
 * cause (diagnose's), its matched collectives' time, how long they waited
 * for the last member to arrive (wait), how long the others waited for it
 * (late), and the share of them it came last to (peers.c). The straggler
 * of a step is the rank the others waited for most, when that is at least
 * late_pct of its step. */
#include "peers.h"
#include "ta_analyses.h"

#include <stdlib.h>
#include <string.h>

/* The defaults: the command's, and those of every caller (report). */
const struct ta_stragglers_opts ta_stragglers_defaults = { 10 };

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "busy_pct", TA_COL_REAL, TA_UNIT_PCT, 0 },
	{ "comm_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "wait_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "late_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "arrived_last", TA_COL_REAL, TA_UNIT_RATIO, 0 },
	{ "straggler", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "cause", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};

/* The largest lateness of any rank in the step, 0 if none. */
static int64_t late_of(const struct ta_peers *p, int64_t step)
{
	size_t j;

	for (j = 0; j < p->nmost; j++)
		if (p->most[j].step == step)
			return p->most[j].late_ns;
	return 0;
}


int ta_stragglers_run(sqlite3 *db, const struct ta_query *q,
		      const struct ta_stragglers_opts *o, struct ta_table **out,
		      struct ta_error *err)
{
	struct ta_diagnose_opts dopts = ta_diagnose_defaults;
	struct ta_table *verdicts = NULL, *findings = NULL, *t;
	struct ta_peers p;
	size_t i;

	dopts.path = 0; /* the verdicts alone */
	dopts.findings = 0;
	*out = NULL;
	if (ta_diagnose_run(db, q, &dopts, &verdicts, &findings, err) < 0)
		return -1;
	ta_table_free(findings);
	if (ta_peers_match(db, q, &p, err) < 0) {
		ta_table_free(verdicts);
		return -1;
	}
	t = ta_table_new("Stragglers per rank and step", cols, 10);
	for (i = 0; i < verdicts->nrows; i++) {
		const struct ta_cell *step = ta_table_cell(verdicts, i, 1);
		int64_t rank = ta_table_cell(verdicts, i, 0)->i;
		double step_us = ta_table_cell(verdicts, i, 2)->d;
		const struct ta_peer_step *x = step->null ? NULL :
			ta_peers_find(&p, rank, step->i);
		struct ta_peer_step all;   /* --window span: the rank's steps together */
		size_t r = ta_table_add_row(t), latest = 0;

		if (step->null) {
			ta_peers_rank_total(&p, rank, &all, &latest);
			x = &all;
		}

		ta_table_set_int(t, r, 0, rank);
		if (!step->null)
			ta_table_set_int(t, r, 1, step->i);
		ta_table_set_real(t, r, 2, step_us);
		ta_table_set_real(t, r, 3, ta_table_cell(verdicts, i, 3)->d);
		/* a gloo job's collectives are not matched: nothing measured,
		 * not zero */
		if (!(p.gloo && !p.matched)) {
			ta_table_set_real(t, r, 4, x ? (double)x->comm_ns / 1e3 : 0);
			ta_table_set_real(t, r, 5, x ? (double)x->wait_ns / 1e3 : 0);
			ta_table_set_real(t, r, 6, x ? (double)x->late_ns / 1e3 : 0);
			ta_table_set_real(t, r, 7, x && x->ncoll ?
					  (double)x->nlast / (double)x->ncoll : 0);
		}
		ta_table_set_int(t, r, 8, x && x->late_ns > 0 &&
				 (double)x->late_ns / 1e3 >= o->late_pct / 100 * step_us &&
				 (step->null ? latest > 0 : x->late_ns == late_of(&p, x->step)));
		ta_table_set_text(t, r, 9, ta_table_cell(verdicts, i, 5)->s);
	}
	ta_peers_say(t, &p);
	ta_peers_free(&p);
	ta_table_free(verdicts);
	*out = t;
	return 0;
}

struct ta_table *ta_stragglers_join(struct ta_table *t)
{
	ta_name_late_peers(t, 0, 1, 9);
	return t;
}
