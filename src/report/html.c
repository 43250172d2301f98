/* report --html: one self-contained page (inline CSS and SVG, a few lines
 * of script for sorting tables; nothing fetched) drawn from the same rows
 * the analyses give in CSV: every figure sits above its table, whose
 * numbers are written as CSV writes them. */
#include "ta_html.h"
#include "html_int.h"
#include "ta_people.h"
#include "ta_utf8.h"
#include "ta_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Okabe-Ito: safe for the common colour-vision deficiencies */
#define C_BLUE "#0072B2"
#define C_ORANGE "#E69F00"
#define C_GREY "#999999"
#define C_VERMILLION "#D55E00"
#define C_SKY "#56B4E9"
#define C_GREEN "#009E73"
#define C_PURPLE "#CC79A7"
#define C_YELLOW "#F0E442"

/* More ranks than this: distributions and the worst ranks, not a bar each. */
#define MANY_RANKS TA_HTML_MANY_RANKS
/* ranks the first screen names one by one */
#define VERDICT_RANKS 8
#define WORST 8
#define BAR_W 440
/* a figure: labels (120 px), the bars, and the value past them */
#define FIG_W (BAR_W + 200)
/* kernel names in labels and cells, in characters */
#define NAME_W 80
/* a rank x step grid: rows and columns at most */
#define GRID_RANKS 16
#define GRID_STEPS 64
/* findings listed in words (the rest in the table) */
#define FINDINGS 10
/* overview's points of advice listed (a thousand ranks have 2000) */
#define ADVICE 40

static void esc(FILE *o, const char *s)
{
	for (; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '&': fputs("&amp;", o); break;
		case '"': fputs("&quot;", o); break;
		default: fputc(*s, o);
		}
}

void ta_html_esc(FILE *o, const char *s)
{
	esc(o, s);
}

static long col(const struct ta_table *t, const char *name)
{
	return ta_table_col(t, name);
}

static double num(const struct ta_table *t, size_t r, long c)
{
	const struct ta_cell *x;

	if (c < 0)
		return 0;
	x = ta_table_cell(t, r, (size_t)c);
	if (x->null)
		return 0;
	return t->cols[c].type == TA_COL_INT ? (double)x->i : x->d;
}

double ta_html_num(const struct ta_table *t, size_t r, long c)
{
	return num(t, r, c);
}

/* A time for people: 3 or 4 significant figures, in µs, ms or s. */
static void fmt_us(char *buf, size_t len, double us)
{
	ta_format_us(buf, len, us, 1, "&#160;", "µs");
}

void ta_html_us(char *buf, size_t len, double us)
{
	fmt_us(buf, len, us);
}

/* A number cell for people (the CSV's value stays in data-v and the
 * title): times with their unit, shares with %, ratios to 4 places. */
static void fmt_cell(char *buf, size_t len, const struct ta_col *col, double v)
{
	if (col->unit == TA_UNIT_CLOCK)
		ta_format_real(buf, len, v);   /* a moment: as it is */
	else if (col->unit == TA_UNIT_US)
		fmt_us(buf, len, v);
	else if (col->unit == TA_UNIT_PCT)
		snprintf(buf, len, "%.2f&#160;%%", v);
	else if (col->unit == TA_UNIT_RATIO)
		snprintf(buf, len, "%.4f", v);
	else if (v == (double)(int64_t)v && fabs(v) < 1e15)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%.4g", v);
}

/* A cell as CSV writes it. */
static void cell(FILE *o, const struct ta_table *t, size_t r, size_t c)
{
	const struct ta_cell *x = ta_table_cell(t, r, c);
	char buf[64];

	if (x->null)
		return;
	if (t->cols[c].type == TA_COL_INT) {
		fprintf(o, "%lld", (long long)x->i);
	} else if (t->cols[c].type == TA_COL_REAL) {
		ta_format_real(buf, sizeof(buf), x->d);
		fputs(buf, o);
	} else {
		esc(o, x->s);
	}
}

/* Columns that hold a kernel's or op's name: shortened, whole on hover. */
static int is_name(const char *col)
{
	return strcmp(col, "name") == 0 || strcmp(col, "kernel") == 0 ||
	       strcmp(col, "op") == 0 || strcmp(col, "main_kernel") == 0;
}

static void name_cell(FILE *o, const char *s)
{
	struct ta_buf b = { 0 };

	ta_people_name(s, NAME_W, &b);
	fputs("<td class=\"name\" title=\"", o);
	esc(o, s);
	fputs("\">", o);
	esc(o, b.s);
	fputs("</td>", o);
	ta_buf_free(&b);
}

/* Rows a table shows: past this, the first ones and where the rest are
 * (a page for a thousand ranks stays a few MB). */
#define TABLE_ROWS 250

/* The rows as a sortable table; long ones folded. */
static void table(FILE *o, const struct ta_table *t, const char *id)
{
	size_t r, c, n;

	if (!t)
		return;
	n = t->nrows < TABLE_ROWS ? t->nrows : TABLE_ROWS;
	/* folded: the figures above say it; the numbers are a click away */
	fprintf(o, "<details><summary>The numbers: %s (%zu row%s, as "
		"<code>--format csv</code> gives them", id + 2, t->nrows,
		t->nrows == 1 ? "" : "s");
	if (n < t->nrows)
		fprintf(o, "; the first %zu here, all from the commands above", n);
	fprintf(o, ")</summary>\n<table class=\"data\" id=\"%s\"><thead><tr>", id);
	for (c = 0; c < t->ncols; c++) {
		fputs("<th scope=\"col\">", o);
		esc(o, t->cols[c].name);
		fputs("</th>", o);
	}
	fputs("</tr></thead><tbody>\n", o);
	for (r = 0; r < n; r++) {
		fputs("<tr>", o);
		for (c = 0; c < t->ncols; c++) {
			const struct ta_cell *x = ta_table_cell(t, r, c);
			char raw[64], shown[64];

			if (t->cols[c].type == TA_COL_TEXT && !x->null &&
			    is_name(t->cols[c].name)) {
				name_cell(o, x->s);
				continue;
			}
			if (t->cols[c].type != TA_COL_REAL || x->null) {
				fputs(t->cols[c].type == TA_COL_TEXT ? "<td>" :
				      "<td class=\"n\">", o);
				cell(o, t, r, c);
				fputs("</td>", o);
				continue;
			}
			/* the CSV's value to sort by and hover, a person's to read */
			ta_format_real(raw, sizeof(raw), x->d);
			fmt_cell(shown, sizeof(shown), &t->cols[c], x->d);
			fprintf(o, "<td class=\"n\" data-v=\"%s\" title=\"%s\">%s</td>",
				raw, raw, shown);
		}
		fputs("</tr>\n", o);
	}
	fputs("</tbody></table></details>\n", o);
}

#define part ta_html_part

/* Text on a colour: white on the dark ones, black on the light. */
static const char *ink(const char *colour)
{
	return strcmp(colour, C_BLUE) == 0 || strcmp(colour, C_VERMILLION) == 0 ||
	       strcmp(colour, C_GREEN) == 0 || strcmp(colour, C_PURPLE) == 0 ?
	       "#fff" : "#000";
}

/* One horizontal stacked bar: parts as shares of their sum, each share
 * written in its part where it fits, and total (a time) past the bar. */
static void stacked(FILE *o, double y, const char *label, const struct part *p,
		    size_t n, const char *total)
{
	double sum = 0, x = 120;
	size_t i;
	char v[64];

	for (i = 0; i < n; i++)
		sum += p[i].v > 0 ? p[i].v : 0;
	fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\">", y + 13);
	esc(o, label);
	fputs("</text>", o);
	for (i = 0; i < n && sum > 0; i++) {
		double w = p[i].v > 0 ? BAR_W * p[i].v / sum : 0;

		if (w <= 0)
			continue;
		fmt_us(v, sizeof(v), p[i].v);
		fprintf(o, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"18\" "
			"fill=\"%s\"><title>", x, y, w, p[i].colour);
		esc(o, label);
		fprintf(o, ": %s %s (%.1f %%)</title></rect>", p[i].label, v,
			100 * p[i].v / sum);
		if (w >= 40)
			fprintf(o, "<text x=\"%.2f\" y=\"%.0f\" text-anchor=\"middle\" "
				"class=\"small\" style=\"fill:%s\">%.0f %%</text>", x + w / 2,
				y + 13, ink(p[i].colour), 100 * p[i].v / sum);
		x += w;
	}
	if (total) {
		fprintf(o, "<text x=\"%d\" y=\"%.0f\" class=\"small\">", 126 + BAR_W,
			y + 13);
		fputs(total, o);    /* fmt_us's: markup of its own */
		fputs("</text>", o);
	}
}

/* The scale under shares: 0 to 100 %. */
static void pct_axis(FILE *o, double y)
{
	int k;

	fprintf(o, "<line class=\"grid\" x1=\"120\" x2=\"%d\" y1=\"%.0f\" "
		"y2=\"%.0f\"/>", 120 + BAR_W, y, y);
	for (k = 0; k <= 4; k++)
		fprintf(o, "<line class=\"grid\" x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" "
			"y2=\"%.0f\"/><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
			"class=\"small\">%d %%</text>", 120 + BAR_W * k / 4.0,
			120 + BAR_W * k / 4.0, y, y + 4, 120 + BAR_W * k / 4.0, y + 15, 25 * k);
}

