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
	/* streaming: keep only the open group (memory does not grow with the
	 * trace); closed groups only add to `closed`. Set before the first add. */
	int streaming;
	int64_t closed, first;
};

void ta_union_add(struct ta_union *u, int64_t ts, int64_t dur);
int64_t ta_union_length(const struct ta_union *u);
/* Start of the first group and end of the last (the span). */
int64_t ta_union_first_start(const struct ta_union *u);
int64_t ta_union_last_end(const struct ta_union *u);
void ta_union_reset(struct ta_union *u);
void ta_union_free(struct ta_union *u);

/* numpy's round(x, n): half to even on x * 10^n. */
double ta_round(double x, int n);


/* Sweep over several unions, one bit each (hta-semantics §9.3, §9.5):
 * every group becomes (start, +bit) and (end, -bit); points are taken in
 * the order union by union, starts then ends, and stably sorted by time.
 * After each point but the last, the time to the next point is credited
 * to the label "sum of bits running" (also when it is 0 long, which is how
 * HTA shows labels of no time). trunc_us: cut each segment to whole µs, as
 * HTA's astype(int) does. */
#define TA_SWEEP_LABELS 64
struct ta_sweep {
	int64_t dur[TA_SWEEP_LABELS];
	int seen[TA_SWEEP_LABELS];
};

void ta_sweep_run(struct ta_union *const *u, const int *bits, size_t n,
		  int trunc_us, struct ta_sweep *out);

/* The same sweep, fed row by row in ascending ts, each row to one of n
 * unions (n <= TA_SWEEPER_MAX). Points are swept as soon as no later row
 * can come before them, and swept groups are dropped, so memory holds
 * only recent groups; the result is ta_sweep_run's, to the nanosecond.
 * That needs every duration >= 0 (a negative one puts a group's end
 * before points already swept): stream = 0 keeps every group to the end
 * instead, for rows that may have one. */
#define TA_SWEEPER_MAX 4
struct ta_sweeper {
	size_t n;
	int bits[TA_SWEEPER_MAX];
	int trunc_us;
	struct ta_union u[TA_SWEEPER_MAX];     /* groups not yet dropped */
	size_t next_start[TA_SWEEPER_MAX], next_end[TA_SWEEPER_MAX];
	int64_t dropped[TA_SWEEPER_MAX];       /* length of dropped groups */
	int stream, started, running, finished;
	int64_t last_t;
	struct ta_sweep out;                    /* accumulates over resets */
};

void ta_sweeper_init(struct ta_sweeper *s, const int *bits, size_t n,
		     int trunc_us, int stream);
void ta_sweeper_add(struct ta_sweeper *s, size_t which, int64_t ts,
		    int64_t dur);
/* Sweeps what is left; then out holds the result since init. */
void ta_sweeper_finish(struct ta_sweeper *s);
/* Union `which`'s length (ta_union_length) since the last reset. */
int64_t ta_sweeper_length(const struct ta_sweeper *s, size_t which);
/* Finishes, and starts a new, separate sweep (the next rank); out keeps
 * adding up. */
void ta_sweeper_reset(struct ta_sweeper *s);
void ta_sweeper_free(struct ta_sweeper *s);

#endif
