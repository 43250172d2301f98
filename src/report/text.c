/* Aligned text for people: durations in µs, ms or s, shares in %. */
#include "ta_report.h"
#include "ta_utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void human_us(char *buf, size_t len, double us)
{
	double a = fabs(us);

	if (a >= 1e6)
		snprintf(buf, len, "%.3f s", us / 1e6);
	else if (a >= 1e3)
		snprintf(buf, len, "%.3f ms", us / 1e3);
	else
		snprintf(buf, len, "%.3f µs", us);
}

/* At most 3 decimals, trailing zeros dropped: 0.5, 12, 36.92. */
static void fixed3(char *buf, size_t len, double v)
{
	char *p;

	snprintf(buf, len, "%.3f", v);
	p = buf + strlen(buf) - 1;
	while (p > buf && *p == '0')
		*p-- = '\0';
	if (*p == '.')
		*p = '\0';
	if (strcmp(buf, "-0") == 0)
		snprintf(buf, len, "0");
}

static void cell_text(char *buf, size_t len, const struct ta_col *col,
		      const struct ta_cell *c)
{
	if (c->null) {
		snprintf(buf, len, "-");
		return;
	}
	switch (col->type) {
	case TA_COL_TEXT:
		snprintf(buf, len, "%s", c->s);
		return;
	case TA_COL_INT:
		if (col->unit == TA_UNIT_US)
			human_us(buf, len, (double)c->i);
		else
			snprintf(buf, len, "%lld", (long long)c->i);
		return;
	case TA_COL_REAL:
		if (col->unit == TA_UNIT_US)
			human_us(buf, len, c->d);
		else if (col->unit == TA_UNIT_PCT)
			snprintf(buf, len, "%.2f %%", c->d);
		else if (col->unit == TA_UNIT_RATIO)
			snprintf(buf, len, "%.2f %%", c->d * 100);
		else
			fixed3(buf, len, c->d);
	}
}

/* Display width: cells are valid UTF-8 (ta_table_set_text mends them). */
static size_t width(const char *s)
{
	return ta_utf8_width(s);
}

#define TA_TEXT_MAXW 60

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

static void put_cell(FILE *out, const char *s, size_t w, int right)
{
	size_t sw = width(s);

	if (sw > w) { /* long kernel names: cut with an ellipsis */
		size_t i = ta_utf8_prefix(s, w - 1);

		fwrite(s, 1, i, out);
		fputs("…", out);
		pad(out, w - 1 - ta_utf8_width_n(s, i));
		return;
	}
	if (right)
		pad(out, w - sw);
	fputs(s, out);
	if (!right)
		pad(out, w - sw);
}

void ta_report_text(FILE *out, const struct ta_table *t)
{
	size_t *w = ta_xcalloc(t->ncols, sizeof(*w));
	char buf[512];
	size_t r, c;

	for (c = 0; c < t->ncols; c++)
		w[c] = width(t->cols[c].name);
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			cell_text(buf, sizeof(buf), &t->cols[c],
				  ta_table_cell(t, r, c));
			if (width(buf) > w[c])
				w[c] = width(buf);
		}
	for (c = 0; c < t->ncols; c++)
		if (w[c] > TA_TEXT_MAXW)
			w[c] = TA_TEXT_MAXW;
	if (t->title)
		fprintf(out, "%s\n\n", t->title);
	if (t->head.len)
		fprintf(out, "%s\n", t->head.s);
	for (c = 0; c < t->ncols; c++) {
		if (c)
			fputs("  ", out);
		put_cell(out, t->cols[c].name, w[c], t->cols[c].type != TA_COL_TEXT);
	}
	fputc('\n', out);
	for (r = 0; r < t->nrows; r++) {
		for (c = 0; c < t->ncols; c++) {
			if (c)
				fputs("  ", out);
			cell_text(buf, sizeof(buf), &t->cols[c],
				  ta_table_cell(t, r, c));
			put_cell(out, buf, w[c], t->cols[c].type != TA_COL_TEXT);
		}
		fputc('\n', out);
	}
	if (t->tail.len)
		fputs(t->tail.s, out);
	free(w);
}
