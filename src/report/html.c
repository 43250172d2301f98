/* report --html: one self-contained page (inline CSS and SVG, a few lines
 * of script for sorting tables; nothing fetched) drawn from the same rows
 * the analyses give in CSV: every figure sits above its table, whose
 * numbers are written as CSV writes them. */
#include "ta_html.h"
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
#define MANY_RANKS 32
/* ranks the first screen names one by one */
#define VERDICT_RANKS 8
#define WORST 8
#define BAR_W 560

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

/* A time for people: 3 or 4 significant figures, in µs, ms or s. */
static void fmt_us(char *buf, size_t len, double us)
{
	double a = fabs(us);

	if (a >= 1e6)
		snprintf(buf, len, "%.3f&#160;s", us / 1e6);
	else if (a >= 1e3)
		snprintf(buf, len, a >= 1e5 ? "%.1f&#160;ms" : a >= 1e4 ? "%.2f&#160;ms" : "%.3f&#160;ms",
			 us / 1e3);
	else
		snprintf(buf, len, a >= 100 ? "%.1f&#160;µs" : a >= 10 ? "%.2f&#160;µs" : "%.3f&#160;µs", us);
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
	fprintf(o, "<details%s><summary>The numbers (%zu row%s, as "
		"<code>--format csv</code> gives them", t->nrows <= 40 ? " open" : "",
		t->nrows, t->nrows == 1 ? "" : "s");
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

struct part {
	const char *label, *colour;
	double v;
};

/* One horizontal stacked bar: parts as shares of their sum. */
static void stacked(FILE *o, double y, const char *label, const struct part *p,
		    size_t n, const char *unit)
{
	double sum = 0, x = 120;
	size_t i;

	for (i = 0; i < n; i++)
		sum += p[i].v > 0 ? p[i].v : 0;
	fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\">", y + 13);
	esc(o, label);
	fputs("</text>", o);
	for (i = 0; i < n && sum > 0; i++) {
		double w = p[i].v > 0 ? BAR_W * p[i].v / sum : 0;

		if (w <= 0)
			continue;
		fprintf(o, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"18\" "
			"fill=\"%s\"><title>", x, y, w, p[i].colour);
		esc(o, label);
		fprintf(o, ": %s %.4g %s (%.1f %%)</title></rect>", p[i].label, p[i].v,
			unit, 100 * p[i].v / sum);
		x += w;
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
		x += 24 + 8.0 * (double)strlen(p[i].label);
	}
}

static void figure_open(FILE *o, double h, const char *alt)
{
	fputs("<figure><svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" "
	      "aria-label=\"", o);
	esc(o, alt);
	fprintf(o, "\" viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\">", BAR_W + 130,
		h, BAR_W + 130, h);
}

static void figure_close(FILE *o, const char *caption)
{
	fputs("</svg><figcaption>", o);
	esc(o, caption);
	fputs("</figcaption></figure>\n", o);
}

