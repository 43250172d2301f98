/* The report's distributed chart: per rank, each kept step as computation
 * alone, overlapping, communication alone and other (overlap --by step),
 * the TensorBoard plugin's Computation/Communication chart right on
 * today's traces. Many ranks or steps: the first ones; the CSV command in
 * the page's header has every row. */
#include "html_int.h"

#include <stdio.h>
#include <string.h>

#define MAX_STEPS 8    /* bars per rank */
#define MAX_BARS 64    /* bars in all */

void ta_html_comm_steps(FILE *o, const struct ta_table *t)
{
	static const char *const cols[] = { "computation_us", "overlapping_us",
					    "communication_us", "other_us" };
	static const char *const labels[] = { "computation", "overlapping",
					      "communication alone", "other" };
	static const char *const colours[] = { TA_HTML_BLUE, TA_HTML_GREEN,
					       TA_HTML_VERMILLION, TA_HTML_GREY };
	long rc = ta_table_col(t, "rank"), sc = ta_table_col(t, "step");
	long tc = ta_table_col(t, "step_us"), c[4];
	struct ta_html_part p[4];
	size_t r, bars = 0, k, ranks = 0, per = 0;
	int64_t rank = 0;
	double y = 0;

	if (rc < 0 || sc < 0 || tc < 0 || !t->nrows)
		return;
	for (k = 0; k < 4; k++)
		if ((c[k] = ta_table_col(t, cols[k])) < 0)
			return;
	/* the bars drawn: up to MAX_STEPS of each rank, MAX_BARS in all */
	for (r = 0; r < t->nrows && bars < MAX_BARS; r++) {
		if (!r || ta_table_cell(t, r, (size_t)rc)->i != rank) {
			rank = ta_table_cell(t, r, (size_t)rc)->i;
			per = 0;
			ranks++;
		}
		if (per++ < MAX_STEPS)
			bars++;
	}
	fputs("<h3>Computation and communication per step</h3>\n", o);
	(void)ranks;
	ta_html_figure(o, 24.0 * (double)bars + 48, "Each rank's kept steps: "
		       "computation alone, overlapping, communication alone, other");
	per = 0;
	for (r = 0, bars = 0; r < t->nrows && bars < MAX_BARS; r++) {
		char label[64], total[64];

		if (!r || ta_table_cell(t, r, (size_t)rc)->i != rank) {
			rank = ta_table_cell(t, r, (size_t)rc)->i;
			per = 0;
		}
		if (per++ >= MAX_STEPS)
			continue;
		for (k = 0; k < 4; k++)
			p[k] = (struct ta_html_part){ labels[k], colours[k],
						      ta_html_num(t, r, c[k]) };
		if (ta_table_cell(t, r, (size_t)sc)->null)
			snprintf(label, sizeof(label), "rank %lld", (long long)rank);
		else
			snprintf(label, sizeof(label), "rank %lld step %lld", (long long)rank,
				 (long long)ta_table_cell(t, r, (size_t)sc)->i);
		ta_html_us(total, sizeof(total), ta_html_num(t, r, tc));
		ta_html_stacked(o, y, label, p, 4, total);
		y += 24;
		bars++;
	}
	ta_html_pct_axis(o, y);
	ta_html_legend(o, y + 26, p, 4);
	ta_html_figure_end(o, "Each kept step's time: compute kernels alone, beside "
			   "collectives, collectives alone (not communication's whole "
			   "cost: collectives slow the computation beside them; see "
			   "exposed_us), and neither (overlap --by step).");
}
