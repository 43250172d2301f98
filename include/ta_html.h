/* report --html (src/report/html.c): the page and what it is drawn from.
 * Any table may be NULL: its section is left out. */
#ifndef TA_HTML_H
#define TA_HTML_H

#include <stdio.h>

#include "ta_table.h"

struct ta_html_page {
	const char *path;            /* what was analysed, as given */
	const char *files;           /* the trace files, comma-separated */
	size_t ranks, steps;
	const char *version;
	const char *const *commands; /* the command lines behind the figures */
	size_t ncommands;
	const struct ta_table *temporal, *idle, *types, *kernels, *overlap;
	const struct ta_table *diagnose, *findings, *stragglers, *memory;
	const struct ta_table *snapshot;         /* memory SNAP's summary (its
						  * head: the verdict) */
	const struct ta_table *snapshot_series;  /* and its --series */
	/* roofline per op (its also: the summary per rank) and --by step */
	const struct ta_table *roofline, *roofline_steps;
	/* overview --summary: per rank, the average step by category and
	 * the GPU summary */
	const struct ta_table *overview;
	/* modules: the nn.Module tree, forward and backward */
	const struct ta_table *modules;
	/* overlap --by step: each rank's steps, computation and communication */
	const struct ta_table *comm_steps;
};

void ta_report_html(FILE *out, const struct ta_html_page *p);

#endif
