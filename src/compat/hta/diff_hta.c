/* diff --hta-compat: HTA 0.6.1's TraceDiff.compare_traces and ops_diff.
 * Each side: its first rank and the first iteration of its symbol table
 * (or the ones asked for); every row of that rank whose iteration it is
 * (hta-semantics §5: CPU rows by the step over their start, GPU rows by
 * their launch's), CPU and GPU together unless --kind; counts and total
 * durations per name over every category, not per step. */
#include "analyses/ranks/diff_int.h"
#include "ta_db.h"
#include "ta_model.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void ta_short_name(const char *name, struct ta_buf *out)
{
	size_t n = strlen(name), i, top = 0;
	char *stack;
	const char *sp;

	/* copies and memsets keep their names (is_memory_kernel) */
	if (strncmp(name, "Memcpy", 6) == 0 || strncmp(name, "hipMemcpy", 9) == 0 ||
	    strncmp(name, "Memset", 6) == 0 || strncmp(name, "hipMemset", 9) == 0 ||
	    strncmp(name, "dma", 3) == 0 || (!strchr(name, '<') && !strchr(name, '('))) {
		ta_buf_adds(out, name);
		return;
	}
	stack = ta_xmalloc(n + 1);
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (c == '-' && name[i + 1] == '>') {   /* "->" is dropped first */
			i++;
			continue;
		}
		if (c == '>' || c == ')') {
			char open = c == '>' ? '<' : '(';

			while (top && stack[top - 1] != open)
				top--;
			if (top)
				top--;
		} else {
			stack[top++] = c;
		}
	}
	stack[top] = '\0';
	sp = strrchr(stack, ' ');
	ta_buf_adds(out, sp ? sp + 1 : stack);
	free(stack);
}

/* "ProfilerStep#12" (HTA's regex allows spaces): 12, or -1. */
static int64_t step_number(const char *s)
{
	char *end;
	long long v;

	if (strncmp(s, "ProfilerStep", 12) != 0)
		return -1;
	for (s += 12; isspace((unsigned char)*s); s++)
		;
	if (*s++ != '#')
		return -1;
	for (; isspace((unsigned char)*s); s++)
		;
	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	return v;
}

/* LabeledTrace.iterations(): every ProfilerStep name of the trace, as
 * int(name.replace("ProfilerStep#", "")); the first is the default. */
static int first_iteration(sqlite3 *db, int64_t *first, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, any = 0;

	if (ta_db_prepare(db, "SELECT name FROM label WHERE name GLOB 'ProfilerStep#*'",
			  &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *s = (const char *)sqlite3_column_text(st, 0) + 13;
		char *end;
		long long v = strtoll(s, &end, 10);

		if (end == s || *end)
			continue;
		if (!any++ || v < *first)
			*first = v;
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	return any ? 0 : 1;
}

struct hrow {
	int64_t idx, ts, dur, stream, partner, name, cat, iter;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct hrow *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const struct hrow *row_by_idx(const struct hrow *v, size_t n, int64_t idx)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m].idx < idx)
			a = m + 1;
		else
			b = m;
	}
	return a < n && v[a].idx == idx ? &v[a] : NULL;
}

#define NO_ITER INT64_MIN   /* HTA's NaN: matches no iteration */