/* Ranks to draw: all, or the worst by a column when there are many. */
static size_t pick_rows(const struct ta_table *t, long by, size_t *rows)
{
	size_t n = 0, r, i, j;

	for (r = 0; r < t->nrows; r++)
		rows[n++] = r;
	if (n <= MANY_RANKS || by < 0)
		return n > MANY_RANKS ? MANY_RANKS : n;
	for (i = 0; i < WORST; i++)          /* a partial selection sort */
		for (j = i + 1; j < n; j++)
			if (num(t, rows[j], by) > num(t, rows[i], by)) {
				size_t x = rows[i];

				rows[i] = rows[j], rows[j] = x;
			}
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
	n = pick_rows(t, col(t, "idle_pct"), rows);
	fputs("<section id=\"temporal\"><h2>Where GPU time went</h2>\n", o);
	if (t->nrows > MANY_RANKS) {
		fprintf(o, "<p>%zu ranks: their spread, then the %zu with the most "
			"idle time.</p>", t->nrows, n);
		distribution(o, t, dist);
	}
	figure_open(o, 26.0 * (double)n + 30, "GPU time per rank: compute, "
		    "non-compute and idle, as shares of the analysis window");
	for (i = 0; i < n; i++) {
		p[0].v = num(t, rows[i], col(t, "compute_us"));
		p[1].v = num(t, rows[i], col(t, "non_compute_us"));
		p[2].v = num(t, rows[i], col(t, "idle_us"));
		snprintf(label, sizeof(label), "rank %lld",
			 (long long)ta_table_cell(t, rows[i], 0)->i);
		stacked(o, 26.0 * (double)i, label, p, 3, "us");
	}
	legend(o, 26.0 * (double)n + 8, p, 3);
	figure_close(o, "Per rank: GPU busy with compute kernels, busy with others "
		     "(communication, copies), and idle (temporal).");
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
	figure_open(o, 26.0 * (double)shown + 30, "Idle time per rank by cause: "
		    "host wait, kernel wait, other");
	for (i = 0; i < shown; i++) {
		struct part p[3];

		for (k = 0; k < 3; k++)
			p[k] = (struct part){ cats[k], colours[k], v[i][k] };
		snprintf(label, sizeof(label), "rank %lld", (long long)ranks[i]);
		stacked(o, 26.0 * (double)i, label, p, 3, "us");
	}
	{
		struct part p[3];

		for (k = 0; k < 3; k++)
			p[k] = (struct part){ cats[k], colours[k], 0 };
		legend(o, 26.0 * (double)shown + 8, p, 3);
	}
	figure_close(o, whole ? "Idle time per rank by cause: the time no stream "
		     "ran anything (idle's rows for the whole GPU)." :
		     "Idle time per rank by cause, over all its streams (idle).");
	table(o, t, "t-idle");
	fputs("</section>\n", o);
	free(ranks);
	free(v);
}

static const char *verdict_colour(const char *v)
{
	static const char *const names[] = { "compute-bound", "host-stalled",
		"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
		"unrecorded" };
	static const char *const colours[] = { C_GREEN, C_VERMILLION, C_ORANGE,
		C_BLUE, C_PURPLE, C_SKY, C_GREY };
	size_t i;

	for (i = 0; i < 7; i++)
		if (strcmp(v, names[i]) == 0)
			return colours[i];
	return C_GREY;
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

/* A strip per rank: one box per step, coloured by its verdict. */
static void diagnose(FILE *o, const struct ta_table *t, const struct ta_table *f)
{
	static const char *const names[] = { "compute-bound", "host-stalled",
		"launch-bound", "communication-bound", "copy-bound", "waiting-for-peer",
		"unrecorded" };
	long rank_c = col(t, "rank"), step_c = col(t, "step"), v_c = col(t, "verdict");
	int64_t last = INT64_MIN;
	size_t r, row = 0, x = 0, shown = 0, k;
	double h;

	for (r = 0; r < t->nrows; r++)
		if (r == 0 || ta_table_cell(t, r, (size_t)rank_c)->i != last)
			shown++, last = ta_table_cell(t, r, (size_t)rank_c)->i;
	if (shown > 4 * MANY_RANKS)
		shown = 4 * MANY_RANKS;
	h = 20.0 * (double)shown + 52;
	fputs("<section id=\"diagnose\"><h2>What bounds each step</h2>\n", o);
	figure_open(o, h, "Per rank, a box per step coloured by diagnose's verdict");
	last = INT64_MIN;
	for (r = 0; r < t->nrows; r++) {
		int64_t rank = ta_table_cell(t, r, (size_t)rank_c)->i;
		const struct ta_cell *step = ta_table_cell(t, r, (size_t)step_c);
		const char *v = ta_table_cell(t, r, (size_t)v_c)->s;

		if (r > 0 && rank != last)
			row++, x = 0;
		if (row >= shown)
			break;
		if (x == 0)
			fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\">"
				"rank %lld</text>", 20.0 * (double)row + 13, (long long)rank);
		fprintf(o, "<rect x=\"%zu\" y=\"%.0f\" width=\"22\" height=\"16\" "
			"fill=\"%s\"><title>rank %lld step %lld: ", 120 + 25 * x,
			20.0 * (double)row, verdict_colour(v), (long long)rank,
			step->null ? -1LL : (long long)step->i);
		esc(o, v);
		fputs("</title></rect>", o);
		x++;
		last = rank;
	}
	{
		struct part p[7];

		for (k = 0; k < 7; k++)
			p[k] = (struct part){ names[k], verdict_colour(names[k]), 0 };
		legend(o, 20.0 * (double)shown + 6, p, 4);
		legend(o, 20.0 * (double)shown + 26, p + 4, 3);
	}
	figure_close(o, "diagnose's verdict for each kept step of each rank "
		     "(hover a box for its step).");
	if (f && f->nrows) {
		long kind = col(f, "kind"), where = col(f, "where"), cost = col(f, "cost_us");
		long adv = col(f, "advice");
		char buf[64];
		size_t *by = costliest(f, cost, kind);

		fputs("<h3>Findings, costliest first</h3><ol class=\"findings\">", o);
		for (k = 0; k < f->nrows && k < 10; k++) {
			r = by[k];
			fputs("<li><b>", o);
			cell(o, f, r, (size_t)kind);
			fputs("</b> ", o);
			cell(o, f, r, (size_t)where);
			fmt_us(buf, sizeof(buf), num(f, r, cost));
			fprintf(o, ": <span class=\"n\">%s</span><br><span class=\"advice\">",
				buf);
			cell(o, f, r, (size_t)adv);
			fputs("</span></li>", o);
		}
		fputs("</ol>", o);
		free(by);
	}
	table(o, t, "t-diagnose");
	table(o, f, "t-findings");
	fputs("</section>\n", o);
}

