/* Aligned text for people: durations in µs, ms or s, shares in %. */
#include "ta_intern.h"
#include "ta_report.h"
#include "ta_utf8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Whether the locale's characters are UTF-8 (LC_ALL, else LC_CTYPE, else
 * LANG, as setlocale reads them): "µs" and "…" then, else "us" and "...". */
static int utf8_locale(void)
{
	static int known = -1;
	const char *v = getenv("LC_ALL");

	if (known >= 0)
		return known;
	if (!v || !*v)
		v = getenv("LC_CTYPE");
	if (!v || !*v)
		v = getenv("LANG");
	known = v && (strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
		      strstr(v, "utf8"));
	return known;
}

static const char *micro(void)
{
	return utf8_locale() ? "µs" : "us";
}

static void human_us(char *buf, size_t len, double us)
{
	ta_format_us(buf, len, us, 0, " ", micro());
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

/* Control characters in names (a trace's strings are anyone's) would
 * reach the terminal: ESC sequences, BEL, CR, a newline that forges a
 * row. They are shown in caret notation (ESC as ^[), as less and cat -v
 * do; C1 controls (U+0080-U+009F, CSI among them) as '?'. keep_nl: the
 * prose's own line breaks stay. */
static void escape_controls(char *dst, size_t len, const char *s, int keep_nl)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch < 0x20 && !(keep_nl && ch == '\n')) || ch == 0x7f) {
			dst[o++] = '^';
			dst[o++] = (char)(ch ^ 0x40);
		} else if (ch == 0xc2 && (unsigned char)s[1] >= 0x80 &&
			   (unsigned char)s[1] <= 0x9f) {
			dst[o++] = '?';
			s++;
		} else {
			dst[o++] = (char)ch;
		}
	}
	dst[o] = '\0';
}

static void put_prose(FILE *out, const char *s)
{
	size_t n = strlen(s) * 2 + 4;
	char *e = ta_xmalloc(n);

	escape_controls(e, n, s, 1);
	fputs(e, out);
	free(e);
}