/* add_iteration (§5) on one rank's rows, in idx order. */
static void iterations(sqlite3 *db, struct hrow *r, size_t n)
{
	sqlite3_stmt *st = NULL;
	struct hrow *steps = ta_xcalloc(n + 1, sizeof(*steps));
	int64_t cpu_op = ta_db_int(db, "SELECT name_id FROM label WHERE name = 'cpu_op'", -1);
	size_t ns = 0, i, j;

	if (sqlite3_prepare_v2(db, "SELECT name FROM label WHERE name_id = ?", -1,
			       &st, NULL) != SQLITE_OK)
		st = NULL;
	for (i = 0; st && i < n; i++) {
		int64_t num = -1;

		sqlite3_bind_int64(st, 1, r[i].name);
		if (sqlite3_step(st) == SQLITE_ROW)
			num = step_number((const char *)sqlite3_column_text(st, 0));
		sqlite3_reset(st);
		if (num >= 0) {
			steps[ns] = r[i];
			steps[ns++].iter = num;
		}
	}
	sqlite3_finalize(st);
	for (i = 0; i < n; i++) {
		r[i].iter = NO_ITER;
		if (r[i].stream < 0 || (r[i].stream == 0 && r[i].cat == cpu_op)) {
			r[i].iter = -1;
			for (j = 0; j < ns; j++)   /* the last step over it wins */
				if (steps[j].ts <= r[i].ts && r[i].ts < steps[j].ts + steps[j].dur)
					r[i].iter = steps[j].iter;
		}
	}
	for (i = 0; i < n; i++)
		if (r[i].stream > 0) {
			const struct hrow *p = r[i].partner > 0 ?
				row_by_idx(r, n, r[i].partner) : NULL;

			r[i].iter = p ? p->iter : -1;
		}
	free(steps);
}

static int side_rows(sqlite3 *db, int64_t rank, const struct ta_diff_side *s,
		     int64_t first, enum ta_diff_kind kinds, int64_t **count,
		     int64_t **ns, size_t *nnames, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct hrow *r = NULL;
	size_t n = 0, cap = 0, i;
	int64_t lo = s->step_lo >= 0 ? s->step_lo : first;
	int64_t hi = s->step_lo >= 0 ? s->step_hi : first;
	int rc;

	if (ta_db_prepare(db, "SELECT idx, ts, dur, stream, partner, name, cat"
			  " FROM hta_trace WHERE rank = ? ORDER BY idx", &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			r = ta_xrealloc(r, cap * sizeof(*r));
		}
		r[n].idx = sqlite3_column_int64(st, 0);
		r[n].ts = sqlite3_column_int64(st, 1);
		r[n].dur = sqlite3_column_int64(st, 2);
		r[n].stream = sqlite3_column_int64(st, 3);
		r[n].partner = sqlite3_column_int64(st, 4);
		r[n].name = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 :
			    sqlite3_column_int64(st, 5);
		r[n++].cat = sqlite3_column_int64(st, 6);
	}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0) {
		free(r);
		return -1;
	}
	ta_qsort(r, n, sizeof(*r), cmp_idx);
	iterations(db, r, n);
	for (i = 0; i < n; i++) {
		if (r[i].iter == NO_ITER || r[i].iter < lo || r[i].iter > hi ||
		    r[i].name < 0 ||
		    (kinds == TA_DIFF_CPU && r[i].stream != -1) ||
		    (kinds == TA_DIFF_GPU && r[i].stream == -1))
			continue;
		if ((size_t)r[i].name >= *nnames) {
			size_t m = (size_t)r[i].name + 1024;

			*count = ta_xrealloc(*count, m * sizeof(**count));
			*ns = ta_xrealloc(*ns, m * sizeof(**ns));
			memset(*count + *nnames, 0, (m - *nnames) * sizeof(**count));
			memset(*ns + *nnames, 0, (m - *nnames) * sizeof(**ns));
			*nnames = m;
		}
		(*count)[r[i].name]++;
		(*ns)[r[i].name] += r[i].dur;
	}
	free(r);
	return 0;
}

static int side(sqlite3 *db, const struct ta_diff_opts *o, int which,
		struct diff_names *d, struct ta_error *err)
{
	const struct ta_diff_side *s = which ? &o->test : &o->base;
	struct ta_query q = { 1, s->ranks, s->nranks, 0, NULL, NULL };
	sqlite3_stmt *st = NULL;
	int64_t *count = NULL, *ns = NULL, first = 0;
	struct ta_buf b = { 0 };
	size_t nnames = 0, i;
	int rc;

