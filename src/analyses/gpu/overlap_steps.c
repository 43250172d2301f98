/* overlap --by step: per rank and kept step, the TensorBoard plugin's
 * Computation/Communication chart, right on today's traces: the step's
 * time split into computation alone (compute kernels: not the
 * collectives'), overlapping (a collective's kernel and a compute kernel
 * both running), communication alone (nothing computed beside
 * it) and other (neither: idle GPU, copies, sets). The four add up to the
 * step. Collectives are every library's kernels by kind (NCCL, RCCL,
 * HCCL; FSDP2's too), where the plugin took the kernels of nccl:* ops'
 * External ids, which PyTorch 2.11 no longer gives them, and so counted
 * exposed communication as computation; and gloo's collectives, which run
 * on the CPU, by their ranges (as overview counts them). */
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"
#include "analyses/common/intervals.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "step_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "computation_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "overlapping_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "communication_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "other_us", TA_COL_REAL, TA_UNIT_US, 0 },
};
#define NCOLS (sizeof(cols) / sizeof(*cols))

struct win { int64_t step, ts, end, comp, comm, both; };

/* a and b: sorted, disjoint spans; their intersection, into u */
static void intersect(const struct ta_union *a, const struct ta_union *b, struct ta_union *u)
{
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		int64_t s = a->v[i].start > b->v[j].start ? a->v[i].start : b->v[j].start;
		int64_t e = a->v[i].end < b->v[j].end ? a->v[i].end : b->v[j].end;

		if (e > s)
			ta_union_add(u, s, e - s);
		if (a->v[i].end < b->v[j].end)
			i++;
		else
			j++;
	}
}

/* Each window's share of the spans of u (both sorted), into field off. */
static void credit(const struct ta_union *u, struct win *w, size_t nw, size_t off)
{
	size_t i, at = 0, k;

	for (i = 0; i < u->n; i++) {
		while (at < nw && w[at].end <= u->v[i].start)
			at++;
		for (k = at; k < nw && w[k].ts < u->v[i].end; k++) {
			int64_t s = u->v[i].start > w[k].ts ? u->v[i].start : w[k].ts;
			int64_t e = u->v[i].end < w[k].end ? u->v[i].end : w[k].end;

			if (e > s)
				*(int64_t *)((char *)&w[k] + off) += e - s;
		}
	}
}

static int load_windows(sqlite3 *db, int64_t rank, struct win **w, size_t *n,
			struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*n = 0;
	if (ta_db_prepare(db, TA_WINDOWS_SQL, &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		/* a step of no length (its window ends where the one before
		 * did) is a row of zeros, as temporal gives it */
		if (sqlite3_column_type(st, 1) == SQLITE_NULL ||
		    sqlite3_column_type(st, 2) == SQLITE_NULL ||
		    sqlite3_column_int64(st, 2) < sqlite3_column_int64(st, 1))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			*w = ta_xrealloc(*w, cap * sizeof(**w));
		}
		(*w)[(*n)++] = (struct win){ sqlite3_column_int64(st, 0),
					     sqlite3_column_int64(st, 1),
					     sqlite3_column_int64(st, 2), 0, 0, 0 };
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static int one_rank(sqlite3 *db, int64_t rank, struct ta_table *t, struct ta_error *err)
{
	struct ta_union comp, comm, both;
	struct win *w = NULL;
	sqlite3_stmt *st = NULL, *untimed_st = NULL;
	size_t nw, i;
	int said = 0, failed = 0;
	int rc;

	memset(&comp, 0, sizeof(comp));
	memset(&comm, 0, sizeof(comm));
	memset(&both, 0, sizeof(both));
	if (load_windows(db, rank, &w, &nw, err) < 0 ||
	    ta_db_prepare(db, "SELECT ts, dur, kind = " TA_SQL(TA_KIND_COMM) " FROM dev_win"
			  " WHERE rank = ?1 AND kind IN (" TA_SQL(TA_KIND_COMPUTE) ", "
			  TA_SQL(TA_KIND_COMM) ") AND dur > 0"
			  " UNION ALL SELECT h.ts, h.dur, 1 FROM host h JOIN label n"
			  " ON n.name_id = h.name WHERE h.rank = ?1 AND n.name GLOB 'gloo:*'"
			  " AND h.ts IS NOT NULL AND h.dur > 0 ORDER BY 1", &st, err) < 0) {
		free(w);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		ta_union_add(sqlite3_column_int(st, 2) ? &comm : &comp,
			     sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(w);
		ta_union_free(&comp);
		ta_union_free(&comm);
		return -1;
	}
	intersect(&comp, &comm, &both);
	credit(&comp, w, nw, offsetof(struct win, comp));
	credit(&comm, w, nw, offsetof(struct win, comm));
	credit(&both, w, nw, offsetof(struct win, both));
	for (i = 0; i < nw && !failed; i++) {
		int64_t len = w[i].end - w[i].ts;
		int64_t untimed = ta_model_untimed_coll(db, &untimed_st, rank, w[i].step);
		size_t r;

		if (untimed < 0) {
			ta_db_failed(db, err);
			failed = 1;
			break;
		}
		r = ta_table_add_row(t);
		ta_table_set_int(t, r, 0, rank);
		if (w[i].step >= 0)
			ta_table_set_int(t, r, 1, w[i].step);
		ta_table_set_real(t, r, 2, (double)len / 1000.0);
		ta_table_set_real(t, r, 3, (double)(w[i].comp - w[i].both) / 1000.0);
		ta_table_set_real(t, r, 4, (double)w[i].both / 1000.0);
		ta_table_set_real(t, r, 5, (double)(w[i].comm - w[i].both) / 1000.0);
		ta_table_set_real(t, r, 6, (double)(len - w[i].comp - w[i].comm + w[i].both) /
				  1000.0);
		/* a collective kernel of the step with no usable length: its
		 * communication is not measured, nor what it overlapped
		 * (helper-57: --by rank blanked it, --by step read 145 us) */
		if (untimed) {
			ta_table_set_null(t, r, 4);
			ta_table_set_null(t, r, 5);
			ta_table_set_null(t, r, 6);
			if (!said++)
				ta_table_warn(t, "collective kernels with no usable length (a "
					      "damaged trace): their steps' communication, and what "
					      "it overlapped, is not measured");
		}
	}
	sqlite3_finalize(untimed_st);
	if (!nw) {   /* its rows are missing, not zero: a gate trips */
		ta_table_warn(t, "rank %lld: no kept step and no GPU work: no rows",
			      (long long)rank);
		t->ranks_empty++;
	} else if (!comm.n) {
		ta_table_note(t, "rank %lld: no collectives", (long long)rank);
	}
	free(w);
	ta_union_free(&comp);
	ta_union_free(&comm);
	ta_union_free(&both);
	return failed ? -1 : 0;
}

int ta_overlap_steps_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct ta_table *t;
	int rc;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST | TA_NEED_COLL,
			      err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY rank", &st, err) < 0)
		return -1;
	t = ta_table_new("Computation and communication per step", cols, NCOLS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (one_rank(db, sqlite3_column_int64(st, 0), t, err) < 0) {
			sqlite3_finalize(st);
			ta_table_free(t);
			return -1;
		}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		ta_table_free(t);
		return -1;
	}
	*out = t;
	return 0;
}
