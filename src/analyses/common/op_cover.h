/* The innermost CPU op over a launch call, sweeping by time: what
 * launch --by-op and kernels --by op name a kernel's op. */
#ifndef TA_OP_COVER_H
#define TA_OP_COVER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "ta.h"

struct ta_op {
	int64_t tid, ts, end, name;
	size_t ord;                 /* row order, for ties */
};

/* Ops by start; active: those begun and not yet over. */
struct ta_op_cover {
	struct ta_op *ops;
	size_t n, next;
	size_t *active, nactive;
};

/* Loads a rank's ops: sql takes the rank as ?1 and gives tid, ts, end,
 * name (an id) by start. */
int ta_op_cover_load(sqlite3 *db, const char *sql, int64_t rank,
		     struct ta_op_cover *c, struct ta_error *err);
/* The innermost op over [ts, end]: the latest to start of those that
 * hold it (on thread tid unless any_thread), the first of a tie; NULL if
 * none. Calls must come in time order. */
const struct ta_op *ta_op_cover_find(struct ta_op_cover *c, int64_t tid, int64_t ts,
				     int64_t end, int any_thread);
void ta_op_cover_free(struct ta_op_cover *c);

#endif