/* A round step for about four ticks up to top: 1, 2 or 5 times 10^k. */
static double tick_step(double top)
{
	double raw = top / 4, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

/* The scale under bars of times from 0 to top µs over w px, in the unit
 * top reads best in. */
static void us_axis(FILE *o, double y, double w, double top)
{
	double step, v, div = top >= 1e6 ? 1e6 : top >= 1e3 ? 1e3 : 1;
	const char *unit = top >= 1e6 ? "s" : top >= 1e3 ? "ms" : "µs";

	if (!(top > 0))
		return;
	step = tick_step(top);
	fprintf(o, "<line class=\"grid\" x1=\"120\" x2=\"%.0f\" y1=\"%.0f\" "
		"y2=\"%.0f\"/>", 120 + w, y, y);
	for (v = 0; v <= top * (1 + 1e-9); v += step) {
		double x = 120 + w * v / top;

		fprintf(o, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" "
			"y2=\"%.0f\"/><text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" "
			"class=\"small\">%g&#160;%s</text>", x, x, y, y + 4, x, y + 15,
			v / div, unit);
	}
}

static void legend(FILE *o, double y, const struct part *p, size_t n)
{
	double x = 120;
	size_t i;

	for (i = 0; i < n; i++) {
		fprintf(o, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\">", x, y, p[i].colour,
			x + 16, y + 11);
		esc(o, p[i].label);
		fputs("</text>", o);
		x += 30 + 8.0 * (double)strlen(p[i].label);
	}
}

static void figure_open_w(FILE *o, double w, double h, const char *alt)
{
	fputs("<figure><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
	      "aria-label=\"", o);
	esc(o, alt);
	fprintf(o, "\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\">", w,
		h, w, h);
}

static void figure_open(FILE *o, double h, const char *alt)
{
	figure_open_w(o, FIG_W, h, alt);
}

static void figure_close(FILE *o, const char *caption)
{
	fputs("</svg><figcaption>", o);
	esc(o, caption);
	fputs("</figcaption></figure>\n", o);
}

/* html_int.h's: the drawing helpers for the sections in files of their own */
void ta_html_stacked(FILE *o, double y, const char *label, const struct ta_html_part *p,
		     size_t n, const char *total)
{
	stacked(o, y, label, p, n, total);
}

void ta_html_legend(FILE *o, double y, const struct ta_html_part *p, size_t n)
{
	legend(o, y, p, n);
}

void ta_html_figure(FILE *o, double h, const char *alt)
{
	figure_open(o, h, alt);
}

void ta_html_figure_end(FILE *o, const char *caption)
{
	figure_close(o, caption);
}

void ta_html_pct_axis(FILE *o, double y)
{
	pct_axis(o, y);
}

/* Ranks to draw: all, or the worst by a column when there are many. */
/* by: the column, less minus and minus2 (-1: none) */
static size_t pick_rows(const struct ta_table *t, long by, long minus, long minus2,
			size_t *rows)
{
	size_t n = 0, r, i, j;

	for (r = 0; r < t->nrows; r++)
		rows[n++] = r;
	if (n <= MANY_RANKS || by < 0)
		return n > MANY_RANKS ? MANY_RANKS : n;
#define PICK(r) (num(t, (r), by) - (minus >= 0 ? num(t, (r), minus) : 0) - \
		 (minus2 >= 0 ? num(t, (r), minus2) : 0))
	for (i = 0; i < WORST; i++)          /* a partial selection sort */
		for (j = i + 1; j < n; j++)
			if (PICK(rows[j]) > PICK(rows[i])) {
				size_t x = rows[i];

				rows[i] = rows[j], rows[j] = x;
			}
#undef PICK
	return WORST;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Many ranks: min, median and max of each column. */
static void distribution(FILE *o, const struct ta_table *t, const char *const *cols_)
{
	double *v = malloc((t->nrows + 1) * sizeof(*v));
	size_t r, i;

	if (!v)
		return;
	fputs("<table class=\"data\"><thead><tr><th>over ranks</th><th>min</th>"
	      "<th>median</th><th>max</th></tr></thead><tbody>", o);
	for (i = 0; cols_[i]; i++) {
		long c = col(t, cols_[i]);

		if (c < 0)
			continue;
		for (r = 0; r < t->nrows; r++)
			v[r] = num(t, r, c);
		qsort(v, t->nrows, sizeof(*v), cmp_double);
		fprintf(o, "<tr><td>%s</td><td class=\"n\">%.6g</td><td class=\"n\">%.6g"
			"</td><td class=\"n\">%.6g</td></tr>", cols_[i], v[0],
			v[t->nrows / 2], v[t->nrows - 1]);
	}
	fputs("</tbody></table>\n", o);
	free(v);
}

static void temporal(FILE *o, const struct ta_table *t)
{
	static const char *const dist[] = { "idle_pct", "compute_pct",
		"non_compute_pct", NULL };
	struct part p[3] = { { "compute", C_BLUE, 0 }, { "non-compute", C_ORANGE, 0 },
			     { "idle", C_GREY, 0 } };
	size_t *rows = calloc(t->nrows + 1, sizeof(*rows)), n, i;
	char label[32];

	if (!rows)
		return;
	n = pick_rows(t, col(t, "idle_us"), -1, -1, rows);
	fputs("<section id=\"temporal\"><h2>Where GPU time went</h2>\n", o);
	if (t->nrows > MANY_RANKS) {
		fprintf(o, "<p>%zu ranks: their spread, then the %zu with the most "
			"idle time.</p>", t->nrows, n);
		distribution(o, t, dist);
	}
	figure_open(o, 26.0 * (double)n + 50, "GPU time per rank: compute, "
		    "non-compute and idle, as shares of the analysis window");
	for (i = 0; i < n; i++) {
		char total[64];

		p[0].v = num(t, rows[i], col(t, "compute_us"));
		p[1].v = num(t, rows[i], col(t, "non_compute_us"));
		p[2].v = num(t, rows[i], col(t, "idle_us"));
		snprintf(label, sizeof(label), "rank %lld",
			 (long long)ta_table_cell(t, rows[i], 0)->i);
		fmt_us(total, sizeof(total), p[0].v + p[1].v + p[2].v);
		stacked(o, 26.0 * (double)i, label, p, 3, total);
	}
	pct_axis(o, 26.0 * (double)n);
	legend(o, 26.0 * (double)n + 28, p, 3);
	figure_close(o, "Shares of each rank's window, whose length ends its bar "
		     "(temporal).");
	table(o, t, "t-temporal");
	fputs("</section>\n", o);
	free(rows);
}

/* idle rows are per rank, stream and category: the whole GPU's (stream
 * empty) where there are, else summed per rank. */
static void idle(FILE *o, const struct ta_table *t)
{
	static const char *const cats[] = { "host_wait", "kernel_wait", "other" };
	static const char *const colours[] = { C_VERMILLION, C_SKY, C_PURPLE };
	long rank_c = col(t, "rank"), cat_c = col(t, "category"), us_c = col(t, "idle_us");
	int64_t *ranks = calloc(t->nrows + 1, sizeof(*ranks));
	double (*v)[3] = calloc(t->nrows + 1, sizeof(*v));
	size_t n = 0, r, i, k, shown;
	char label[32];
	int whole = 0;

	if (!ranks || !v || rank_c < 0 || cat_c < 0) {
		free(ranks), free(v);
		return;
	}
	for (r = 0; r < t->nrows; r++)
		whole |= ta_table_cell(t, r, 1)->null;
	for (r = 0; r < t->nrows; r++) {
		int64_t rank = ta_table_cell(t, r, (size_t)rank_c)->i;
		const char *cat = ta_table_cell(t, r, (size_t)cat_c)->s;

		if (whole && !ta_table_cell(t, r, 1)->null)
			continue;
		for (i = 0; i < n && ranks[i] != rank; i++)
			;
		if (i == n)
			ranks[n++] = rank;
		for (k = 0; k < 3; k++)
			if (strcmp(cat, cats[k]) == 0)
				v[i][k] += num(t, r, us_c);
	}
	shown = n;
	if (n > MANY_RANKS) {   /* many ranks: the most idle ones, in rank order */
		size_t a, b;

		for (a = 0; a < WORST; a++)
			for (b = a + 1; b < n; b++)
				if (v[b][0] + v[b][1] + v[b][2] > v[a][0] + v[a][1] + v[a][2]) {
					int64_t rk = ranks[a];
					double x[3];

					memcpy(x, v[a], sizeof(x));
					memcpy(v[a], v[b], sizeof(x));
					memcpy(v[b], x, sizeof(x));
					ranks[a] = ranks[b], ranks[b] = rk;
				}
		shown = WORST;
		fprintf(o, "<section id=\"idle\"><h2>Why the GPU was idle</h2>\n<p>%zu "
			"ranks: the %d with the most idle time.</p>\n", n, WORST);
	} else {
		fputs("<section id=\"idle\"><h2>Why the GPU was idle</h2>\n", o);
	}
	figure_open(o, 26.0 * (double)shown + 50, "Idle time per rank by cause: "
		    "host wait, kernel wait, other");
	for (i = 0; i < shown; i++) {
		struct part p[3];
		char total[64];

		for (k = 0; k < 3; k++)
			p[k] = (struct part){ cats[k], colours[k], v[i][k] };
		snprintf(label, sizeof(label), "rank %lld", (long long)ranks[i]);
		fmt_us(total, sizeof(total), v[i][0] + v[i][1] + v[i][2]);
		stacked(o, 26.0 * (double)i, label, p, 3, total);
	}
	pct_axis(o, 26.0 * (double)shown);
	{
		struct part p[3];

		for (k = 0; k < 3; k++)
			p[k] = (struct part){ cats[k], colours[k], 0 };
		legend(o, 26.0 * (double)shown + 28, p, 3);
	}
	figure_close(o, whole ? "Shares of the time no stream ran anything, which "
		     "ends each bar (idle)." :
		     "Shares of the idle time of all streams, which ends each bar (idle).");
	table(o, t, "t-idle");
	fputs("</section>\n", o);
	free(ranks);
	free(v);
}

static const char *verdict_colour(const char *v)
{
	static const char *const names[] = { "compute-bound", "host-stalled",
		"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
		"unrecorded", "queued-idle" };
	static const char *const colours[] = { C_GREEN, C_VERMILLION, C_ORANGE,
		C_BLUE, C_PURPLE, C_SKY, C_GREY, C_YELLOW };
	size_t i;

	for (i = 0; i < 8; i++)
		if (strcmp(v, names[i]) == 0)
			return colours[i];
	return C_GREY;
}

/* What a finding costs: its time (over its steps), or for memory, which
 * costs no time, the amount its detail gives (+4.0 MiB a step). */
static void finding_amount(FILE *o, const struct ta_table *f, size_t r)
{
	long kind = col(f, "kind"), cost = col(f, "cost_us"), steps = col(f, "steps");
	long detail = col(f, "detail");
	const char *k = ta_table_cell(f, r, (size_t)kind)->s;
	char a[64];

	if (detail >= 0 && strncmp(k, "memory_", 7) == 0 &&
	    !ta_table_cell(f, r, (size_t)detail)->null) {
		fputs("<span class=\"n\">", o);
		cell(o, f, r, (size_t)detail);
		fputs("</span>", o);
		return;
	}
	fmt_us(a, sizeof(a), num(f, r, cost));
	fprintf(o, "<span class=\"n\">%s</span>", a);
	if (steps >= 0 && !ta_table_cell(f, r, (size_t)steps)->null)
		fprintf(o, " over %lld step%s", (long long)ta_table_cell(f, r, (size_t)steps)->i,
			ta_table_cell(f, r, (size_t)steps)->i == 1 ? "" : "s");
}

/* Findings by cost, a leak (which costs memory, not time) first. */
static size_t *costliest(const struct ta_table *f, long cost, long kind)
{
	size_t *by = calloc(f->nrows + 1, sizeof(*by)), i, j;

	if (!by)
		return NULL;
	for (i = 0; i < f->nrows; i++)
		by[i] = i;
	for (i = 1; i < f->nrows; i++) {     /* stable insertion: few rows */
		size_t x = by[i];
		int leak = strcmp(ta_table_cell(f, x, (size_t)kind)->s, "memory_growth") == 0;

		for (j = i; j > 0; j--) {
			size_t y = by[j - 1];
			int yleak = strcmp(ta_table_cell(f, y, (size_t)kind)->s,
					   "memory_growth") == 0;

			if (yleak >= leak && (yleak > leak || num(f, y, cost) >= num(f, x, cost)))
				break;
			by[j] = y;
		}
		by[j] = x;
	}
	return by;
}

/* A rank x step grid of a table's rows: the steps in order as columns,
 * the ranks as rows, by a weight (the heaviest first) or in rank order,
 * at most GRID_RANKS of them. */
struct grid {
	int64_t *ranks, *steps;
	size_t nr, ns, all_ranks;
	size_t *at;       /* nr x ns: the table's row + 1, 0 where none */
};

/* Something (a rank, a row) and what it weighs: the heaviest first, then
 * by id. */
struct ranked {
	double v;
	int64_t id;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The index of x in sorted v[0..n), or n. */
static size_t find_i64(const int64_t *v, size_t n, int64_t x)
{
	size_t at = ta_lower_i64(v, n, x);

	return at < n && v[at] == x ? at : n;
}

static void grid_free(struct grid *g)
{
	free(g->ranks), free(g->steps), free(g->at);
}

/* weight: per row of t, summed per rank to order the rows by; NULL:
 * rank order */
static int grid_make(struct grid *g, const struct ta_table *t, const double *weight)
{
	long rank_c = col(t, "rank"), step_c = col(t, "step");
	struct ranked *rw;
	int64_t *sorted;
	size_t r, i, n = 0;

	memset(g, 0, sizeof(*g));
	if (rank_c < 0 || step_c < 0)
		return -1;
	g->ranks = calloc(t->nrows + 1, sizeof(*g->ranks));
	g->steps = calloc(t->nrows + 1, sizeof(*g->steps));
	rw = calloc(t->nrows + 1, sizeof(*rw));
	sorted = calloc(t->nrows + 1, sizeof(*sorted));
	if (!g->ranks || !g->steps || !rw || !sorted)
		goto fail;
	for (r = 0; r < t->nrows; r++) {
		sorted[r] = ta_table_cell(t, r, (size_t)rank_c)->i;
		if (!ta_table_cell(t, r, (size_t)step_c)->null)
			g->steps[g->ns++] = ta_table_cell(t, r, (size_t)step_c)->i;
	}
	qsort(sorted, t->nrows, sizeof(*sorted), ta_cmp_i64);
	qsort(g->steps, g->ns, sizeof(*g->steps), ta_cmp_i64);
	for (i = 0; i < g->ns; i++)      /* distinct */
		if (!n || g->steps[n - 1] != g->steps[i])
			g->steps[n++] = g->steps[i];
	g->ns = n < GRID_STEPS ? n : GRID_STEPS;
	for (n = 0, i = 0; i < t->nrows; i++)
		if (!n || sorted[n - 1] != sorted[i])
			sorted[n++] = sorted[i];
	g->all_ranks = n;
	for (i = 0; i < n; i++)
		rw[i] = (struct ranked){ 0, sorted[i] };
	if (weight) {
		for (r = 0; r < t->nrows; r++)
			rw[find_i64(sorted, n, ta_table_cell(t, r, (size_t)rank_c)->i)].v +=
				weight[r];
		qsort(rw, n, sizeof(*rw), cmp_ranked);
	}
	g->nr = n < GRID_RANKS ? n : GRID_RANKS;
	for (i = 0; i < g->nr; i++)
		g->ranks[i] = rw[i].id;
	g->at = calloc(g->nr * g->ns + 1, sizeof(*g->at));
	if (!g->at)
		goto fail;
	for (r = 0; r < t->nrows; r++) {
		int64_t rank = ta_table_cell(t, r, (size_t)rank_c)->i;
		size_t j;

		if (ta_table_cell(t, r, (size_t)step_c)->null)
			continue;
		j = find_i64(g->steps, g->ns, ta_table_cell(t, r, (size_t)step_c)->i);
		for (i = 0; i < g->nr && g->ranks[i] != rank; i++)
			;
		if (i < g->nr && j < g->ns)
			g->at[i * g->ns + j] = r + 1;
	}
	free(rw), free(sorted);
	return 0;
fail:
	free(rw), free(sorted);
	grid_free(g);
	return -1;
}

static void grid_head(FILE *o, const struct grid *g)
{
	size_t j;

	fputs("<table class=\"grid\"><thead><tr><th></th>", o);
	for (j = 0; j < g->ns; j++)
		fprintf(o, "<th scope=\"col\">step %lld</th>", (long long)g->steps[j]);
	fputs("</tr></thead><tbody>\n", o);
}

/* The verdict of each step, a word in its colour. */
static const char *verdict_word(const char *v)
{
	static const char *const names[] = { "compute-bound", "host-stalled",
		"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
		"unrecorded", "queued-idle" };
	static const char *const words[] = { "compute", "host", "launch", "comm",
		"copy", "peer", "unrec", "queued" };
	size_t i;

	for (i = 0; i < 8; i++)
		if (strcmp(v, names[i]) == 0)
			return words[i];
	return "?";
}

/* A rank x step grid of verdicts; the findings, costliest first. */
static void diagnose(FILE *o, const struct ta_table *t, const struct ta_table *f)
{
	static const char *const names[] = { "compute-bound", "host-stalled",
		"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
		"unrecorded", "queued-idle" };
	long v_c = col(t, "verdict"), cause_c = col(t, "main_cause");
	long rank_c = col(t, "rank");
	struct grid g;
	size_t r, i, j, k, nranks = 0;
	double *w = calloc(t->nrows + 1, sizeof(*w));
	int made;

	fputs("<section id=\"diagnose\"><h2>What bounds each step</h2>\n", o);
	for (r = 0; rank_c >= 0 && r < t->nrows; r++)   /* rows come by rank */
		nranks += !r || ta_table_cell(t, r, (size_t)rank_c)->i !=
				ta_table_cell(t, r - 1, (size_t)rank_c)->i;
	/* many ranks: first those bound by something of their own (not a
	 * peer, not their compute), costliest first */
	for (r = 0; w && v_c >= 0 && r < t->nrows; r++) {
		const char *v = ta_table_cell(t, r, (size_t)v_c)->s;

		w[r] = num(t, r, col(t, "cause_us")) +
		       (strcmp(v, "waiting-for-peer") && strcmp(v, "compute-bound") ? 1e15 : 0);
	}
	made = w && v_c >= 0 && grid_make(&g, t, nranks > GRID_RANKS ? w : NULL) == 0;
	if (made && g.ns == 0) {
		/* no ProfilerStep#: a grid of no step drew an empty box */
		fputs("<p>No rank has a ProfilerStep# step: each rank's whole trace is "
		      "its one window, whose verdict is above.</p>\n", o);
		grid_free(&g);
	} else if (made) {
		if (g.nr < g.all_ranks)
			fprintf(o, "<p>%zu of %zu ranks: those bound by a cause of their "
				"own first, then by what it costs.</p>", g.nr, g.all_ranks);
		grid_head(o, &g);
		for (i = 0; i < g.nr; i++) {
			fprintf(o, "<tr><th scope=\"row\">rank %lld</th>", (long long)g.ranks[i]);
			for (j = 0; j < g.ns; j++) {
				const char *v, *c;

				if (!(r = g.at[i * g.ns + j])) {
					fputs("<td></td>", o);
					continue;
				}
				v = ta_table_cell(t, r - 1, (size_t)v_c)->s;
				c = cause_c >= 0 ? ta_table_cell(t, r - 1, (size_t)cause_c)->s : NULL;
				fprintf(o, "<td style=\"background:%s;color:%s\" title=\"",
					verdict_colour(v), ink(verdict_colour(v)));
				esc(o, v);
				if (c && *c) {
					fputs(": ", o);
					esc(o, c);
				}
				fprintf(o, "\">%s</td>", verdict_word(v));
			}
			fputs("</tr>\n", o);
		}
		fputs("</tbody></table>\n<p class=\"legend\">", o);
		for (k = 0; k < 8; k++)
			fprintf(o, "<span style=\"border-color:%s\"><b>%s</b> %s</span> ",
				verdict_colour(names[k]), verdict_word(names[k]), names[k]);
		fputs("</p>\n", o);
		grid_free(&g);
	}
	free(w);
	if (f && f->nrows) {
		long kind = col(f, "kind"), where = col(f, "where"), cost = col(f, "cost_us");
		long adv = col(f, "advice");
		size_t *by = costliest(f, cost, kind);

		fprintf(o, "<details><summary>The %zu finding%s in words, costliest first"
			"</summary><ol class=\"findings\">", f->nrows, f->nrows == 1 ? "" : "s");
		for (k = 0; by && k < f->nrows && k < FINDINGS; k++) {
			r = by[k];
			fprintf(o, "<li><b>rank %lld ", (long long)ta_table_cell(f, r, 0)->i);
			cell(o, f, r, (size_t)kind);
			fputs("</b> ", o);
			cell(o, f, r, (size_t)where);
			fputs(": ", o);
			finding_amount(o, f, r);
			fputs("<br><span class=\"advice\">", o);
			cell(o, f, r, (size_t)adv);
			fputs("</span></li>", o);
		}
		fputs("</ol>", o);
		if (f->nrows > FINDINGS)
			fprintf(o, "<p>and %zu more in the table.</p>", f->nrows - FINDINGS);
		fputs("</details>\n", o);
		free(by);
	}
	table(o, t, "t-diagnose");
	table(o, f, "t-findings");
	fputs("</section>\n", o);
}

/* Bars of a time column, the job's largest first: each row's name (and
 * rank, when rows are per rank) above its bar, its time past the bar, a
 * scale under them. */
static void bars(FILE *o, const struct ta_table *t, const char *label_col,
		 const char *value_col, size_t max, const char *alt)
{
	long lc = col(t, label_col), vc = col(t, value_col), rank_c = col(t, "rank");
	double top = 0, w_max = BAR_W - 40;
	size_t r, i, n = t->nrows < max ? t->nrows : max;
	struct ta_buf name = { 0 }, label = { 0 };
	struct ranked *by = calloc(t->nrows + 1, sizeof(*by));
	int ranks = 0;
	char v[64];

	if (!by)
		return;
	/* the largest over the job, not the first rank's rows */
	for (r = 0; r < t->nrows; r++) {
		by[r] = (struct ranked){ num(t, r, vc), (int64_t)r };
		if (rank_c >= 0 && ta_table_cell(t, r, (size_t)rank_c)->i !=
		    ta_table_cell(t, 0, (size_t)rank_c)->i)
			ranks = 1;
	}
	qsort(by, t->nrows, sizeof(*by), cmp_ranked);
	for (i = 0; i < n; i++)
		top = by[i].v > top ? by[i].v : top;
	figure_open(o, 30.0 * (double)n + 24, alt);
	for (i = 0; i < n; i++) {
		const char *s;
		double y = 30.0 * (double)i, w;

		r = (size_t)by[i].id;
		s = ta_table_cell(t, r, (size_t)lc)->s;
		w = top > 0 ? w_max * by[i].v / top : 0;
		ta_people_name(s ? s : "", ranks ? NAME_W - 10 : NAME_W, &name);
		ta_buf_reset(&label);
		if (ranks)    /* which rank's, when rows are per rank */
			ta_buf_addf(&label, "rank %lld: ",
				    (long long)ta_table_cell(t, r, (size_t)rank_c)->i);
		ta_buf_adds(&label, name.s);
		fmt_us(v, sizeof(v), by[i].v);
		fprintf(o, "<text x=\"120\" y=\"%.0f\" class=\"small\">", y + 10);
		esc(o, label.s);
		fprintf(o, "</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" height=\"12\" "
			"fill=\"%s\"><title>", y + 13, w, C_BLUE);
		esc(o, s);
		fprintf(o, ": %s</title></rect><text x=\"%.2f\" y=\"%.0f\" class=\"small\">"
			"%s</text>", v, 124 + w, y + 23, v);
	}
	us_axis(o, 30.0 * (double)n + 2, w_max, top);
	ta_buf_free(&name);
	ta_buf_free(&label);
	free(by);
	fputs("</svg><figcaption>", o);
	esc(o, alt);
	fputs("</figcaption></figure>\n", o);
}

static void kernels(FILE *o, const struct ta_table *types, const struct ta_table *k)
{
	fputs("<section id=\"kernels\"><h2>GPU time by kernel type and kernel</h2>\n", o);
	if (types) {
		bars(o, types, "kernel_type", "total_us", 12, "GPU time per kernel type "
		     "(kernels --by type)");
		table(o, types, "t-types");
	}
	if (k) {
		bars(o, k, "name", "total_us", 6, "The kernels with the most GPU time "
		     "(kernels)");
		table(o, k, "t-kernels");
	}
	fputs("</section>\n", o);
}

/* Whether the per-step table counts communication where no rank had a
 * collective kernel: gloo's ranges (overlap --by step). */
static int cpu_collectives(const struct ta_table *steps)
{
	long c = steps ? col(steps, "communication_us") : -1;
	size_t r;

	for (r = 0; c >= 0 && r < steps->nrows; r++)
		if (num(steps, r, c) > 0)
			return 1;
	return 0;
}
/* How long the others waited for each rank at each step: a rank x step
 * grid of late_us with its values, the latest rank first. */
static void stragglers(FILE *o, const struct ta_table *s)
{
	long late_c = col(s, "late_us");
	struct grid g;
	double top = 0, *w = calloc(s->nrows + 1, sizeof(*w));
	size_t r, i, j;

	if (!w)
		return;
	for (r = 0; r < s->nrows; r++)
		w[r] = late_c >= 0 ? num(s, r, late_c) : 0;
	if (late_c < 0 || grid_make(&g, s, w) != 0) {
		free(w);
		return;
	}
	free(w);
	for (r = 0; r < s->nrows; r++)
		top = num(s, r, late_c) > top ? num(s, r, late_c) : top;
	fputs("<section id=\"stragglers\"><h2>Who keeps the others waiting</h2>\n", o);
	for (r = 0; r < s->nrows && ta_table_cell(s, r, (size_t)late_c)->null; r++)
		;
	if (r == s->nrows) {   /* nothing matched: no grid of zeros */
		fputs("<p>Who waits for whom is not measured: no collective kernel was "
		      "matched across ranks.</p>\n", o);
		table(o, s, "t-stragglers");
		fputs("</section>\n", o);
		grid_free(&g);
		return;
	}
	fputs("<p>The step time the other ranks lost waiting for each rank, per "
	      "step (stragglers' late_us): the latest rank first", o);
	if (g.nr < g.all_ranks)
		fprintf(o, "; the %zu latest of %zu ranks", g.nr, g.all_ranks);
	fputs(".</p>\n", o);
	grid_head(o, &g);
	for (i = 0; i < g.nr; i++) {
		fprintf(o, "<tr><th scope=\"row\">rank %lld</th>", (long long)g.ranks[i]);
		for (j = 0; j < g.ns; j++) {
			char raw[64], shown[64];
			double v, a;

			if (!(r = g.at[i * g.ns + j]) ||
			    ta_table_cell(s, r - 1, (size_t)late_c)->null) {
				fputs("<td></td>", o);
				continue;
			}
			v = num(s, r - 1, late_c);
			a = top > 0 ? 0.85 * v / top : 0;
			ta_format_real(raw, sizeof(raw), v);
			fmt_us(shown, sizeof(shown), v);
			fprintf(o, "<td class=\"n\" data-v=\"%s\" title=\"rank %lld step %lld: "
				"late %s\" style=\"background:rgba(213,94,0,%.2f)%s\">%s</td>", raw,
				(long long)g.ranks[i], (long long)g.steps[j], raw, a,
				a > 0.5 ? ";color:#fff" : "", shown);
		}
		fputs("</tr>\n", o);
	}
	fputs("</tbody></table>\n", o);
	table(o, s, "t-stragglers");
	fputs("</section>\n", o);
	grid_free(&g);
}

static void comm(FILE *o, const struct ta_table *ov, const struct ta_table *steps)
{
	fputs("<section id=\"comm\"><h2>Communication</h2>\n", o);
	if (ov) {
		size_t r;
		long p = col(ov, "overlap_pct");
		int any = 0;

		for (r = 0; r < ov->nrows; r++)
			any |= num(ov, r, col(ov, "comm_us")) > 0;
		if (any && p >= 0) {
			size_t n = ov->nrows < MANY_RANKS ? ov->nrows : MANY_RANKS;

			figure_open(o, 22.0 * (double)n + 24,
				    "Share of communication time hidden under compute, per rank");
			for (r = 0; r < n; r++) {
				double v = num(ov, r, p);

				fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\">"
					"rank %lld</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" "
					"height=\"16\" fill=\"%s\"><title>rank %lld: %.4g %% "
					"overlapped</title></rect><text x=\"%.2f\" y=\"%.0f\" "
					"class=\"small\">%.1f %%</text>", 22.0 * (double)r + 13,
					(long long)ta_table_cell(ov, r, 0)->i, 22.0 * (double)r,
					BAR_W * v / 100, C_GREEN,
					(long long)ta_table_cell(ov, r, 0)->i, v,
					124 + BAR_W * v / 100, 22.0 * (double)r + 12, v);
			}
			pct_axis(o, 22.0 * (double)n);
			figure_close(o, "The share of communication kernel time during "
				     "which compute ran (overlap).");
		} else if (cpu_collectives(steps)) {
			/* gloo's: the chart below counts their ranges, this
			 * table kernels only (two_ranks read "communication
			 * alone 8.7 ms" beside "No communication kernels") */
			fputs("<p>No communication kernels: the collectives ran on the "
			      "CPU (gloo), where no GPU compute can hide them; the chart "
			      "per step counts their time.</p>", o);
		} else {
			fputs("<p>No communication kernels.</p>", o);
		}
		table(o, ov, "t-overlap");
	}
	if (steps && steps->nrows) {
		ta_html_comm_steps(o, steps);
		table(o, steps, "t-comm-steps");
	}
	fputs("</section>\n", o);
}

/* Allocated bytes over time, one line per device. */
static void memory(FILE *o, const struct ta_table *m)
{
	long dev_c = col(m, "device"), ts_c = col(m, "ts"), a_c = col(m, "allocated_bytes");
	double t0 = 0, t1 = 0, top = 0;
	size_t r;
	const char *dev = NULL;
	static const char *const colours[] = { C_BLUE, C_ORANGE, C_GREEN, C_PURPLE };
	int line = -1;

	for (r = 0; r < m->nrows; r++) {
		double ts = num(m, r, ts_c), a = num(m, r, a_c);

		if (r == 0 || ts < t0)
			t0 = ts;
		if (r == 0 || ts > t1)
			t1 = ts;
		top = a > top ? a : top;
	}
	fputs("<section id=\"memory\"><h2>Memory over time</h2>\n", o);
	figure_open(o, 220, "Allocated bytes over time, a line per rank and device");
	for (r = 0; r < m->nrows; r++) {
		const char *d = ta_table_cell(m, r, (size_t)dev_c)->s;
		double x = 120 + (t1 > t0 ? (BAR_W - 10) * (num(m, r, ts_c) - t0) / (t1 - t0) : 0);
		double y = 200 - (top > 0 ? 190 * num(m, r, a_c) / top : 0);

		if (!dev || strcmp(d, dev) != 0 || (r > 0 && ta_table_cell(m, r, 0)->i !=
						    ta_table_cell(m, r - 1, 0)->i)) {
			if (dev)
				fputs("\"/>", o);
			line++;
			fprintf(o, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" "
				"points=\"", colours[line % 4]);
			dev = d;
		}
		fprintf(o, "%.1f,%.1f ", x, y);
	}
	if (dev)
		fputs("\"/>", o);
	fprintf(o, "<text x=\"114\" y=\"14\" text-anchor=\"end\" class=\"small\">%.1f MiB"
		"</text><text x=\"114\" y=\"200\" text-anchor=\"end\" class=\"small\">0</text>",
		top / (1 << 20));
	figure_close(o, "Allocated bytes over the trace (memory --series, the highest "
		     "of each bucket): each colour a rank's device.");
	table(o, m, "t-memory");
	fputs("</section>\n", o);
}

/* An allocator snapshot: its verdict (what memory prints), the allocated
 * and reserved bytes over the recording, and the summary row. */
static void snapshot(FILE *o, const struct ta_table *sum, const struct ta_table *ser)
{
	long t_c = col(ser, "time_us"), a_c = col(ser, "allocated_bytes");
	long r_c = col(ser, "reserved_bytes");
	double t0 = 0, t1 = 0, top = 0;
	size_t r;
	int which;

	fputs("<section id=\"snapshot\"><h2>Allocator snapshot</h2>\n", o);
	if (sum->head.len) {        /* a line each, escaped */
		char *text = ta_xstrndup(sum->head.s, sum->head.len), *line, *save = NULL;

		fputs("<p>", o);
		for (line = strtok_r(text, "\n", &save), r = 0; line;
		     line = strtok_r(NULL, "\n", &save), r++) {
			fputs(r ? "<br>" : "", o);
			esc(o, line);
		}
		fputs("</p>\n", o);
		free(text);
	}
	for (r = 0; r < ser->nrows; r++) {
		double ts = num(ser, r, t_c), res = num(ser, r, r_c);

		if (r == 0 || ts < t0)
			t0 = ts;
		if (r == 0 || ts > t1)
			t1 = ts;
		top = res > top ? res : top;
	}
	figure_open(o, 220, "Allocated and reserved bytes over the recorded history");
	for (which = 0; which < 2 && ser->nrows; which++) {
		fprintf(o, "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\"%s "
			"points=\"", which ? C_ORANGE : C_BLUE,
			which ? " stroke-dasharray=\"4 3\"" : "");
		for (r = 0; r < ser->nrows; r++) {
			/* by event, as memory_viz: the steps' sawtooth shows
			 * however long the first step took */
			double x = 120 + (ser->nrows > 1 ? (BAR_W - 10) * (double)r /
					  (double)(ser->nrows - 1) : 0);
			double v = num(ser, r, which ? r_c : a_c);

			fprintf(o, "%.1f,%.1f ", x, 200 - (top > 0 ? 190 * v / top : 0));
		}
		fputs("\"/>", o);
	}
	fprintf(o, "<text x=\"114\" y=\"14\" text-anchor=\"end\" class=\"small\">%.1f MiB"
		"</text><text x=\"114\" y=\"200\" text-anchor=\"end\" class=\"small\">0</text>",
		top / (1 << 20));
	figure_close(o, "Allocated bytes (solid blue) and reserved bytes (dashed orange) "
		     "over the recorded events, as memory_viz draws them (memory --series "
		     "--bucket-events on the snapshot, the highest of each bucket): the "
		     "sawtooth's floor is the baseline, its teeth the activations.");
	table(o, sum, "t-snapshot");
	fputs("</section>\n", o);
}

/* ---- the roofline: log-log, intensity against achieved TFLOP/s ---- */

#define RF_X0 70.0   /* plot area */
#define RF_X1 660.0
#define RF_Y0 20.0
#define RF_Y1 220.0

struct axis {
	double lo, hi;  /* decades, log10 */
};

static double rf_x(const struct axis *a, double v)
{
	return RF_X0 + (RF_X1 - RF_X0) * (log10(v) - a->lo) / (a->hi - a->lo);
}

static double rf_y(const struct axis *a, double v)
{
	return RF_Y1 - (RF_Y1 - RF_Y0) * (log10(v) - a->lo) / (a->hi - a->lo);
}

static void rf_axes(FILE *o, const struct axis *x, const struct axis *y)
{
	int d;

	for (d = (int)x->lo; d <= (int)x->hi; d++)
		fprintf(o, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" class=\"grid\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" class=\"small\">%g</text>",
			rf_x(x, pow(10, d)), RF_Y0, rf_x(x, pow(10, d)), RF_Y1,
			rf_x(x, pow(10, d)), RF_Y1 + 14, pow(10, d));
	for (d = (int)y->lo; d <= (int)y->hi; d++)
		fprintf(o, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" class=\"grid\"/>"
			"<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" class=\"small\">%g</text>",
			RF_X0, rf_y(y, pow(10, d)), RF_X1, rf_y(y, pow(10, d)), RF_X0 - 4,
			rf_y(y, pow(10, d)) + 4, pow(10, d));
	fprintf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">FLOPs per byte "
		"(arithmetic intensity)</text><text x=\"14\" y=\"%.0f\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 14 %.0f)\">achieved TFLOP/s</text>",
		(RF_X0 + RF_X1) / 2, RF_Y1 + 32, (RF_Y0 + RF_Y1) / 2, (RF_Y0 + RF_Y1) / 2);
}

