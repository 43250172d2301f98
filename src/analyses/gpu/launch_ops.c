/* launch --by-op: per ATen op and the kernels it launched, how often, how
 * long after the op began its first launch came, and how long after that
 * launch its kernel started (HTA's get_aten_op_kernels_and_delay,
 * hta-semantics §9.11). A launch belongs to the innermost aten:: op that
 * covers it: by default on its own thread; with --hta-compat on any
 * thread (the latest to start), and every rank's table also counts the
 * ranks before it, as HTA's list of launches is never emptied. */
#include "analyses/common/intervals.h"
#include "analyses/common/op_cover.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_intern.h"
#include "ta_model.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "op", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "kernels", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "op_to_launch_us", TA_COL_REAL, TA_UNIT_US, 0 },
	{ "launch_to_kernel_us", TA_COL_REAL, TA_UNIT_US, 0 },
};

#define LAUNCH_GLOB "(n.name GLOB 'cuda*LaunchKernel*' OR" \
	" n.name GLOB 'cuLaunchKernel*' OR n.name GLOB 'runFunction*')"

/* Default: the host's ops and its launch calls, with the GPU work of
 * their correlation. */
static const char ops_sql[] =
	"SELECT h.tid, h.ts, h.ts + h.dur, h.name FROM host h JOIN label n"
	" ON n.name_id = h.name WHERE h.rank = ? AND n.name GLOB 'aten::*'"
	" AND h.ts IS NOT NULL AND h.dur IS NOT NULL ORDER BY h.ts, h.idx";
static const char launch_sql[] =
	"SELECT c.tid, c.ts, c.ts + c.dur, d.ts, d.name, c.idx FROM calls c"
	" JOIN label n ON n.name_id = c.name JOIN dev d ON d.rank = c.rank"
	" AND d.correlation = c.correlation WHERE c.rank = ? AND " LAUNCH_GLOB
	" AND c.correlation != -1 AND c.ts IS NOT NULL AND c.dur IS NOT NULL"
	" ORDER BY c.idx";
/* HTA: its rows in its order; a launch's kernel is the device row whose
 * partner it is (several: HTA fails; none: HTA fails, skipped here) */
static const char hta_ops_sql[] =
	"SELECT h.tid, h.ts, h.ts + h.dur, h.name FROM hta_trace h JOIN label n"
	" ON n.name_id = h.name WHERE h.rank = ? AND n.name GLOB 'aten::*'"
	" ORDER BY h.ts, h.part, h.idx";
static const char hta_launch_sql[] =
	"SELECT l.tid, l.ts, l.ts + l.dur, k.ts, k.name, l.idx FROM hta_trace l"
	" JOIN label n ON n.name_id = l.name JOIN hta_trace k ON k.rank = l.rank"
	" AND k.correlation = l.correlation AND k.stream != -1 AND k.partner = l.idx"
	" WHERE l.rank = ? AND " LAUNCH_GLOB " ORDER BY l.part, l.idx";

struct record {                     /* a launch with its op */
	int64_t tid, op_ts, op_name, op_delay, run_delay, kernel, idx;
};

struct recs {
	struct record *v;
	size_t n, cap;
};

struct launch_row {
	int64_t tid, ts, end, kts, kname, idx;
};

static int cmp_launch_ts(const void *a, const void *b)
{
	const struct launch_row *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_record_idx(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* One rank's launches with their ops, in launch (row) order. */
static int rank_records(sqlite3 *db, int64_t rank, const struct ta_rules *R,
			struct recs *r,
			struct ta_error *err)
{
	struct ta_op_cover ops;
	struct launch_row *l = NULL;
	size_t nl = 0, capl = 0, i, base = r->n;
	sqlite3_stmt *st = NULL;
	int rc;

	if (ta_op_cover_load(db, R->trace_frame ? hta_ops_sql : ops_sql, rank, &ops, err) < 0)
		return -1;
	if (ta_db_prepare(db, R->trace_frame ? hta_launch_sql : launch_sql, &st, err) < 0) {
		ta_op_cover_free(&ops);
		return -1;
	}
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t idx = sqlite3_column_int64(st, 5);

		/* a launch with several kernels: HTA fails; the first here */
		if (nl > 0 && l[nl - 1].idx == idx)
			continue;
		if (nl == capl) {
			capl = capl ? 2 * capl : 1024;
			l = ta_xrealloc(l, capl * sizeof(*l));
		}
		l[nl++] = (struct launch_row){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), idx };
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		ta_op_cover_free(&ops);
		free(l);
		return -1;
	}
	/* the ops found sweeping by time; the records then in row order */
	ta_qsort(l, nl, sizeof(*l), cmp_launch_ts);
	for (i = 0; i < nl; i++) {
		const struct ta_op *o = ta_op_cover_find(&ops, l[i].tid, l[i].ts, l[i].end,
							  !R->own_thread);

		if (!o)
			continue;
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			r->v = ta_xrealloc(r->v, r->cap * sizeof(*r->v));
		}
		r->v[r->n++] = (struct record){ o->tid, o->ts, o->name,
			l[i].ts - o->ts, l[i].kts - l[i].ts, l[i].kname, l[i].idx };
	}
	ta_qsort(r->v + base, r->n - base, sizeof(*r->v), cmp_record_idx);
	ta_op_cover_free(&ops);
	free(l);
	return 0;
}

static const struct record *sort_recs;   /* cmp_group's records */

