/* What overview_tb.c's port of the plugin's step parser gives the other
 * --tb-compat views. */
#ifndef TB_OVERVIEW_H
#define TB_OVERVIEW_H

#include <sqlite3.h>
#include <stdint.h>

#include "ta.h"

/* The steps window GPUMetricsParser is given: the first step's start to
 * the last one's end, after the device extension and the dropping of
 * trailing steps. 1 with a window, 0 without (no step left), -1 on a
 * database error. */
int tb_steps_window(sqlite3 *db, int64_t rank, double *start, double *end,
		    struct ta_error *err);

#endif