/* The roofs: memory bandwidth up to the ridge, then the peak. */
static void rf_roof(FILE *o, const struct axis *x, const struct axis *y, double peak,
		    double gbps)
{
	double ridge = peak * 1e3 / gbps, ilo = pow(10, x->lo);
	double ybottom = pow(10, y->lo), start = ilo * gbps / 1e3 < ybottom ?
		ybottom * 1e3 / gbps : ilo;

	fprintf(o, "<polyline points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" "
		"stroke=\"#333\" stroke-width=\"2\"><title>roof: %.6g GB/s up to the ridge at "
		"%.4g FLOPs per byte, then %.6g TFLOP/s</title></polyline>",
		rf_x(x, start), rf_y(y, start * gbps / 1e3), rf_x(x, ridge), rf_y(y, peak),
		RF_X1, rf_y(y, peak), gbps, ridge, peak);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\" text-anchor=\"end\">"
		"%.4g TFLOP/s</text>", RF_X1, rf_y(y, peak) - 4, peak);
}

/* An op's name without what every one has: "aten::_scaled_dot_product_" */
static const char *short_op(const char *op)
{
	if (strncmp(op, "aten::", 6) == 0)
		op += 6;
	if (strncmp(op, "_scaled_dot_product_", 20) == 0)
		op += 20;
	return op;
}