static int cmp_group(const void *a, const void *b)
{
	const struct record *x = &sort_recs[*(const size_t *)a];
	const struct record *y = &sort_recs[*(const size_t *)b];

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->op_name != y->op_name)
		return x->op_name < y->op_name ? -1 : 1;
	if (x->op_ts != y->op_ts)
		return x->op_ts < y->op_ts ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

struct seq_acc {
	int64_t count;
	double op_delay, run_delay;    /* sums of each group's first, ns */
};

static int cmp_rows(const struct ta_table *t, size_t a, size_t b)
{
	int64_t x = ta_table_cell(t, a, 3)->i, y = ta_table_cell(t, b, 3)->i;
	int c;

	if (x != y)
		return x > y ? -1 : 1;
	if ((c = strcmp(ta_table_cell(t, a, 1)->s, ta_table_cell(t, b, 1)->s)) != 0)
		return c;
	return strcmp(ta_table_cell(t, a, 2)->s, ta_table_cell(t, b, 2)->s);
}

/* Groups (an op's run: thread, name, start) and their kernel sequences,
 * then per (op, sequence) the count and the mean first delays. */
static void rows_for(sqlite3_stmt *name_st, struct ta_table *t, int64_t rank,
		     const struct recs *r, size_t from)
{
	size_t n = r->n - from, i, j, k;
	size_t *order = ta_xcalloc(n + 1, sizeof(*order));
	struct ta_intern *keys = ta_intern_new();
	struct seq_acc *acc = NULL;
	struct ta_buf key = { 0 };
	size_t nacc = 0;
	int64_t id;
	int is_new;

	for (i = 0; i < n; i++)
		order[i] = from + i;
	sort_recs = r->v;
	ta_qsort(order, n, sizeof(*order), cmp_group);
	for (i = 0; i < n; i = j) {
		const struct record *first = &r->v[order[i]];

		for (j = i; j < n && r->v[order[j]].tid == first->tid &&
		     r->v[order[j]].op_name == first->op_name &&
		     r->v[order[j]].op_ts == first->op_ts; j++)
			;
		ta_buf_reset(&key);
		for (k = i; k <= j; k++) {
			const char *s = NULL;
			int64_t name = k == i ? first->op_name : r->v[order[k - 1]].kernel;

			sqlite3_bind_int64(name_st, 1, name);
			if (sqlite3_step(name_st) == SQLITE_ROW)
				s = (const char *)sqlite3_column_text(name_st, 0);
			ta_buf_adds(&key, k == i ? "" : k == i + 1 ? "\x1f" : " -> ");
			ta_buf_adds(&key, s ? s : "");
			sqlite3_reset(name_st);
		}
		id = ta_intern(keys, key.s, key.len, &is_new);
		if (is_new) {
			acc = ta_xrealloc(acc, (size_t)id * sizeof(*acc));
			memset(&acc[id - 1], 0, sizeof(*acc));
			nacc = (size_t)id;
		}
		acc[id - 1].count++;
		acc[id - 1].op_delay += (double)first->op_delay;
		acc[id - 1].run_delay += (double)first->run_delay;
	}
	for (i = 0; i < nacc; i++) {
		const char *s = ta_intern_str(keys, (int64_t)i + 1);
		const char *sep = strchr(s, '\x1f');
		size_t row = ta_table_add_row(t);
		char *op = ta_xstrndup(s, (size_t)(sep - s));

		ta_table_set_int(t, row, 0, rank);
		ta_table_set_text(t, row, 1, op);
		ta_table_set_text(t, row, 2, sep + 1);
		ta_table_set_int(t, row, 3, acc[i].count);
		ta_table_set_real(t, row, 4, ta_round(acc[i].op_delay / 1000.0 /
						      (double)acc[i].count, 3));
		ta_table_set_real(t, row, 5, ta_round(acc[i].run_delay / 1000.0 /
						      (double)acc[i].count, 3));
		free(op);
	}
	ta_buf_free(&key);
	free(acc);
	ta_intern_free(keys);
	free(order);
}

int ta_launch_ops_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err)
{
	struct ta_table *t = ta_table_new("Launches per ATen op", cols, 6);
	struct recs r = { NULL, 0, 0 };
	sqlite3_stmt *st = NULL, *name_st = NULL;
	int rc = 0, step_rc = SQLITE_DONE;
	size_t from;

	*out = NULL;
	if (ta_model_prepare(db, q, TA_NEED_GPU | TA_NEED_DEV | TA_NEED_HOST, err) < 0 ||
	    ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?", &name_st, err) < 0 ||
	    ta_db_prepare(db, "SELECT rank FROM sel_ranks ORDER BY 1", &st, err) < 0)
		rc = -1;
	while (rc == 0 && (step_rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);

		/* HTA never empties its list: a rank's table has the ranks
		 * before it too */
		from = ta_rules(q)->own_thread ? r.n : 0;
		rc = rank_records(db, rank, ta_rules(q), &r, err);
		if (rc == 0)
			rows_for(name_st, t, rank, &r, from);
	}
	sqlite3_finalize(st);
	sqlite3_finalize(name_st);
	if (rc == 0)
		rc = ta_db_done(db, step_rc, err);
	free(r.v);
	if (rc < 0) {
		ta_table_free(t);
		return -1;
	}
	ta_table_sort(t, cmp_rows);
	*out = t;
	return 0;
}

struct ta_table *ta_launch_ops_join(struct ta_table *t, void *ctx)
{
	(void)ctx;
	/* stable: rank order within ties, as one run's */
	ta_table_sort(t, cmp_rows);
	return t;
}