/* Bars of one column, largest first (rows already sorted by the analysis). */
static void bars(FILE *o, const struct ta_table *t, const char *label_col,
		 const char *value_col, size_t max, const char *alt, const char *unit)
{
	long lc = col(t, label_col), vc = col(t, value_col);
	double top = 0;
	size_t r, n = t->nrows < max ? t->nrows : max;

	for (r = 0; r < n; r++)
		top = num(t, r, vc) > top ? num(t, r, vc) : top;
	figure_open(o, 22.0 * (double)n + 8, alt);
	for (r = 0; r < n; r++) {
		const char *s = ta_table_cell(t, r, (size_t)lc)->s;
		char shortl[96];
		double w = top > 0 ? (BAR_W - 80) * num(t, r, vc) / top : 0;
		/* 20 columns, cut between characters: %.20s split a UTF-8
		 * character and made the page invalid */
		size_t cut = s ? ta_utf8_prefix(s, 20) : 0;

		snprintf(shortl, sizeof(shortl), "%.*s", (int)(cut < 90 ? cut : 90),
			 s ? s : "");
		fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\" class=\"small\">",
			22.0 * (double)r + 13);
		esc(o, shortl);
		fprintf(o, "</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" height=\"16\" "
			"fill=\"%s\"><title>", 22.0 * (double)r, w, C_BLUE);
		esc(o, s);
		fprintf(o, ": %.6g %s</title></rect><text x=\"%.2f\" y=\"%.0f\" class=\"small\">"
			"%.4g</text>", num(t, r, vc), unit, 124 + w, 22.0 * (double)r + 13,
			num(t, r, vc));
	}
	fputs("</svg><figcaption>", o);
	esc(o, alt);
	fputs("</figcaption></figure>\n", o);
}

static void kernels(FILE *o, const struct ta_table *types, const struct ta_table *k)
{
	fputs("<section id=\"kernels\"><h2>GPU time by kernel type and kernel</h2>\n", o);
	if (types) {
		bars(o, types, "kernel_type", "total_us", 12, "GPU time per kernel type "
		     "(kernels --by type)", "us");
		table(o, types, "t-types");
	}
	if (k) {
		bars(o, k, "name", "total_us", 10, "The kernels with the most GPU time "
		     "(kernels)", "us");
		table(o, k, "t-kernels");
	}
	fputs("</section>\n", o);
}