/* The rows to draw: known work, achieved > 0, the most GPU time first. */
static size_t rf_points(const struct ta_table *t, size_t *rows, size_t max,
			double *imin, double *imax, double *tmin, double *tmax, double *gmax)
{
	long in = col(t, "intensity"), tf = col(t, "tflops"), g = col(t, "gpu_us");
	size_t r, n = 0;

	for (r = 0; r < t->nrows && n < max; r++) {
		double i = num(t, r, in), f = num(t, r, tf);

		if (!(i > 0) || !(f > 0))
			continue;
		rows[n++] = r;
		*imin = i < *imin ? i : *imin, *imax = i > *imax ? i : *imax;
		*tmin = f < *tmin ? f : *tmin, *tmax = f > *tmax ? f : *tmax;
		*gmax = num(t, r, g) > *gmax ? num(t, r, g) : *gmax;
	}
	return n;
}

/* Labels placed so far: a new one moves until it overlaps none. */
struct rf_labels {
	double x[16], y[16], w[16];
	size_t n;
};

static int rf_free(const struct rf_labels *l, double x, double y, double w)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (x < l->x[i] + l->w[i] && l->x[i] < x + w && y - 11 < l->y[i] &&
		    l->y[i] - 11 < y)
			return 0;
	return x >= RF_X0 && x + w <= RF_X1 + 30;
}

