/* The report's module section: the nn.Module tree of one rank (modules'
 * table), indented by depth, each module's forward and backward GPU time
 * as a bar. Deep trees are cut at the depth that keeps the section
 * short; the CSV command in the page's header has every row. */
#include "html_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 60
#define BAR_W 220.0

/* the deepest depth whose rows, with all shallower ones, fit MAX_ROWS */
static int64_t depth_cut(const struct ta_table *m, int64_t rank, long rc, long dc)
{
	int64_t d = 0;

	for (;; d++) {
		size_t n = 0, deeper = 0;

		for (size_t r = 0; r < m->nrows; r++) {
			if (ta_table_cell(m, r, (size_t)rc)->i != rank)
				continue;
			n += ta_table_cell(m, r, (size_t)dc)->i <= d + 1;
			deeper += ta_table_cell(m, r, (size_t)dc)->i > d;
		}
		if (!deeper || n > MAX_ROWS)
			return d;
	}
}

void ta_html_modules(FILE *o, const struct ta_table *m)
{
	long rc = ta_table_col(m, "rank"), pc = ta_table_col(m, "module");
	long dc = ta_table_col(m, "depth"), cc = ta_table_col(m, "calls");
	long hc = ta_table_col(m, "host_us"), fc = ta_table_col(m, "device_us");
	long bc = ta_table_col(m, "bwd_device_us");
	int64_t rank, cut;
	size_t shown = 0, all = 0, ranks = 0;
	double top = 0;
	char a[64], b[64], c[64];

	if (rc < 0 || pc < 0 || dc < 0 || !m->nrows)
		return;
	rank = ta_table_cell(m, 0, (size_t)rc)->i;
	for (size_t r = 0; r < m->nrows; r++) {
		ranks += !r || ta_table_cell(m, r, (size_t)rc)->i !=
				ta_table_cell(m, r - 1, (size_t)rc)->i;
		if (ta_table_cell(m, r, (size_t)rc)->i == rank) {
			double v = ta_html_num(m, r, fc) + ta_html_num(m, r, bc);

			all++;
			top = v > top ? v : top;
		}
	}
	cut = depth_cut(m, rank, rc, dc);
	fputs("<section id=\"modules\"><h2>Where the model's time went, module by "
	      "module</h2>\n<p>", o);
	fprintf(o, "Rank %lld", (long long)rank);
	if (ranks > 1)
		fprintf(o, " (of %zu ranks)", ranks);
	fputs(": each nn.Module's calls, host time, and the GPU time of the "
	      "launches inside it (forward) and of the backward ops its forward ops "
	      "led to (backward).", o);
	for (size_t r = 0; r < m->nrows; r++)
		shown += ta_table_cell(m, r, (size_t)rc)->i == rank &&
			 ta_table_cell(m, r, (size_t)dc)->i <= cut;
	if (shown < all)
		fprintf(o, " %zu of its %zu modules, down to depth %lld: every one is in "
			"the CSV.", shown, all, (long long)cut);
	fputs("</p>\n<style>.t-modules td,.t-modules th{padding:0 .6em;text-align:right;"
	      "white-space:nowrap}.t-modules td:first-child,.t-modules th:first-child"
	      "{text-align:left}</style>\n", o);
	fputs("<table class=\"data t-modules\"><thead><tr><th>module</th><th>calls</th>"
	      "<th>host</th><th>forward GPU</th><th>backward GPU</th>"
	      "<th><span style=\"color:" TA_HTML_BLUE "\">&#9632;</span> forward "
	      "<span style=\"color:" TA_HTML_ORANGE "\">&#9632;</span> backward</th>"
	      "</tr></thead><tbody>\n", o);
	for (size_t r = 0; r < m->nrows; r++) {
		const char *path = ta_table_cell(m, r, (size_t)pc)->s, *leaf;
		int64_t depth = ta_table_cell(m, r, (size_t)dc)->i;
		double f = ta_html_num(m, r, fc), bw = ta_html_num(m, r, bc);
		double wf = top > 0 ? BAR_W * f / top : 0, wb = top > 0 ? BAR_W * bw / top : 0;

		if (ta_table_cell(m, r, (size_t)rc)->i != rank || depth > cut || !path)
			continue;
		leaf = strrchr(path, '/');
		leaf = leaf ? leaf + 1 : path;
		fprintf(o, "<tr><td style=\"padding-left:%.1fem\" title=\"", 0.3 + 1.2 * (double)depth);
		ta_html_esc(o, path);
		fputs("\">", o);
		ta_html_esc(o, leaf);
		ta_html_us(a, sizeof(a), ta_html_num(m, r, hc));
		ta_html_us(b, sizeof(b), f);
		ta_html_us(c, sizeof(c), bw);
		fprintf(o, "</td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td>"
			"<td><svg width=\"%.0f\" height=\"12\" role=\"img\"><rect width=\"%.2f\" "
			"height=\"12\" fill=\"" TA_HTML_BLUE "\"/><rect x=\"%.2f\" width=\"%.2f\" "
			"height=\"12\" fill=\"" TA_HTML_ORANGE "\"/></svg></td></tr>\n",
			(long long)(cc >= 0 ? ta_table_cell(m, r, (size_t)cc)->i : 0), a, b, c,
			BAR_W + 2, wf, wf, wb);
	}
	fputs("</tbody></table>\n</section>\n", o);
}
