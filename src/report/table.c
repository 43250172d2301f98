/* The result table shared by analyses and writers. */
#include "ta_intern.h"
#include "ta_utf8.h"
#include "ta_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ta_table *ta_table_new(const char *title, const struct ta_col *cols,
			      size_t ncols)
{
	struct ta_table *t = ta_xcalloc(1, sizeof(*t));

	t->title = title;
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

void ta_table_set_values(struct ta_table *t, size_t col,
			 const char *const *values)
{
	if (!t->values)
		t->values = ta_xcalloc(t->ncols + 1, sizeof(*t->values));
	t->values[col] = values;
}

size_t ta_table_add_row(struct ta_table *t)
{
	size_t i;

	if (t->sink && t->nrows)
		ta_table_flush(t); /* the previous row is final */
	if (t->nrows == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->cells = ta_xrealloc(t->cells,
				       t->cap * t->ncols * sizeof(*t->cells));
	}
	for (i = 0; i < t->ncols; i++) {
		struct ta_cell *c = &t->cells[t->nrows * t->ncols + i];

		memset(c, 0, sizeof(*c));
		c->null = 1;
	}
	return t->nrows++;
}

void ta_table_final_rows(struct ta_table *t, const struct ta_row_sink *sink)
{
	t->sink = sink;
}

void ta_table_flush(struct ta_table *t)
{
	if (!t->sink || !t->nrows)
		return;
	t->sink->row(t->sink->ctx, t, 0);
	t->sunk++;
	t->nrows = 0; /* the row's storage takes the next row */
}

static struct ta_cell *cell(struct ta_table *t, size_t row, size_t col)
{
	return &t->cells[row * t->ncols + col];
}

const struct ta_cell *ta_table_cell(const struct ta_table *t, size_t row,
				    size_t col)
{
	return &t->cells[row * t->ncols + col];
}

void ta_table_set_int(struct ta_table *t, size_t row, size_t col, int64_t v)
{
	struct ta_cell *c = cell(t, row, col);

	c->null = 0;
	c->i = v;
	c->d = (double)v;
}

/* NaN and infinities are stored as NULL: never "nan" in a report. */
void ta_table_set_real(struct ta_table *t, size_t row, size_t col, double v)
{
	struct ta_cell *c = cell(t, row, col);

	c->null = !isfinite(v);
	c->d = v;
}

void ta_table_set_null(struct ta_table *t, size_t row, size_t col)
{
	struct ta_cell *c = cell(t, row, col);

	if (t->cols[col].type == TA_COL_TEXT)
		c->s = NULL;   /* (interned: the table's texts own it) */
	c->null = 1;
}

void ta_table_set_text(struct ta_table *t, size_t row, size_t col,
		       const char *s)
{
	struct ta_cell *c = cell(t, row, col);
	char *mended = NULL;
	size_t len;
	int is_new;

	c->null = s == NULL;
	if (!s) {
		c->s = NULL;
		return;
	}
	if (!t->texts)
		t->texts = ta_intern_new();
	len = strlen(s);
	if (!ta_utf8_valid(s, len)) { /* every format prints valid UTF-8 */
		s = mended = ta_utf8_mend(s, len, &t->bad_utf8);
		len = strlen(s);
	}
	c->s = ta_intern_str(t->texts, ta_intern(t->texts, s, len, &is_new));
	free(mended);
}

/* One line of at most 511 bytes, then a newline. */
static void add_line(struct ta_buf *b, const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	ta_buf_adds(b, line);
	ta_buf_addc(b, '\n');
}

void ta_table_warn(struct ta_table *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&t->warnings, fmt, ap);
	va_end(ap);
}

void ta_table_warn_sum(struct ta_table *t, size_t n, size_t of, const char *tmpl)
{
	/* a line ta_warn_lines adds up and writes out (TA_WARN_SUM), not
	 * where the counts add up to 0 */
	ta_buf_addf(&t->warnings, "%c%zu%c%zu%c%s\n", TA_WARN_SUM, n, TA_WARN_SUM, of,
		    TA_WARN_SUM, tmpl);
}

void ta_table_note(struct ta_table *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_line(&t->notes, fmt, ap);
	va_end(ap);
}