/* Where a label of width w goes beside a dot at (cx, cy) of radius rad:
 * right, left, then further up or down; x is its left edge. */
static void rf_place(struct rf_labels *l, double cx, double cy, double rad, double w,
		     double *x, double *y)
{
	static const double dy[] = { 0, 12, -12, 24, -24, 36, -36 };
	size_t k, side;

	for (k = 0; k < sizeof(dy) / sizeof(dy[0]); k++)
		for (side = 0; side < 2; side++) {
			*x = side ? cx - rad - 3 - w : cx + rad + 3;
			*y = cy + 4 + dy[k];
			if (rf_free(l, *x, *y, w))
				goto done;
		}
	*x = cx + rad + 3, *y = cy + 4;
done:
	if (l->n < 16) {
		l->x[l->n] = *x, l->y[l->n] = *y, l->w[l->n] = w;
		l->n++;
	}
}

static void rf_dot(FILE *o, const struct ta_table *t, size_t r, const struct axis *x,
		   const struct axis *y, double gmax, struct rf_labels *labels)
{
	const char *op = ta_table_cell(t, r, (size_t)col(t, "op"))->s;
	const char *bound = ta_table_cell(t, r, (size_t)col(t, "bound"))->s;
	double i = num(t, r, col(t, "intensity")), f = num(t, r, col(t, "tflops"));
	double g = num(t, r, col(t, "gpu_us")), pct = num(t, r, col(t, "peak_pct"));
	double cx = rf_x(x, i), cy = rf_y(y, f), rad = 15 * sqrt(gmax > 0 ? g / gmax : 0);

	/* the area in proportion to the time; the least still seen */
	if (rad < 2.5)
		rad = 2.5;
	double lx, ly;

	fprintf(o, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" "
		"fill-opacity=\"0.6\"><title>rank %lld ", cx, cy, rad,
		bound && strcmp(bound, "memory") == 0 ? C_ORANGE : C_BLUE,
		(long long)ta_table_cell(t, r, 0)->i);
	esc(o, op);
	fprintf(o, " (%s): %.4g FLOPs per byte, %.4g TFLOP/s", ta_table_cell(t, r, 2)->s ?
		ta_table_cell(t, r, 2)->s : "?", i, f);
	if (pct == pct)
		fprintf(o, ", %.1f %% of its roof, %s-bound", pct, bound ? bound : "?");
	fprintf(o, "; %.4g ms of GPU time</title></circle>", g / 1e3);
	/* 11px text: about 6.2 px a character */
	rf_place(labels, cx, cy, rad, 6.2 * (double)strlen(short_op(op)), &lx, &ly);
	fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">", lx, ly);
	esc(o, short_op(op));
	fputs("</text>", o);
}

