/* The roofline's parts: the calls it counts (roofline_walk.c) and what
 * they are measured against (roofline.c). */
#ifndef TA_ROOFLINE_INT_H
#define TA_ROOFLINE_INT_H

#include <sqlite3.h>

#include "flops.h"
#include "ta.h"
#include "ta_db.h"

/* One counted call: its work (known: its shapes fit its formula) and
 * its kernels' time. */
struct ta_roof_call {
	int64_t rank, ts;
	const char *op;       /* the walk's names: valid until ta_roof_free */
	char *shape;          /* Input Dims as written */
	int known;
	struct ta_work work;
	int64_t gpu_ns;
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
 * TA_NEED_THREAD). */
int ta_roof_walk(sqlite3 *db, struct ta_roof *r, struct ta_error *err);
void ta_roof_free(struct ta_roof *r);

#endif
