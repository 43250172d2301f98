/* The roofline's parts: the calls it counts (roofline_walk.c), what they
 * are measured against (roofline.c), per op and kernel
 * (roofline_rows.c), per step and rank (roofline_mfu.c). */
#ifndef TA_ROOFLINE_INT_H
#define TA_ROOFLINE_INT_H

#include <sqlite3.h>

#include "flops.h"
#include "ta.h"
#include "ta_analyses.h"
#include "ta_db.h"
#include "ta_model.h"

/* One counted call: its work (known: its shapes fit its formula) and
 * its kernels' time. */
struct ta_roof_call {
	int64_t rank, ts;
	const char *op;       /* the walk's names: valid until ta_roof_free */
	int64_t op_id;        /* op's name id */
	char *shape;          /* Input Dims as written ("" for none) */
	int no_dims;          /* none written */
	char *types, *conc;   /* Input type, Concrete Inputs as written */
	int tf32;             /* a kernel of it ran fp32 data as TF32 */
	int known;
	int in_window;        /* launched in a kept step (all: no steps) */
	struct ta_work work;
	int64_t gpu_ns;
	int64_t kernel;       /* its longest kernel's name id; -1: none */
};

/* A launch of a counted call: its correlation's kernels are the call's. */
struct ta_roof_launch {
	int64_t rank, correlation;
	size_t call;
};

struct ta_roof {
	struct ta_roof_call *calls;
	size_t ncalls, cap_calls;
	struct ta_roof_launch *launches;
	size_t nlaunches, cap_launches;
	char **names;          /* the op names calls point to */
	size_t nnames;
};

/* Walks every selected rank's host rows (the model prepared with
 * TA_NEED_THREAD); every: all of the database's ranks are selected (a
 * walk that may be kept, roofline_keep.c). */
int ta_roof_walk(sqlite3 *db, int every, struct ta_roof *r, struct ta_error *err);
void ta_roof_free(struct ta_roof *r);

/* What the walk knows of a call, as it was walked or kept. */
struct ta_roof_raw {
	int64_t rank, ts, op, gpu_ns, kernel;
	int tf32;
	const char *dims, *types, *conc;
};

/* Appends a call to r (r->names[raw->op] is a counted op's name); its
 * index. */
size_t ta_roof_add_call(struct ta_roof *r, const struct ta_roof_raw *raw);
/* r's op names (by id, the counted ones; the rest NULL). */
int ta_roof_load_names(sqlite3 *db, struct ta_roof *r, struct ta_error *err);

/* The walk kept in a cache entry (roofline_keep.c): 1 and r filled
 * (names loaded) from it for the selected ranks; 0 where none is kept by
 * this build, 2 where the one kept does not hold together (r to be
 * emptied either way); -1 on a database error. */
int ta_roof_kept(sqlite3 *db, struct ta_roof *r, struct ta_error *err);
/* Keeps r, the walk of every rank, in db's cache entry (nothing for
 * another database, or one being written); over one this build kept
 * when that did not hold together (replace), else not. */
void ta_roof_keep(sqlite3 *db, const struct ta_roof *r, int replace);

/* A rank's GPU and its peaks (known: a table entry or both overrides;
 * found: deviceProperties named it). */
struct ta_roof_gpu {
	int64_t rank;
	int known, found;
	char name[96];
	struct ta_peaks p;
};

struct ta_roof_ctx {
	const struct ta_roofline_opts *o;
	struct ta_roof r;
	/* the calls by rank and time (by_op reorders r's calls: it runs
	 * last) */
	const struct ta_roof_call **by_time;
	struct ta_roof_gpu *gpus;   /* by rank */
	size_t ngpus;
};

extern const char *const ta_roof_bounds[];

const struct ta_roof_gpu *ta_roof_gpu_of(const struct ta_roof_ctx *c, int64_t rank);
/* The roof in FLOP/s at intensity i for dtype on g (peak: the type's
 * peak FLOP/s); 0 if unknown. */
double ta_roof_at(const struct ta_roof_gpu *g, const char *dtype, double i,
		  double *peak);
/* The first call of rank at or after ts in by_time. */
size_t ta_roof_first_at(const struct ta_roof_ctx *c, int64_t rank, int64_t ts);

/* Sets columns col.. of row r: intensity, gpu_us, tflops, gbps,
 * peak_pct, bound, peak_tflops, peak_gbps. */
void ta_roof_measures(struct ta_table *t, size_t r, size_t col, double flops,
		      double bytes, int known, int64_t gpu_ns, const char *dtype,
		      const struct ta_roof_gpu *g);

/* A count (FLOPs, bytes) as an integer cell; empty past int64. */
void ta_roof_set_count(struct ta_table *t, size_t r, size_t col, double v);

struct ta_table *ta_roof_by_op(sqlite3 *db, struct ta_roof_ctx *c);
int ta_roof_by_kernel(sqlite3 *db, struct ta_roof_ctx *c, struct ta_table **out,
		      struct ta_error *err);
int ta_roof_by_step(sqlite3 *db, struct ta_roof_ctx *c, struct ta_table **out,
		    struct ta_error *err);
/* Per rank, what text says of it (ta_people_roofline). */
int ta_roof_summary(sqlite3 *db, const struct ta_roof_ctx *c, struct ta_table **out,
		    struct ta_error *err);

#endif
