/* Each GPU row's launch call, the model's view launch (a correlation's
 * last call, by idx), from one read of a rank's calls in correlation
 * order, searched by halves: a LEFT JOIN with the view ran a correlated
 * search per row, most of what a rank's GPU rows cost to read. */
#ifndef TA_LAUNCHES_H
#define TA_LAUNCHES_H

#include "ta_db.h"

struct ta_launch_call {
	int64_t corr, ts, end;  /* end: INT64_MAX where the call has no duration */
	int has_ts;
};

struct ta_launches {
	struct ta_launch_call *v;
	size_t n, cap;
};

/* rank's calls (the model's calls view); -1 on a database error. */
int ta_launches_load(sqlite3 *db, int64_t rank, struct ta_launches *l,
		     struct ta_error *err);
/* The time of the call that launched correlation corr (a row's value):
 * 1 and *ts, or 0 when it has none, or its call no time. A correlation
 * of another type than integer has none (ingestion writes integers). */
int ta_launches_ts(const struct ta_launches *l, sqlite3_value *corr, int64_t *ts);
/* The same, and when the call returned (*end). */
int ta_launches_span(const struct ta_launches *l, sqlite3_value *corr,
		     int64_t *ts, int64_t *end);
void ta_launches_free(struct ta_launches *l);

#endif