/* Stable merge sort of row numbers by cmp. */
static void merge_sort(const struct ta_table *t, size_t *v, size_t *tmp,
		       size_t n,
		       int (*cmp)(const struct ta_table *, size_t, size_t))
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;

	if (n < 2)
		return;
	merge_sort(t, v, tmp, mid, cmp);
	merge_sort(t, v + mid, tmp, n - mid, cmp);
	while (i < mid && j < n)
		tmp[k++] = cmp(t, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

void ta_table_sort(struct ta_table *t,
		   int (*cmp)(const struct ta_table *t, size_t a, size_t b))
{
	size_t *order = ta_xmalloc((t->nrows + 1) * sizeof(*order));
	size_t *tmp = ta_xmalloc((t->nrows + 1) * sizeof(*tmp));
	struct ta_cell *cells = ta_xmalloc((t->nrows * t->ncols + 1) * sizeof(*cells));
	size_t i;

	for (i = 0; i < t->nrows; i++)
		order[i] = i;
	merge_sort(t, order, tmp, t->nrows, cmp);
	for (i = 0; i < t->nrows; i++)
		memcpy(&cells[i * t->ncols], cell(t, order[i], 0),
		       t->ncols * sizeof(*cells));
	free(t->cells);
	t->cells = cells;
	t->cap = t->nrows;
	free(order);
	free(tmp);
}

void ta_table_keep(struct ta_table *t,
		   int (*keep)(const struct ta_table *t, size_t row, void *ctx), void *ctx)
{
	size_t i, n = 0;

	for (i = 0; i < t->nrows; i++) {
		if (!keep(t, i, ctx))
			continue;
		if (n != i)
			memcpy(cell(t, n, 0), cell(t, i, 0), t->ncols * sizeof(*t->cells));
		n++;
	}
	t->nrows = n;
}

long ta_table_col(const struct ta_table *t, const char *name)
{
	size_t c;

	for (c = 0; t && c < t->ncols; c++)
		if (strcmp(t->cols[c].name, name) == 0)
			return (long)c;
	return -1;
}

/* Columns renamed, the old name first, and a column only the table of
 * the renamed one has (steps has a window_us too): a gate or a baseline
 * written with the old name still reads (until 2027-06; the man page says
 * so). */
static const char *const renamed[][3] = {
	{ "kernel_us", "window_us", "non_compute_us" },   /* temporal's window */
};

const char *ta_col_renamed(const struct ta_table *t, const char *old)
{
	size_t i;

	for (i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (strcmp(renamed[i][0], old) == 0 && ta_table_col(t, renamed[i][1]) >= 0 &&
		    ta_table_col(t, renamed[i][2]) >= 0)
			return renamed[i][1];
	return NULL;
}

const char *ta_col_former(const struct ta_table *t, const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
		if (strcmp(renamed[i][1], name) == 0 && ta_table_col(t, renamed[i][2]) >= 0)
			return renamed[i][0];
	return NULL;
}

void ta_table_rename(struct ta_table *t, const char *names)
{
	size_t c, size = t->ncols * sizeof(struct ta_col) + strlen(names) + 1;
	struct ta_col *cols;
	char *at, *pair, *save = NULL;

	for (c = 0; c < t->ncols; c++)
		size += strlen(t->cols[c].name) + 1;
	cols = ta_xmalloc(size);
	memcpy(cols, t->cols, t->ncols * sizeof(*cols));
	at = (char *)(cols + t->ncols);
	for (c = 0; c < t->ncols; c++) {   /* the names move with the columns */
		strcpy(at, t->cols[c].name);
		cols[c].name = at;
		at += strlen(at) + 1;
	}
	strcpy(at, names);
	for (pair = strtok_r(at, " ", &save); pair; pair = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(pair, '=');

		if (!eq)
			continue;
		*eq = '\0';
		for (c = 0; c < t->ncols; c++)
			if (strcmp(cols[c].name, pair) == 0)
				cols[c].name = eq + 1;
	}
	free(t->owned_cols);
	t->owned_cols = cols;
	t->cols = cols;
}

long ta_table_col_typed(const struct ta_table *t, const char *name)
{
	long c = ta_table_col(t, name);
	char full[200];

	/* text headers show idle_us as "idle", peak_bytes as "peak" (the unit
	 * is in the cells) */
	if (c < 0 && snprintf(full, sizeof(full), "%s_us", name) < (int)sizeof(full))
		c = ta_table_col(t, full);
	if (c < 0 && snprintf(full, sizeof(full), "%s_bytes", name) < (int)sizeof(full))
		c = ta_table_col(t, full);
	if (c < 0 && ta_col_renamed(t, name))
		c = ta_table_col(t, ta_col_renamed(t, name));
	return c;
}

void ta_table_free(struct ta_table *t)
{
	if (!t)
		return;
	ta_table_free(t->also);
	ta_intern_free(t->texts);
	free(t->cells);
	ta_buf_free(&t->notes);
	ta_buf_free(&t->warnings);
	ta_buf_free(&t->head);
	ta_buf_free(&t->tail);
	free(t->owned_cols);
	free(t->values);
	free(t);
}