static void roofline_chart(FILE *o, const struct ta_table *t)
{
	const struct ta_table *sum = t->also;
	double imin = 1e300, imax = 0, tmin = 1e300, tmax = 0, gmax = 0;
	double peak = 0, gbps = 0;
	size_t rows[16], n = rf_points(t, rows, 16, &imin, &imax, &tmin, &tmax, &gmax), k;
	struct axis x, y;
	struct rf_labels labels = { { 0 }, { 0 }, { 0 }, 0 };

	if (sum && sum->nrows && col(sum, "peak_gbps") >= 0) {
		peak = num(sum, 0, col(sum, "peak_tflops"));
		gbps = num(sum, 0, col(sum, "peak_gbps"));
	}
	if (!n)
		return;
	if (peak > 0 && gbps > 0) {
		double ridge = peak * 1e3 / gbps;

		imin = ridge / 100 < imin ? ridge / 100 : imin;
		imax = ridge * 10 > imax ? ridge * 10 : imax;
		tmax = peak > tmax ? peak : tmax;
	}
	x = (struct axis){ floor(log10(imin)), ceil(log10(imax)) };
	y = (struct axis){ floor(log10(tmin)), ceil(log10(tmax * 1.5)) };
	if (x.hi <= x.lo)
		x.hi = x.lo + 1;
	if (y.hi <= y.lo)
		y.hi = y.lo + 1;
	figure_open_w(o, RF_X1 + 40, RF_Y1 + 42, "Roofline: each op's achieved TFLOP/s against its "
		    "FLOPs per byte, log-log");
	rf_axes(o, &x, &y);
	if (peak > 0 && gbps > 0)
		rf_roof(o, &x, &y, peak, gbps);
	for (k = 0; k < n; k++)
		rf_dot(o, t, rows[k], &x, &y, gmax, &labels);
	figure_close(o, peak > 0 && gbps > 0 ?
		     "Roofline (roofline): the roof is the GPU's memory bandwidth below the "
		     "ridge and the peak of the type that did most of the work above it; a "
		     "dot per op and type, its area the op's GPU time; orange: memory-bound" :
		     "Roofline (roofline): a dot per op and type, its area the op's GPU time "
		     "(the GPU's peaks are unknown: no roof)");
}

/* MFU per rank and step, as bars with their values. */
static void mfu_bars(FILE *o, const struct ta_table *s)
{
	long m = col(s, "mfu_pct");
	size_t r, n = s->nrows < 16 ? s->nrows : 16;
	double top = 0;

	for (r = 0; r < n; r++)
		top = num(s, r, m) > top ? num(s, r, m) : top;
	if (!(top > 0))
		return;
	figure_open(o, 18.0 * (double)n + 22, "MFU per step");
	for (r = 0; r < n; r++) {
		double v = num(s, r, m), w = BAR_W * (v == v && v > 0 ? (v < 100 ? v : 100) : 0) / 100;

		fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\" class=\"small\">"
			"rank %lld step %lld</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" "
			"height=\"14\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.0f\" class=\"small\">"
			"%.2f %%</text>", 18.0 * (double)r + 11, (long long)ta_table_cell(s, r, 0)->i,
			(long long)ta_table_cell(s, r, 1)->i, 18.0 * (double)r, w, C_BLUE, 124 + w,
			18.0 * (double)r + 11, v == v ? v : 0);
	}
	pct_axis(o, 18.0 * (double)n);
	figure_close(o, "MFU per step: its FLOPs over its window, against the "
		     "peak of its main type (roofline --by step).");
}

static void roofline(FILE *o, const struct ta_table *t, const struct ta_table *steps)
{
	size_t r;

	for (r = 0; r < t->nrows; r++)
		if (!ta_table_cell(t, r, 4)->null)
			break;
	if (r == t->nrows)
		return;   /* no op with known work: record_shapes was off */
	fputs("<section id=\"roofline\"><h2>Was the GPU time well spent: the roofline"
	      "</h2>\n", o);
	roofline_chart(o, t);
	if (steps)
		mfu_bars(o, steps);
	table(o, t, "t-roofline");
	if (steps)
		table(o, steps, "t-mfu");
	fputs("</section>\n", o);
}

static const char css[] =
"<style>\n"
":root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#5a5a5a;--line:#ddd}\n"
"@media (prefers-color-scheme:dark){:root{--fg:#e8e8e8;--bg:#161616;--muted:#aaa;--line:#444}}\n"
"body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);"
"max-width:62rem;margin:1.5rem auto;padding:0 1rem}\n"
"h1{font-size:1.5rem;overflow-wrap:anywhere}h2{font-size:1.2rem;"
"border-bottom:1px solid var(--line);padding-bottom:.2rem;margin:1.2rem 0 .5rem}\n"
"p.meta{color:var(--muted);overflow-wrap:anywhere}\n"
"svg{max-width:100%;height:auto}figure{overflow-x:auto}"
/* a phone: charts keep a readable size and scroll sideways */
"@media (max-width:36rem){figure svg{max-width:none;width:520px}}svg text{fill:var(--fg);font-size:13px}"
"svg .small,svg .small text{font-size:11px}svg .grid{stroke:var(--line);stroke-width:1}\n"
"figure{margin:.6rem 0}figcaption{color:var(--muted);font-size:.85rem}\n"
"table.data{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}"
"table.data th,table.data td{border:1px solid var(--line);padding:.15rem .4rem}"
"table.data th{cursor:pointer;text-align:left}table.data td{max-width:36rem;"
"overflow-wrap:break-word}td.n,td.name{text-align:right;white-space:nowrap;"
"font-variant-numeric:tabular-nums}td.name{text-align:left}\n"
"table.grid{border-collapse:collapse;font-size:.85rem;display:block;overflow-x:auto;"
"max-width:100%;margin:.5rem 0}table.grid th,table.grid td{border:1px solid var(--line);"
"padding:.15rem .5rem;white-space:nowrap}table.grid td{text-align:center;"
"font-variant-numeric:tabular-nums}table.grid th{font-weight:normal;text-align:left}"
"table.grid thead th{white-space:normal}\n"
"p.legend{font-size:.85rem}p.legend span{border-left:12px solid;padding-left:.3rem;"
"margin-right:.5rem;white-space:nowrap;display:inline-block}\n"
/* wide screens: the sections in two columns under the first screen */
"@media (min-width:75rem){body{max-width:88rem}main{column-count:2;column-gap:3rem}"
"main>section{break-inside:avoid}#verdict,#stragglers,#modules{column-span:all}}\n"
"dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}"
"dl.meta dt{color:var(--muted)}pre{overflow-x:auto;font-size:.8rem}\n"
".advice{color:var(--muted)}details summary{cursor:pointer;color:var(--muted);"
"font-size:.85rem}\n"
"#verdict ul{padding-left:1.2rem}#verdict .v{border-left:6px solid;padding-left:.3rem;"
"font-weight:600}p.straggler{font-weight:600}\n"
"table.data{display:block;overflow-x:auto;max-width:100%}\n"
"@media print{details{display:block}details>summary{display:none}"
"body{max-width:none}section{break-inside:avoid-page}}\n"
"</style>\n";

