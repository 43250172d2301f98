/* diagnose --findings --summary: each finding summed over the kept steps.
 * Per step, a cause just under the cost threshold in one step and over
 * it in the next comes and goes, and step numbers differ between runs:
 * a baseline of per-step rows called a rerun of the same job new. A row
 * per rank, kind and where is the same from run to run. Its cost is the
 * sum over the kept steps (a finding of the whole trace, low_efficiency
 * or memory's, has no step: its own). */
#include "analyses/common/intervals.h"
#include "ta_analyses.h"
#include "ta_intern.h"

#include <stdlib.h>
#include <string.h>

static const struct ta_col cols[] = {
	{ "rank", TA_COL_INT, TA_UNIT_NONE, 1 },
	{ "kind", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "cost_us", TA_COL_REAL, TA_UNIT_US, 0 },      /* summed */
	{ "steps", TA_COL_INT, TA_UNIT_NONE, 0 },       /* found in */
	{ "count", TA_COL_INT, TA_UNIT_NONE, 0 },
	{ "where", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "advice", TA_COL_TEXT, TA_UNIT_NONE, 0 },
	{ "detail", TA_COL_TEXT, TA_UNIT_NONE, 0 },
};
enum { C_RANK, C_KIND, C_COST, C_STEPS, C_COUNT, C_WHERE, C_ADVICE, C_DETAIL };

struct sum {
	int64_t rank, steps, count;
	double cost_us;
	size_t first;            /* its first row in the findings */
	size_t detail;           /* its last row with a detail */
};

/* By rank, then cost, the largest first; then as found. */
static int cmp_sum(const void *x, const void *y)
{
	const struct sum *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->cost_us != b->cost_us)
		return a->cost_us > b->cost_us ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

struct ta_table *ta_findings_summary(struct ta_table *f)
{
	struct ta_table *t = ta_table_new("Findings over the kept steps, by cost",
					  cols, sizeof(cols) / sizeof(*cols));
	long kind = ta_table_col(f, "kind"), where = ta_table_col(f, "where");
	long step = ta_table_col(f, "step"), cost = ta_table_col(f, "cost_us");
	long count = ta_table_col(f, "count"), advice = ta_table_col(f, "advice");
	long detail = ta_table_col(f, "detail");
	struct ta_intern *keys = ta_intern_new();
	struct sum *s = ta_xcalloc(f->nrows + 1, sizeof(*s));
	size_t n = 0, i;

	for (i = 0; i < f->nrows; i++) {
		int64_t rank = ta_table_cell(f, i, 0)->i;
		struct ta_buf k = { 0 };
		int64_t id;
		int is_new;

		/* the key's parts, each ended by a byte no name holds */
		ta_buf_addf(&k, "%lld", (long long)rank);
		ta_buf_add(&k, "", 1);
		ta_buf_adds(&k, ta_table_cell(f, i, (size_t)kind)->s);
		ta_buf_add(&k, "", 1);
		ta_buf_adds(&k, ta_table_cell(f, i, (size_t)where)->s);
		id = ta_intern(keys, k.s, k.len, &is_new);
		ta_buf_free(&k);
		if (is_new)
			s[n++] = (struct sum){ rank, 0, 0, 0, i, (size_t)-1 };
		s[id - 1].steps += !ta_table_cell(f, i, (size_t)step)->null;
		s[id - 1].count += ta_table_cell(f, i, (size_t)count)->i;
		s[id - 1].cost_us += ta_table_cell(f, i, (size_t)cost)->d;
		if (!ta_table_cell(f, i, (size_t)detail)->null)
			s[id - 1].detail = i;
	}
	ta_qsort(s, n, sizeof(*s), cmp_sum);
	for (i = 0; i < n; i++) {
		size_t r = ta_table_add_row(t), x = s[i].first;

		ta_table_set_int(t, r, C_RANK, s[i].rank);
		ta_table_set_text(t, r, C_KIND, ta_table_cell(f, x, (size_t)kind)->s);
		/* µs to the ns the findings were measured in: no float noise
		 * from the sum (31844.629999999997) */
		ta_table_set_real(t, r, C_COST, ta_round(s[i].cost_us, 3));
		if (s[i].steps)
			ta_table_set_int(t, r, C_STEPS, s[i].steps);
		ta_table_set_int(t, r, C_COUNT, s[i].count);
		ta_table_set_text(t, r, C_WHERE, ta_table_cell(f, x, (size_t)where)->s);
		ta_table_set_text(t, r, C_ADVICE, ta_table_cell(f, x, (size_t)advice)->s);
		if (s[i].detail != (size_t)-1)
			ta_table_set_text(t, r, C_DETAIL,
					  ta_table_cell(f, s[i].detail, (size_t)detail)->s);
	}
	if (f->values && f->values[kind])
		ta_table_set_values(t, C_KIND, f->values[kind]);
	ta_buf_add(&t->notes, f->notes.s ? f->notes.s : "", f->notes.len);
	ta_buf_add(&t->warnings, f->warnings.s ? f->warnings.s : "", f->warnings.len);
	free(s);
	ta_intern_free(keys);
	ta_table_free(f);
	return t;
}