/* Late time per rank and step as a heat map. */
static void stragglers(FILE *o, const struct ta_table *s)
{
	long rank_c = col(s, "rank"), step_c = col(s, "step"), late_c = col(s, "late_us");
	int64_t *ranks = calloc(s->nrows + 1, sizeof(*ranks)), *steps = calloc(s->nrows + 1,
									   sizeof(*steps));
	size_t nr = 0, ns = 0, r, i, j, shown;
	double top = 0;

	if (!ranks || !steps) {
		free(ranks), free(steps);
		return;
	}
	for (r = 0; r < s->nrows; r++) {
		int64_t rank = ta_table_cell(s, r, (size_t)rank_c)->i;
		int64_t step = ta_table_cell(s, r, (size_t)step_c)->null ? -1 :
			       ta_table_cell(s, r, (size_t)step_c)->i;

		for (i = 0; i < nr && ranks[i] != rank; i++)
			;
		if (i == nr)
			ranks[nr++] = rank;
		for (j = 0; j < ns && steps[j] != step; j++)
			;
		if (j == ns)
			steps[ns++] = step;
		top = num(s, r, late_c) > top ? num(s, r, late_c) : top;
	}
	shown = nr > 4 * MANY_RANKS ? 4 * MANY_RANKS : nr;
	if (shown < nr) {     /* many ranks: the latest ones, in rank order */
		double *tot = calloc(nr + 1, sizeof(*tot));
		int64_t *keep = calloc(nr + 1, sizeof(*keep));
		size_t k, m;

		if (!tot || !keep) {
			free(tot), free(keep), free(ranks), free(steps);
			return;
		}
		for (r = 0; r < s->nrows; r++)
			for (i = 0; i < nr; i++)
				if (ranks[i] == ta_table_cell(s, r, (size_t)rank_c)->i)
					tot[i] += num(s, r, late_c);
		for (k = 0; k < shown; k++) {  /* the shown latest, by selection */
			size_t best = 0;

			for (i = 1; i < nr; i++)
				if (tot[i] > tot[best])
					best = i;
			keep[k] = ranks[best];
			tot[best] = -1;
		}
		for (k = 1; k < shown; k++)
			for (m = k; m > 0 && keep[m - 1] > keep[m]; m--) {
				int64_t x = keep[m];

				keep[m] = keep[m - 1], keep[m - 1] = x;
			}
		memcpy(ranks, keep, shown * sizeof(*ranks));
		nr = shown;
		free(tot);
		free(keep);
	}
	fputs("<h3>Who keeps the others waiting</h3>\n", o);
	if (shown < s->nrows && nr == shown && shown == 4 * MANY_RANKS)
		fprintf(o, "<p>The %zu ranks the others waited for longest.</p>", shown);
	figure_open(o, 12.0 * (double)shown + 24, "Heat map of late_us per rank and "
		    "step: how long the others waited for the rank");
	for (r = 0; r < s->nrows; r++) {
		int64_t rank = ta_table_cell(s, r, (size_t)rank_c)->i;
		int64_t step = ta_table_cell(s, r, (size_t)step_c)->null ? -1 :
			       ta_table_cell(s, r, (size_t)step_c)->i;
		double v = num(s, r, late_c);

		for (i = 0; i < nr && ranks[i] != rank; i++)
			;
		for (j = 0; j < ns && steps[j] != step; j++)
			;
		if (i >= shown)
			continue;
		if (j == 0)
			fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\" "
				"class=\"small\">rank %lld</text>", 12.0 * (double)i + 9,
				(long long)rank);
		fprintf(o, "<rect x=\"%zu\" y=\"%.0f\" width=\"22\" height=\"10\" fill=\"%s\" "
			"fill-opacity=\"%.3f\"><title>rank %lld step %lld: late %.6g us"
			"</title></rect>", 120 + 24 * j, 12.0 * (double)i, C_VERMILLION,
			top > 0 ? 0.08 + 0.92 * v / top : 0.08, (long long)rank,
			(long long)step, v);
	}
	figure_close(o, "late_us per rank (rows) and step (columns): the darker, "
		     "the longer the other ranks waited for it (stragglers).");
	table(o, s, "t-stragglers");
	free(ranks);
	free(steps);
}