/* Sorting a table by a click on its header; the page reads fine without. */
static const char script[] =
"<script>\n"
"document.querySelectorAll('table.data th').forEach(function(th,i){"
"th.addEventListener('click',function(){var tb=th.closest('table').tBodies[0];"
"var rows=Array.from(tb.rows);var d=th.dataset.d==='1'?-1:1;th.dataset.d=d===1?'1':'0';"
"rows.sort(function(a,b){var x=a.cells[i].dataset.v||a.cells[i].textContent,"
"y=b.cells[i].dataset.v||b.cells[i].textContent;"
"var p=parseFloat(x),q=parseFloat(y);if(!isNaN(p)&&!isNaN(q))return d*(p-q);"
"return d*x.localeCompare(y);});rows.forEach(function(r){tb.appendChild(r);});});});\n"
"</script>\n";

/* The plugin's GPU summary, a row per rank drawn. */
static void gpu_summary(FILE *o, const struct ta_table *s, const size_t *rows, size_t n)
{
	static const char *const cols_[] = { "gpu_util_pct", "sm_efficiency_pct",
		"occupancy_pct", "tensor_core_pct" };
	size_t i, k;

	fputs("<table class=\"grid\"><thead><tr><th></th><th scope=\"col\" title=\"the share of the steps a kernel ran, as the TensorBoard plugin counts it; the verdicts&#39; GPU busy counts copies and sets too\">GPU utilization</th>"
	      "<th scope=\"col\">est. SM efficiency</th><th scope=\"col\">est. achieved "
	      "occupancy</th><th scope=\"col\">tensor cores</th>"
	      "</tr></thead><tbody>\n", o);
	for (i = 0; i < n; i++) {
		fprintf(o, "<tr><th scope=\"row\">rank %lld</th>",
			(long long)ta_table_cell(s, rows[i], 0)->i);
		for (k = 0; k < 4; k++) {
			long c = col(s, cols_[k]);

			if (c < 0 || ta_table_cell(s, rows[i], (size_t)c)->null)
				fputs("<td></td>", o);
			else
				fprintf(o, "<td class=\"n\">%.1f&#160;%%</td>", num(s, rows[i], c));
		}
		fputs("</tr>\n", o);
	}
	fputs("</tbody></table>\n", o);
}

/* The TensorBoard plugin's overview: each rank's average step by
 * category, its GPU summary, and what to do about it (people_overview.c's
 * lines, as a list). */
