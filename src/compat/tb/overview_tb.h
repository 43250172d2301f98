/* What overview_tb.c's port of the plugin's step parser gives the other
 * --tb-compat views. */
#ifndef TB_OVERVIEW_H
#define TB_OVERVIEW_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "ta.h"

/* The steps window GPUMetricsParser is given: the first step's start to
 * the last one's end, after the device extension and the dropping of
 * trailing steps. 1 with a window, 0 without (no step left), -1 on a
 * database error. */
int tb_steps_window(sqlite3 *db, int64_t rank, double *start, double *end,
		    struct ta_error *err);

/* A time range, µs as the trace writes them. */
struct tb_range { double a, b; };

/* range_utils: the length of the ranges' union (v is sorted). */
double tb_ranges_union(struct tb_range *v, size_t n);

/* A communication node (event_parser.py, communication.py): an nccl: or
 * gloo: op, keyed by its External id (a later op of the same id replaces
 * it), its own range first in k and, with NCCL, the kernels of its
 * External id; k sorted by (start, -end). */
struct tb_comm_node {
	char *name;
	char *dims, *types;          /* Input Dims, Input type as written; NULL: absent */
	double start, end;
	struct tb_range *k, *real;   /* real: filled by the distributed view */
	size_t nk;
	int has_step;                /* 0: in no step (Python's None) */
	int64_t step;
};

/* One rank (the plugin's worker) as the distributed view reads it. */
struct tb_comm_rank {
	size_t nsteps;               /* the kept steps, after the device extension */
	int64_t *step_names;
	/* per step: OverallParser's communication_overlap (computation,
	 * overlap, communication, other) */
	double (*overlap)[4];
	int has_comm;                /* the Communication role has a range */
	struct tb_comm_node *nodes;  /* sorted by (start, -end) */
	size_t nnodes;
};

/* Reads rank from trace_x (the model prepared). */
int tb_comm_rank_load(sqlite3 *db, int64_t rank, struct tb_comm_rank *c,
		      struct ta_error *err);
void tb_comm_rank_free(struct tb_comm_rank *c);

#endif
