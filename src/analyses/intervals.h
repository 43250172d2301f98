/* Interval unions as HTA builds them (hta-semantics §9.1). */
#ifndef TA_INTERVALS_H
#define TA_INTERVALS_H

#include "ta.h"

struct ta_span {
	int64_t start, end;
};

/* Rows must be added in ascending ts. A row starts a new group when its
 * ts is strictly greater than the largest end of all earlier rows; each
 * group is [min ts, max end]. A negative duration can make end < start,
 * and such a group's length is counted as it is, like HTA does. */
struct ta_union {
	struct ta_span *v;
	size_t n, cap;
	int64_t cummax;
};

void ta_union_add(struct ta_union *u, int64_t ts, int64_t dur);
int64_t ta_union_length(const struct ta_union *u);
void ta_union_reset(struct ta_union *u);
void ta_union_free(struct ta_union *u);

/* numpy's round(x, n): half to even on x * 10^n. */
double ta_round(double x, int n);

#endif
