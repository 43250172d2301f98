/* Analyses: options in, a result table out. They read only the database. */
#ifndef TA_ANALYSES_H
#define TA_ANALYSES_H

#include <sqlite3.h>

#include "ta_table.h"

/* What every analysis is asked. */
struct ta_query {
	int hta_compat;          /* reproduce HTA 0.6.1 number for number */
	const int64_t *ranks;    /* NULL: every rank */
	size_t nranks;
};

/* Kernel classes (hta-semantics §8); bits so overlaps can be labelled. */
enum ta_kind {
	TA_KIND_COMPUTE = 1, TA_KIND_COMM = 2, TA_KIND_MEMORY = 4,
	TA_KIND_OTHER = 8
};

/* Builds TEMP TABLE dev: the device rows an analysis works on, for the
 * selected ranks, after the step window; and TEMP TABLE sel_ranks.
 * Columns: rank, idx, name (names.name_id), ts, dur (ns), stream,
 * correlation, kind (enum ta_kind), idle_kernel (0/1), launch_ts (ns of
 * the launching call, NULL when unknown). Every HTA rule that differs
 * from the default lives in this one place (rows.c). */
int ta_rows_prepare(sqlite3 *db, const struct ta_query *q, struct ta_error *err);

/* Kernel class of a GPU activity by name and category. */
enum ta_kind ta_classify(const char *name, const char *cat, int hta_compat);

int ta_temporal_run(sqlite3 *db, const struct ta_query *q,
		    struct ta_table **out, struct ta_error *err);

struct ta_kernels_opts {
	int by_type;             /* time per kernel type and overlap label */
	int top;                 /* names kept per rank and type (10) */
	double duration_ratio;   /* share of time the kept names cover (0.8) */
	int include_memory;      /* analyse MEMORY kernels too (1) */
	int for_people;          /* text: largest first within rank and type */
};

int ta_kernels_run(sqlite3 *db, const struct ta_query *q,
		   const struct ta_kernels_opts *o, struct ta_table **out,
		   struct ta_error *err);

int ta_overlap_run(sqlite3 *db, const struct ta_query *q,
		   struct ta_table **out, struct ta_error *err);

struct ta_idle_opts {
	int64_t kernel_wait_ns;   /* gaps shorter than this are kernel wait */
	const int64_t *streams;   /* NULL: every stream */
	size_t nstreams;
	int stats;                /* per-interval statistics instead */
	int for_people;           /* text: largest first, summary per rank */
};

int ta_idle_run(sqlite3 *db, const struct ta_query *q,
		const struct ta_idle_opts *o, struct ta_table **out,
		struct ta_error *err);

#endif