/* A size for people: B, KiB, MiB or GiB. */
static void human_bytes(char *buf, size_t len, double b)
{
	double a = fabs(b);

	if (a < 1024)
		snprintf(buf, len, "%.0f B", b);
	else if (a < 1024.0 * 1024)
		snprintf(buf, len, "%.1f KiB", b / 1024);
	else if (a < 1024.0 * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", b / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

/* origin: the table's first moment (TA_UNIT_CLOCK cells show ms after it) */
static void cell_text(char *buf, size_t len, const struct ta_col *col,
		      const struct ta_cell *c, double origin)
{
	if (c->null) {
		snprintf(buf, len, "-");
		return;
	}
	if (col->unit == TA_UNIT_BYTES && col->type != TA_COL_TEXT) {
		human_bytes(buf, len, col->type == TA_COL_INT ? (double)c->i : c->d);
		return;
	}
	if (col->unit == TA_UNIT_CLOCK && col->type != TA_COL_TEXT) {
		snprintf(buf, len, "+%.3f ms",
			 ((col->type == TA_COL_INT ? (double)c->i : c->d) - origin) / 1e3);
		return;
	}
	if (col->unit == TA_UNIT_TREE && col->type == TA_COL_TEXT && len > 2) {
		const char *leaf = strrchr(c->s, '/');
		size_t depth = 0, i;

		for (i = 0; c->s[i]; i++)
			depth += c->s[i] == '/';
		if (depth > (len - 2) / 4)  /* the indent takes half the buffer at most */
			depth = (len - 2) / 4;
		memset(buf, ' ', 2 * depth);
		escape_controls(buf + 2 * depth, len - 2 * depth, leaf ? leaf + 1 : c->s, 0);
		return;
	}
	switch (col->type) {
	case TA_COL_TEXT:
		escape_controls(buf, len, c->s, 0);
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
		else if (col->unit == TA_UNIT_RATIO) /* 0-1 in every format */
			snprintf(buf, len, "%.4f", c->d);
		else
			fixed3(buf, len, c->d);
	}
}

/* Display width: cells are valid UTF-8 (ta_table_set_text mends them). */
static size_t width(const char *s)
{
	return ta_utf8_width(s);
}

int ta_text_wide;

/* A text column's widest, unless --wide: what $COLUMNS leaves beside the
 * other columns (at least 20), or 60 without $COLUMNS. */
#define TA_TEXT_MAXW 60

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* s cut to w columns: two thirds from its start, a third from its end
 * (a kernel's template name ends in what tells it apart), joined by an
 * ellipsis. */
static void cut(const char *s, size_t w, struct ta_buf *b)
{
	const char *dots = utf8_locale() ? "…" : "...";
	size_t nd = utf8_locale() ? 1 : 3, sw = width(s);
	size_t head = w > nd ? (w - nd) * 2 / 3 : 0, tail = w > nd ? w - nd - head : 0;
	size_t i = ta_utf8_prefix(s, head), j = ta_utf8_prefix(s, sw - tail);

	ta_buf_reset(b);
	ta_buf_addf(b, "%.*s%s%s", (int)i, s, dots, s + j);
}

/* A cell in w columns, cut if longer. The last column is not padded: no
 * line ends in spaces. */
static void put_cell(FILE *out, const char *s, size_t w, int right, int last)
{
	size_t sw = width(s);

	if (sw > w) {
		struct ta_buf b = { 0 };

		cut(s, w, &b);
		fputs(b.s, out);
		if (!last)
			pad(out, w - width(b.s));
		ta_buf_free(&b);
		return;
	}
	if (right)
		pad(out, w - sw);
	fputs(s, out);
	if (!right && !last)
		pad(out, w - sw);
}

/* The header: a column in µs shows its values as 35.4 ms or 12 µs, so its
 * name loses the unit there ("idle_us" is "idle", "peak_bytes" "peak": CSV
 * and JSON keep it). */
static void header_name(const struct ta_table *t, size_t c, char *buf, size_t len)
{
	const struct ta_col *col = &t->cols[c];
	size_t n = strlen(col->name), k;

	if ((col->unit == TA_UNIT_US || col->unit == TA_UNIT_CLOCK) && n > 3 &&
	    strcmp(col->name + n - 3, "_us") == 0)
		snprintf(buf, len, "%.*s", (int)(n - 3), col->name);
	else if (col->unit == TA_UNIT_BYTES && n > 6 && strcmp(col->name + n - 6, "_bytes") == 0)
		snprintf(buf, len, "%.*s", (int)(n - 6), col->name);
	else
		snprintf(buf, len, "%s", col->name);
	/* never the name of another column (step_us beside step) */
	for (k = 0; k < t->ncols; k++)
		if (k != c && strcmp(t->cols[k].name, buf) == 0)
			snprintf(buf, len, "%s", col->name);
}

static size_t text_limit(const struct ta_table *t, const size_t *w, size_t c)
{
	const char *env = getenv("COLUMNS");
	long cols = env ? strtol(env, NULL, 10) : 0;
	size_t other = 0, k;

	if (ta_text_wide)
		return (size_t)-1;
	if (cols <= 0)
		return TA_TEXT_MAXW;
	for (k = 0; k < t->ncols; k++)
		if (k != c)
			other += w[k] + 2;
	return (size_t)cols > other + 20 ? (size_t)cols - other : 20;
}

/* Two names that differ must not print alike once cut: the column widens
 * (10 at a time, 5 times at most, never past full) until they don't. */
static size_t widen_until_distinct(const struct ta_table *t, size_t c,
				   size_t w, size_t full)
{
	struct ta_intern *seen;
	struct ta_buf b = { 0 };
	size_t r, tries;

	for (tries = 0; tries < 5 && w < full; tries++, w += 10) {
		int clash = 0, is_new;
		struct ta_intern *orig = ta_intern_new();

		seen = ta_intern_new();
		for (r = 0; r < t->nrows && !clash; r++) {
			const struct ta_cell *x = ta_table_cell(t, r, c);

			if (x->null || width(x->s) <= w)
				continue;
			ta_intern(orig, x->s, strlen(x->s), &is_new);
			if (!is_new)
				continue; /* the same name again */
			cut(x->s, w, &b);
			ta_intern(seen, b.s, b.len, &is_new);
			clash = !is_new;
		}
		ta_intern_free(seen);
		ta_intern_free(orig);
		if (!clash)
			break;
	}
	ta_buf_free(&b);
	return w < full ? w : full;
}

/* The first moment of the table's TA_UNIT_CLOCK cells; 0 (and *any 0)
 * if none. */
static double clock_origin(const struct ta_table *t, int *any)
{
	double o = 0;
	size_t r, c;

	*any = 0;
	for (c = 0; c < t->ncols; c++) {
		if (t->cols[c].unit != TA_UNIT_CLOCK || t->cols[c].type == TA_COL_TEXT)
			continue;
		for (r = 0; r < t->nrows; r++) {
			const struct ta_cell *x = ta_table_cell(t, r, c);
			double v = t->cols[c].type == TA_COL_INT ? (double)x->i : x->d;

			if (!x->null && (!*any || v < o))
				o = v, *any = 1;
		}
	}
	return o;
}

void ta_report_text(FILE *out, const struct ta_table *t)
{
	size_t *w = ta_xcalloc(t->ncols, sizeof(*w));
	char buf[4096];
	size_t r, c;
	int clocks;
	double origin = clock_origin(t, &clocks);

	for (c = 0; c < t->ncols; c++) {
		header_name(t, c, buf, sizeof(buf));
		w[c] = width(buf);
	}
	for (r = 0; r < t->nrows; r++)
		for (c = 0; c < t->ncols; c++) {
			cell_text(buf, sizeof(buf), &t->cols[c],
				  ta_table_cell(t, r, c), origin);
			if (width(buf) > w[c])
				w[c] = width(buf);
		}
	for (c = 0; c < t->ncols; c++) /* $COLUMNS is a hard limit; 60 is not */
		if (t->cols[c].type == TA_COL_TEXT && w[c] > text_limit(t, w, c))
			w[c] = getenv("COLUMNS") ? text_limit(t, w, c) :
			       widen_until_distinct(t, c, text_limit(t, w, c), w[c]);
	if (t->title)
		fprintf(out, "%s\n\n", t->title);
	if (t->head.len) {
		put_prose(out, t->head.s);
		fputc('\n', out);
	}
	for (c = 0; c < t->ncols; c++) {
		if (c)
			fputs("  ", out);
		header_name(t, c, buf, sizeof(buf));
		put_cell(out, buf, w[c], t->cols[c].type != TA_COL_TEXT,
			 c + 1 == t->ncols);
	}
	fputc('\n', out);
	for (r = 0; r < t->nrows; r++) {
		size_t end = t->ncols;   /* empty cells at the end: no trailing spaces */

		while (end > 1) {
			cell_text(buf, sizeof(buf), &t->cols[end - 1],
				  ta_table_cell(t, r, end - 1), origin);
			if (*buf)
				break;
			end--;
		}
		for (c = 0; c < end; c++) {
			if (c)
				fputs("  ", out);
			cell_text(buf, sizeof(buf), &t->cols[c],
				  ta_table_cell(t, r, c), origin);
			put_cell(out, buf, w[c], t->cols[c].type != TA_COL_TEXT,
				 c + 1 == end);
		}
		fputc('\n', out);
	}
	if (clocks) /* where the moments count from: CSV has them as they are */
		fprintf(out, "(moments in ms after %.3f us on the traces' clock)\n", origin);
	if (t->tail.len)
		put_prose(out, t->tail.s);
	free(w);
}
