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

static void say_matching(struct ta_table *t, const struct ta_peers *p)
{
	size_t i, lo, hi;

	if (p->absent)
		ta_table_warn(t, "the job's process groups name %zu rank%s with no "
			      "collective here (%s trace is missing): what %s for "
			      "and holds back is not measured", p->absent,
			      p->absent == 1 ? "" : "s", p->absent == 1 ? "its" : "their",
			      p->absent == 1 ? "it waits" : "they wait");
	t->ranks_absent = p->absent;
	/* collectives of groups of several ranks (or of unknown size) and not
	 * one matched: a peer's trace is missing, whatever its group says */
	if (!p->matched && p->lone && p->max_group != 1 && !t->ranks_absent)
		t->ranks_absent = 1;
	if (p->mismatched)
		ta_table_warn(t, "%zu collectives disagree across ranks on name or "
			      "message size; left out", p->mismatched);
	if (p->partial)
		ta_table_note(t, "%zu collectives matched without every member's "
			      "trace", p->partial);
	if (p->lone)
		ta_table_note(t, "%zu collectives appear on one rank only (outside "
			      "the others' profiled steps); left out", p->lone);
	if (!p->matched) {
		ta_table_warn(t, "no collective matched across ranks: no wait or "
			      "lateness to measure");
		return;
	}
	if (p->nranks <= 8) {
		for (i = 0; i < p->nranks; i++)
			ta_table_note(t, "rank %lld: clock offset %+.3f ms (from %zu "
				      "matched collectives)", (long long)p->ranks[i],
				      (double)p->offset_ns[i] / 1e6, p->matched);
		return;
	}
	lo = hi = 0;
	for (i = 1; i < p->nranks; i++) {
		if (p->offset_ns[i] < p->offset_ns[lo])
			lo = i;
		if (p->offset_ns[i] > p->offset_ns[hi])
			hi = i;
	}
	ta_table_note(t, "clock offsets of %zu ranks from %+.3f ms (rank %lld) to "
		      "%+.3f ms (rank %lld), from %zu matched collectives", p->nranks,
		      (double)p->offset_ns[lo] / 1e6, (long long)p->ranks[lo],
		      (double)p->offset_ns[hi] / 1e6, (long long)p->ranks[hi], p->matched);
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
		size_t r = ta_table_add_row(t);

		ta_table_set_int(t, r, 0, rank);
		if (!step->null)
			ta_table_set_int(t, r, 1, step->i);
		ta_table_set_real(t, r, 2, step_us);
		ta_table_set_real(t, r, 3, ta_table_cell(verdicts, i, 3)->d);
		ta_table_set_real(t, r, 4, x ? (double)x->comm_ns / 1e3 : 0);
		ta_table_set_real(t, r, 5, x ? (double)x->wait_ns / 1e3 : 0);
		ta_table_set_real(t, r, 6, x ? (double)x->late_ns / 1e3 : 0);
		ta_table_set_real(t, r, 7, x && x->ncoll ?
				  (double)x->nlast / (double)x->ncoll : 0);
		ta_table_set_int(t, r, 8, x && x->late_ns > 0 &&
				 (double)x->late_ns / 1e3 >= o->late_pct / 100 * step_us &&
				 x->late_ns == late_of(&p, x->step));
		ta_table_set_text(t, r, 9, ta_table_cell(verdicts, i, 5)->s);
	}
	say_matching(t, &p);
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
