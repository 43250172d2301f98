/* What html.c shares with the page's sections in files of their own. */
#ifndef TA_HTML_INT_H
#define TA_HTML_INT_H

#include <stdio.h>

#include "ta_table.h"

#define TA_HTML_BLUE "#0072B2"
#define TA_HTML_ORANGE "#E69F00"
#define TA_HTML_GREEN "#009E73"
#define TA_HTML_VERMILLION "#D55E00"
#define TA_HTML_GREY "#999999"
/* how many ranks a figure draws (html.c's) */
#define TA_HTML_MANY_RANKS 32

/* text into HTML, escaped */
void ta_html_esc(FILE *o, const char *s);
/* a number cell of t (0 when empty or c < 0) */
double ta_html_num(const struct ta_table *t, size_t r, long c);
/* a time for people: 3 or 4 significant figures in µs, ms or s */
void ta_html_us(char *buf, size_t len, double us);

/* A part of a stacked bar. */
struct ta_html_part {
	const char *label, *colour;
	double v;
};

/* A horizontal bar of parts at y, as shares of their sum, total (a time,
 * ta_html_us's) after it; the legend of parts; a figure of height h and
 * its end with the caption; the 0-100 % scale at y. */
void ta_html_stacked(FILE *o, double y, const char *label, const struct ta_html_part *p,
		     size_t n, const char *total);
void ta_html_legend(FILE *o, double y, const struct ta_html_part *p, size_t n);
void ta_html_figure(FILE *o, double h, const char *alt);
void ta_html_figure_end(FILE *o, const char *caption);
void ta_html_pct_axis(FILE *o, double y);

/* Each rank's kept steps as computation, overlapping, communication
 * alone and other (overlap --by step): html_comm_steps.c. */
void ta_html_comm_steps(FILE *o, const struct ta_table *t);

/* The nn.Module tree (modules' table): html_modules.c. */
void ta_html_modules(FILE *o, const struct ta_table *m);

#endif