	if (ta_model_prepare(db, &q, TA_NEED_DEV, err) < 0)
		return -1;
	if ((rc = first_iteration(db, &first, err)) != 0) {
		if (rc > 0)
			ta_error_set(err, TA_EXIT_INPUT, "%s has no ProfilerStep: HTA "
				     "compares iterations", which ? "TEST" : "BASE");
		return -1;
	}
	/* HTA's default: the first rank */
	if (ta_db_prepare(db, s->ranks ? "SELECT rank FROM sel_ranks ORDER BY 1" :
			  "SELECT min(rank) FROM sel_ranks", &st, err) < 0)
		return -1;
	rc = 0;
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW)
		rc = side_rows(db, sqlite3_column_int64(st, 0), s, first, o->kinds,
			       &count, &ns, &nnames, err);
	sqlite3_finalize(st);
	if (rc == 0 && ta_db_prepare(db, "SELECT name FROM label WHERE name_id = ?",
				     &st, err) < 0)
		rc = -1;
	for (i = 0; rc == 0 && i < nnames; i++) {
		const char *name;

		if (!count[i])
			continue;
		sqlite3_bind_int64(st, 1, (int64_t)i);
		name = sqlite3_step(st) == SQLITE_ROW ?
		       (const char *)sqlite3_column_text(st, 0) : "";
		if (o->by_short) {
			ta_buf_reset(&b);
			ta_short_name(name, &b);
			name = b.s ? b.s : "";
		}
		ta_diff_add(d, which, DIFF_ALL, name, (double)count[i], ns[i], ns[i]);
		sqlite3_reset(st);
	}
	if (rc == 0)
		sqlite3_finalize(st);
	ta_buf_free(&b);
	free(count);
	free(ns);
	return rc;
}

int ta_diff_hta_run(sqlite3 *base, sqlite3 *test, const struct ta_diff_opts *o,
		    struct ta_table **out, struct ta_error *err)
{
	struct diff_names d = { ta_intern_new(), NULL, 0, 0, { 0, 0 } };
	int rc = side(base, o, 0, &d, err) < 0 || side(test, o, 1, &d, err) < 0 ? -1 : 0;

	*out = NULL;
	if (rc == 0)
		*out = o->lists ? ta_diff_lists(&d) : ta_diff_table(&d, o, 0, 0);
	free(d.v);
	ta_intern_free(d.keys);
	return rc;
}

static const char *const list_names[] = { "added", "deleted", "increased",
	"decreased", "unchanged", NULL };

static const struct ta_col list_cols[] = {
	{ "change", TA_COL_TEXT, TA_UNIT_NONE, 1 },
	{ "name", TA_COL_TEXT, TA_UNIT_NONE, 1 },
};

static int cmp_list(const struct ta_table *t, size_t a, size_t b)
{
	size_t x, y;

	for (x = 0; strcmp(list_names[x], ta_table_cell(t, a, 0)->s) != 0; x++)
		;
	for (y = 0; strcmp(list_names[y], ta_table_cell(t, b, 0)->s) != 0; y++)
		;
	if (x != y)
		return x < y ? -1 : 1;
	return strcmp(ta_table_cell(t, a, 1)->s, ta_table_cell(t, b, 1)->s);
}

/* ops_diff: added (only in TEST), deleted (only in BASE), increased,
 * decreased and unchanged by count; names in byte order. */
struct ta_table *ta_diff_lists(const struct diff_names *d)
{
	struct ta_table *t = ta_table_new("ops_diff", list_cols, 2);
	size_t i;

	ta_table_set_values(t, 0, list_names);
	for (i = 0; i < d->n; i++) {
		double b = d->v[i].count[0], c = d->v[i].count[1];
		const char *key = ta_intern_str(d->keys, (int64_t)i + 1);
		int k = b == 0 && c > 0 ? 0 : b > 0 && c == 0 ? 1 : c > b ? 2 :
			c < b ? 3 : 4;
		size_t r = ta_table_add_row(t);

		ta_table_set_text(t, r, 0, list_names[k]);
		ta_table_set_text(t, r, 1, strchr(key, '\x1f') + 1);
	}
	ta_table_sort(t, cmp_list);
	return t;
}