static void overview(FILE *o, const struct ta_table *s, const struct ta_table *steps)
{
	static const char *const names[] = { "kernel", "memcpy", "memset",
		"communication", "runtime", "dataloader", "cpu_exec", "other" };
	static const char *const colours[] = { C_BLUE, C_SKY, C_PURPLE, C_ORANGE,
		C_YELLOW, C_VERMILLION, C_GREEN, C_GREY };
	struct part p[8];
	struct ta_table *said = ta_table_new("", s->cols, s->ncols);
	size_t *rows = calloc(s->nrows + 1, sizeof(*rows)), n, i, k;
	char label[32], name[40];

	if (!rows || !said) {
		free(rows);
		ta_table_free(said);
		return;
	}
	/* many ranks: those whose steps spend the most outside kernels and
	 * collectives (a straggler's data loading, a host-bound rank) */
	n = pick_rows(s, col(s, "step_us"), col(s, "kernel_us"),
		      col(s, "communication_us"), rows);
	fputs("<section id=\"overview\"><h2>Step time by category (the TensorBoard "
	      "overview)</h2>\n", o);
	if (s->nrows > MANY_RANKS)
		fprintf(o, "<p>%zu ranks: the %zu whose steps spend the most outside "
			"kernels and collectives.</p>", s->nrows, n);
	figure_open(o, 26.0 * (double)n + 68, "Each rank's average step, each moment "
		    "in the first category running then");
	for (i = 0; i < n; i++) {
		char total[64];
		double sum = 0;

		for (k = 0; k < 8; k++) {
			snprintf(name, sizeof(name), "%s_us", names[k]);
			p[k] = (struct part){ names[k], colours[k], num(s, rows[i], col(s, name)) };
			sum += p[k].v;
		}
		snprintf(label, sizeof(label), "rank %lld",
			 (long long)ta_table_cell(s, rows[i], 0)->i);
		fmt_us(total, sizeof(total), sum);
		stacked(o, 26.0 * (double)i, label, p, 8, total);
	}
	pct_axis(o, 26.0 * (double)n);
	/* eight labels: two rows, inside the figure */
	legend(o, 26.0 * (double)n + 28, p, 4);
	legend(o, 26.0 * (double)n + 46, p + 4, 4);
	figure_close(o, "Each rank's average kept step, whose length ends its bar "
		     "(overview).");
	gpu_summary(o, s, rows, n);
	ta_people_overview(said, s, steps);
	if (said->head.len) {
		char *line, *save = NULL;

		const char *rank = NULL, *q;
		size_t points = 0, shown = 0;

		for (q = said->head.s; (q = strstr(q, "\n  - ")); q++)
			points++;
		points += strncmp(said->head.s, "  - ", 4) == 0;
		/* the bar says each rank's step, the grid its GPU summary; the
		 * advice, which the first screen sums up, folded */
		if (points)
			fprintf(o, "<details><summary>What to do, as overview says it (%zu "
				"point%s%s)</summary><ul class=\"overview\">", points,
				points == 1 ? "" : "s", points > ADVICE ? "; the first "
				"40 here, all from the command" : "");
		for (line = strtok_r(said->head.s, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (line[0] != ' ') {
				char *colon = strchr(line, ':');

				if (colon)
					*colon = '\0';
				rank = line;
				continue;
			}
			if (strncmp(line, "  - ", 4) != 0 || shown >= ADVICE)
				continue;      /* the GPU summary: the grid above */
			shown++;
			fputs("<li>", o);
			if (rank) {
				esc(o, rank);
				fputs(": ", o);
			}
			esc(o, line + 4);
			fputs("</li>", o);
		}
		if (points)
			fputs("</ul></details>\n", o);
	}
	table(o, s, "t-overview");
	fputs("</section>\n", o);
	ta_table_free(said);
	free(rows);
}

/* Each rank's verdicts summed: the one of most steps (the first met on
 * a tie), its cause, the mean step and the GPU busy share of all of them
 * (busy time over step time: a mean of the steps' shares weighs a short
 * step as much as a long one). */
struct rank_verdict {
	int64_t rank;
	size_t steps, same;
	int whole;      /* its window is its whole trace: no ProfilerStep# */
	const char *verdict, *cause;
	double step_us, busy_us, cause_us;
};

static size_t rank_verdicts(const struct ta_table *d, struct rank_verdict *v)
{
	long rank_c = col(d, "rank"), step_us = col(d, "step_us"), busy = col(d, "gpu_busy_pct");
	long verdict_c = col(d, "verdict"), cause_c = col(d, "main_cause");
	long cost_c = col(d, "cause_us"), step_c = col(d, "step");
	size_t n = 0, r, q;

	for (r = 0; r < d->nrows; r++) {
		int64_t rank = ta_table_cell(d, r, (size_t)rank_c)->i;
		const char *x = ta_table_cell(d, r, (size_t)verdict_c)->s;
		size_t same = 0;

		if (!n || v[n - 1].rank != rank)
			v[n++] = (struct rank_verdict){ rank, 0, 0, 0, NULL, NULL, 0, 0, 0 };
		v[n - 1].steps++;
		v[n - 1].whole |= step_c >= 0 && ta_table_cell(d, r, (size_t)step_c)->null;
		v[n - 1].step_us += num(d, r, step_us);
		/* a step with an empty window lost nothing and has the verdict
		 * of the step before: not counted again */
		if (num(d, r, step_us) <= 0)
			continue;
		v[n - 1].busy_us += num(d, r, busy) / 100 * num(d, r, step_us);
		for (q = r + 1 - v[n - 1].steps; q <= r; q++)
			same += num(d, q, step_us) > 0 &&
				strcmp(ta_table_cell(d, q, (size_t)verdict_c)->s, x) == 0;
		if (same > v[n - 1].same) {
			double cost = 0;

			/* the cause of its first such step, and what it cost in
			 * each of them, on average */
			for (q = r + 1 - v[n - 1].steps; q <= r; q++)
				if (num(d, q, step_us) > 0 &&
				    strcmp(ta_table_cell(d, q, (size_t)verdict_c)->s, x) == 0) {
					if (!cost)
						v[n - 1].cause = ta_table_cell(d, q, (size_t)cause_c)->s;
					cost += num(d, q, cost_c);
				}
			v[n - 1].same = same;
			v[n - 1].verdict = x;
			v[n - 1].cause_us = cost / (double)same;
		}
	}
	return n;
}

/* Where the critical path disagrees with the rank's verdicts (its
 * largest part is not what the verdict blames, as diagnose's text says
 * below its table): in how many steps, and what the path is. The page
 * said "host-stalled" alone where a side stream's slow kernel was 70 %
 * of each step's path (helper-65). */
static void path_note(FILE *o, const struct ta_table *d, int64_t rank)
{
	long bound = col(d, "path_bound"), pct = col(d, "path_pct");
	long blamed = col(d, "verdict_path_pct");
	size_t r, steps = 0, off = 0, best = 0;
	double sum = 0, top = -1;

	if (bound < 0 || pct < 0 || blamed < 0)
		return;
	for (r = 0; r < d->nrows; r++) {
		const struct ta_cell *b = ta_table_cell(d, r, (size_t)blamed);
		double pp = ta_table_cell(d, r, (size_t)pct)->d;

		if (ta_table_cell(d, r, 0)->i != rank)
			continue;
		steps++;
		if (b->null || b->d + 0.005 >= pp || b->d >= 50)
			continue;
		if (pp > top)   /* the path's kind where it is the most of it */
			top = pp, best = r;
		off++;
		sum += pp;
	}
	if (!off || 2 * off < steps)
		return;
	fprintf(o, "; its critical path disagrees in %zu of %zu step%s: %.0f %% of it ",
		off, steps, steps == 1 ? "" : "s", sum / (double)off);
	esc(o, ta_table_cell(d, best, (size_t)bound)->s);
	fputs(" (<a href=\"#diagnose\">each step</a>; critical-path names it)", o);
}

/* The first screen: what bounds each rank, who holds the others back,
 * and the costliest causes with their fix. */
static void verdict(FILE *o, const struct ta_html_page *p)
{
	struct rank_verdict *v;
	size_t n, i, k;
	char a[64], b[64];

	if (!p->diagnose || !p->diagnose->nrows)
		return;
	v = calloc(p->diagnose->nrows + 1, sizeof(*v));
	if (!v)
		return;
	n = rank_verdicts(p->diagnose, v);
	fputs("<section id=\"verdict\"><h2>What bounds this job, and what to do</h2>\n"
	      "<ul class=\"verdict\">", o);
	for (i = 0; i < n && i < VERDICT_RANKS; i++) {
		if (!v[i].verdict) {
			fprintf(o, "<li><b>rank %lld</b>: no step has a window of its own "
				"(the GPU ran earlier work throughout)</li>", (long long)v[i].rank);
			continue;
		}
		fmt_us(a, sizeof(a), v[i].step_us / (double)v[i].steps);
		fprintf(o, "<li><b>rank %lld</b>: <span class=\"v\" style=\"border-color:%s\">",
			(long long)v[i].rank, verdict_colour(v[i].verdict));
		esc(o, v[i].verdict);
		if (v[i].whole)   /* one window, not a step (cuda_only: 3 steps) */
			fprintf(o, "</span> over its whole trace (no ProfilerStep# step: "
				"%s, GPU busy %.1f %%)", a,
				v[i].step_us > 0 ? 100 * v[i].busy_us / v[i].step_us : 0);
		else
			fprintf(o, "</span> in %zu of %zu step%s (a step %s, GPU busy %.1f %%)",
				v[i].same, v[i].steps, v[i].steps == 1 ? "" : "s", a,
				v[i].step_us > 0 ? 100 * v[i].busy_us / v[i].step_us : 0);
		/* cause_us is all the verdict's loss, of which the cause is
		 * the costliest part: "X (30 ms a step)" read as X's own */
		if (v[i].cause && strcmp(v[i].cause, "gpu_busy") != 0) {
			fmt_us(b, sizeof(b), v[i].cause_us);
			fprintf(o, ": %s %s lost, the largest part to ", b,
				v[i].whole ? "in all" : "a step");
			esc(o, v[i].cause);
		}
		path_note(o, p->diagnose, v[i].rank);
		fputs("</li>", o);
	}
	if (n > VERDICT_RANKS)
		fprintf(o, "<li>and %zu more ranks (<a href=\"#diagnose\">each step of "
			"each</a>)</li>", n - VERDICT_RANKS);
	fputs("</ul>\n", o);
	free(v);
	if (p->stragglers && p->stragglers->nrows) {
		struct ta_buf says = { 0 };

		ta_people_straggler_says(p->stragglers, &says);
		fputs("<p class=\"straggler\">", o);
		esc(o, says.s ? says.s : "");
		fputs(" (<a href=\"#stragglers\">each step</a>)</p>\n", o);
		ta_buf_free(&says);
	}
	if (p->findings && p->findings->nrows) {
		const struct ta_table *f = p->findings;
		long kind = col(f, "kind"), where = col(f, "where"), cost = col(f, "cost_us");
		long adv = col(f, "advice");
		size_t *by = costliest(f, cost, kind);

		size_t items[3], alike[3] = { 0, 0, 0 }, n_items = 0;

		/* the 3 costliest causes, a cause many ranks share (same kind
		 * and where) once, with how many ranks share it */
		for (k = 0; by && k < f->nrows; k++) {
			const char *kk = ta_table_cell(f, by[k], (size_t)kind)->s;
			const char *ww = ta_table_cell(f, by[k], (size_t)where)->s;

			for (i = 0; i < n_items; i++)
				if (strcmp(ta_table_cell(f, items[i], (size_t)kind)->s, kk) == 0 &&
				    strcmp(ta_table_cell(f, items[i], (size_t)where)->s, ww) == 0)
					break;
			if (i < n_items)
				alike[i]++;
			else if (n_items < 3)
				items[n_items++] = by[k];
		}
		fputs("<h3>The costliest causes</h3><ol class=\"findings\">", o);
		for (i = 0; i < n_items; i++) {
			size_t r = items[i];

			fprintf(o, "<li><b>rank %lld ", (long long)ta_table_cell(f, r, 0)->i);
			cell(o, f, r, (size_t)kind);
			fputs("</b> ", o);
			cell(o, f, r, (size_t)where);
			fputs(": ", o);
			finding_amount(o, f, r);
			if (alike[i])
				fprintf(o, " (and %zu more rank%s, each at most that)", alike[i],
					alike[i] == 1 ? "" : "s");
			fputs("<br><span class=\"advice\">", o);
			cell(o, f, r, (size_t)adv);
			fputs("</span></li>", o);
		}
		fputs("</ol>", o);
		free(by);
	}
	fputs("</section>\n", o);
}

/* The steps the job kept (each rank's step N is one step of the job),
 * from diagnose's rows; else the facts' count. */
static size_t job_steps(const struct ta_html_page *p, int64_t *first, int64_t *last)
{
	const struct ta_table *d = p->diagnose;
	long step_c = d ? col(d, "step") : -1;
	int64_t *v;
	size_t r, n = 0, k = 0;

	*first = *last = 0;
	if (step_c < 0 || !d->nrows)
		return p->steps;
	v = calloc(d->nrows, sizeof(*v));
	if (!v)
		return p->steps;
	for (r = 0; r < d->nrows; r++)
		if (!ta_table_cell(d, r, (size_t)step_c)->null)
			v[n++] = ta_table_cell(d, r, (size_t)step_c)->i;
	qsort(v, n, sizeof(*v), ta_cmp_i64);
	for (r = 0; r < n; r++)
		k += !r || v[r] != v[r - 1];
	if (n)
		*first = v[0], *last = v[n - 1];
	free(v);
	return k;
}

void ta_report_html(FILE *o, const struct ta_html_page *p)
{
	size_t i, steps;
	int64_t first, last;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	      "<title>traceanalyze report: ", o);
	esc(o, p->path);
	fputs("</title>\n", o);
	fputs(css, o);
	fputs("</head><body>\n<header><h1>traceanalyze report: ", o);
	esc(o, p->path);
	steps = job_steps(p, &first, &last);
	fprintf(o, "</h1><p class=\"meta\">%zu rank%s, %zu step%s analysed", p->ranks,
		p->ranks == 1 ? "" : "s", steps, steps == 1 ? "" : "s");
	if (steps > 1)
		fprintf(o, " (steps %lld to %lld)", (long long)first, (long long)last);
	else if (steps == 1)
		fprintf(o, " (step %lld)", (long long)first);
	fputs("; made by traceanalyze ", o);
	esc(o, p->version);
	fputs("</p>\n<details><summary>The traces, and every figure as CSV: the "
	      "commands</summary><p class=\"meta\">", o);
	esc(o, p->files);
	fputs("</p><pre>", o);
	for (i = 0; i < p->ncommands; i++) {
		esc(o, p->commands[i]);
		fputc('\n', o);
	}
	fputs("</pre></details></header>\n<main>\n", o);
	verdict(o, p);
	if (p->stragglers && p->stragglers->nrows)
		stragglers(o, p->stragglers);
	if (p->temporal)
		temporal(o, p->temporal);
	if (p->idle)
		idle(o, p->idle);
	if (p->overview)
		overview(o, p->overview, p->diagnose);
	if (p->diagnose)
		diagnose(o, p->diagnose, p->findings);
	kernels(o, p->types, p->kernels);
	comm(o, p->overlap, p->comm_steps);
	if (p->memory)
		memory(o, p->memory);
	if (p->snapshot && p->snapshot_series)
		snapshot(o, p->snapshot, p->snapshot_series);
	if (p->roofline)
		roofline(o, p->roofline, p->roofline_steps);
	if (p->modules && p->modules->nrows)
		ta_html_modules(o, p->modules);
	fputs("</main>\n", o);
	fputs(script, o);
	fputs("</body></html>\n", o);
}