static void comm(FILE *o, const struct ta_table *ov, const struct ta_table *s)
{
	fputs("<section id=\"comm\"><h2>Communication</h2>\n", o);
	if (ov) {
		size_t r;
		long p = col(ov, "overlap_pct");
		int any = 0;

		for (r = 0; r < ov->nrows; r++)
			any |= num(ov, r, col(ov, "comm_us")) > 0;
		if (any && p >= 0) {
			figure_open(o, 22.0 * (double)(ov->nrows < MANY_RANKS ? ov->nrows :
						       MANY_RANKS) + 8,
				    "Share of communication time hidden under compute, per rank");
			for (r = 0; r < ov->nrows && r < MANY_RANKS; r++) {
				double v = num(ov, r, p);

				fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\">"
					"rank %lld</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" "
					"height=\"16\" fill=\"%s\"><title>rank %lld: %.4g %% "
					"overlapped</title></rect>", 22.0 * (double)r + 13,
					(long long)ta_table_cell(ov, r, 0)->i, 22.0 * (double)r,
					(BAR_W - 80) * v / 100, C_GREEN,
					(long long)ta_table_cell(ov, r, 0)->i, v);
			}
			figure_close(o, "overlap_pct per rank (overlap): the share of "
				     "communication kernel time during which compute ran.");
		} else {
			fputs("<p>No communication kernels.</p>", o);
		}
		table(o, ov, "t-overlap");
	}
	if (s)
		stragglers(o, s);
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
#define RF_Y1 320.0

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
	double cx = rf_x(x, i), cy = rf_y(y, f), rad = 3 + 12 * sqrt(gmax > 0 ? g / gmax : 0);
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
	figure_open(o, RF_Y1 + 42, "Roofline: each op's achieved TFLOP/s against its "
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
	figure_open(o, 22.0 * (double)n + 8, "MFU per step");
	for (r = 0; r < n; r++) {
		double v = num(s, r, m), w = (BAR_W - 80) * (v == v ? v : 0) / top;

		fprintf(o, "<text x=\"114\" y=\"%.0f\" text-anchor=\"end\" class=\"small\">"
			"rank %lld step %lld</text><rect x=\"120\" y=\"%.0f\" width=\"%.2f\" "
			"height=\"16\" fill=\"%s\"/><text x=\"%.2f\" y=\"%.0f\" class=\"small\">"
			"%.2f %%</text>", 22.0 * (double)r + 13, (long long)ta_table_cell(s, r, 0)->i,
			(long long)ta_table_cell(s, r, 1)->i, 22.0 * (double)r, w, C_BLUE, 124 + w,
			22.0 * (double)r + 13, v == v ? v : 0);
	}
	figure_close(o, "Model FLOPs utilisation per step (roofline --by step): the "
		     "step's FLOPs over its window, against the peak of its main type");
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
"body{font:15px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);"
"max-width:62rem;margin:1.5rem auto;padding:0 1rem}\n"
"h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid var(--line);"
"padding-bottom:.2rem;margin-top:2rem}\n"
"svg{max-width:100%;height:auto}svg text{fill:var(--fg);font-size:13px}"
"svg .small,svg .small text{font-size:11px}svg .grid{stroke:var(--line);stroke-width:1}\n"
"figure{margin:1rem 0}figcaption{color:var(--muted);font-size:.9rem}\n"
"table.data{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}"
"table.data th,table.data td{border:1px solid var(--line);padding:.15rem .4rem}"
"table.data th{cursor:pointer;text-align:left}table.data td{max-width:36rem;"
"overflow-wrap:anywhere}td.n{text-align:right;white-space:nowrap;"
"font-variant-numeric:tabular-nums}\n"
"dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}"
"dl.meta dt{color:var(--muted)}pre{overflow-x:auto;font-size:.8rem}\n"
".advice{color:var(--muted)}details summary{cursor:pointer;color:var(--muted)}\n"
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

/* The TensorBoard plugin's overview: each rank's average step by
 * category, its GPU summary, and what to do about it (people_overview.c's
 * lines, as a list). */
static void overview(FILE *o, const struct ta_table *s)
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
	n = pick_rows(s, col(s, "other_us"), rows);
	fputs("<section id=\"overview\"><h2>Step time by category (the TensorBoard "
	      "overview)</h2>\n", o);
	figure_open(o, 26.0 * (double)n + 48, "Each rank's average step, each moment "
		    "in the first category running then");
	for (i = 0; i < n; i++) {
		for (k = 0; k < 8; k++) {
			snprintf(name, sizeof(name), "%s_us", names[k]);
			p[k] = (struct part){ names[k], colours[k], num(s, rows[i], col(s, name)) };
		}
		snprintf(label, sizeof(label), "rank %lld",
			 (long long)ta_table_cell(s, rows[i], 0)->i);
		stacked(o, 26.0 * (double)i, label, p, 8, "us");
	}
	/* eight labels: two rows, inside the figure */
	legend(o, 26.0 * (double)n + 8, p, 4);
	legend(o, 26.0 * (double)n + 26, p + 4, 4);
	figure_close(o, "Per rank, the average kept step: kernel, memcpy, memset, "
		     "communication, runtime, dataloader, CPU exec, other (overview).");
	ta_people_overview(said, s);
	if (said->head.len) {
		char *line, *save = NULL;

		fputs("<ul class=\"overview\">", o);
		for (line = strtok_r(said->head.s, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			fputs("<li>", o);
			esc(o, line + strspn(line, " -"));
			fputs("</li>", o);
		}
		fputs("</ul>\n", o);
	}
	table(o, s, "t-overview");
	fputs("</section>\n", o);
	ta_table_free(said);
	free(rows);
}

/* Each rank's verdicts summed: the one of most steps (the first met on
 * a tie), its cause, and the means of the step and GPU busy share. */
struct rank_verdict {
	int64_t rank;
	size_t steps, same;
	const char *verdict, *cause;
	double step_us, busy, cause_us;
};

static size_t rank_verdicts(const struct ta_table *d, struct rank_verdict *v)
{
	long rank_c = col(d, "rank"), step_us = col(d, "step_us"), busy = col(d, "gpu_busy_pct");
	long verdict_c = col(d, "verdict"), cause_c = col(d, "main_cause");
	long cost_c = col(d, "cause_us");
	size_t n = 0, r, q;

	for (r = 0; r < d->nrows; r++) {
		int64_t rank = ta_table_cell(d, r, (size_t)rank_c)->i;
		const char *x = ta_table_cell(d, r, (size_t)verdict_c)->s;
		size_t same = 0;

		if (!n || v[n - 1].rank != rank)
			v[n++] = (struct rank_verdict){ rank, 0, 0, NULL, NULL, 0, 0, 0 };
		v[n - 1].steps++;
		v[n - 1].step_us += num(d, r, step_us);
		v[n - 1].busy += num(d, r, busy);
		for (q = r + 1 - v[n - 1].steps; q <= r; q++)
			same += strcmp(ta_table_cell(d, q, (size_t)verdict_c)->s, x) == 0;
		if (same > v[n - 1].same) {
			double cost = 0;

			/* the cause of its first such step, and what it cost in
			 * each of them, on average */
			for (q = r + 1 - v[n - 1].steps; q <= r; q++)
				if (strcmp(ta_table_cell(d, q, (size_t)verdict_c)->s, x) == 0) {
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
		fmt_us(a, sizeof(a), v[i].step_us / (double)v[i].steps);
		fprintf(o, "<li><b>rank %lld</b>: <span class=\"v\" style=\"border-color:%s\">",
			(long long)v[i].rank, verdict_colour(v[i].verdict));
		esc(o, v[i].verdict);
		fprintf(o, "</span> in %zu of %zu step%s (a step %s, GPU busy %.1f %%)",
			v[i].same, v[i].steps, v[i].steps == 1 ? "" : "s", a,
			v[i].busy / (double)v[i].steps);
		if (v[i].cause && strcmp(v[i].cause, "gpu_busy") != 0) {
			fmt_us(b, sizeof(b), v[i].cause_us);
			fputs(": ", o);
			esc(o, v[i].cause);
			fprintf(o, " (%s a step)", b);
		}
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
		fputs(" (<a href=\"#comm\">stragglers</a>)</p>\n", o);
		ta_buf_free(&says);
	}
	if (p->findings && p->findings->nrows) {
		const struct ta_table *f = p->findings;
		long kind = col(f, "kind"), where = col(f, "where"), cost = col(f, "cost_us");
		long adv = col(f, "advice"), steps = col(f, "steps");
		size_t *by = costliest(f, cost, kind);

		fputs("<h3>The costliest causes</h3><ol class=\"findings\">", o);
		for (k = 0; by && k < f->nrows && k < 3; k++) {
			size_t r = by[k];

			fmt_us(a, sizeof(a), num(f, r, cost));
			fprintf(o, "<li><b>rank %lld ", (long long)ta_table_cell(f, r, 0)->i);
			cell(o, f, r, (size_t)kind);
			fputs("</b> ", o);
			cell(o, f, r, (size_t)where);
			fprintf(o, ": <span class=\"n\">%s</span>", a);
			if (steps >= 0 && !ta_table_cell(f, r, (size_t)steps)->null)
				fprintf(o, " over %lld step%s",
					(long long)ta_table_cell(f, r, (size_t)steps)->i,
					ta_table_cell(f, r, (size_t)steps)->i == 1 ? "" : "s");
			fputs("<br><span class=\"advice\">", o);
			cell(o, f, r, (size_t)adv);
			fputs("</span></li>", o);
		}
		fputs("</ol>", o);
		free(by);
	}
	fputs("</section>\n", o);
}

void ta_report_html(FILE *o, const struct ta_html_page *p)
{
	size_t i;

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	      "<title>traceanalyze report: ", o);
	esc(o, p->path);
	fputs("</title>\n", o);
	fputs(css, o);
	fputs("</head><body>\n<header><h1>traceanalyze report</h1><dl class=\"meta\">", o);
	fputs("<dt>traces</dt><dd>", o);
	esc(o, p->files);
	fprintf(o, "</dd><dt>ranks</dt><dd>%zu</dd><dt>steps analysed</dt><dd>%zu</dd>",
		p->ranks, p->steps);
	fputs("<dt>made by</dt><dd>traceanalyze ", o);
	esc(o, p->version);
	fputs("</dd></dl>\n<details><summary>Every figure as CSV: the commands"
	      "</summary><pre>", o);
	for (i = 0; i < p->ncommands; i++) {
		esc(o, p->commands[i]);
		fputc('\n', o);
	}
	fputs("</pre></details></header>\n<main>\n", o);
	verdict(o, p);
	if (p->temporal)
		temporal(o, p->temporal);
	if (p->idle)
		idle(o, p->idle);
	if (p->overview)
		overview(o, p->overview);
	if (p->diagnose)
		diagnose(o, p->diagnose, p->findings);
	kernels(o, p->types, p->kernels);
	comm(o, p->overlap, p->stragglers);
	if (p->memory)
		memory(o, p->memory);
	if (p->snapshot && p->snapshot_series)
		snapshot(o, p->snapshot, p->snapshot_series);
	if (p->roofline)
		roofline(o, p->roofline, p->roofline_steps);
	fputs("</main>\n", o);
	fputs(script, o);
	fputs("</body></html>\n", o);
}
