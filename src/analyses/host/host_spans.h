/* A rank's host ops and ranges (but the steps) held in memory, for the
 * searches that name a stretch of its time (ta_host_name): one pass over
 * the host view instead of a search through SQLite for each stretch,
 * which read a row per op it passed (a quarter of diagnose's time). */
#ifndef TA_HOST_SPANS_H
#define TA_HOST_SPANS_H

#include "ta_db.h"

struct ta_host_span {
	int64_t ts, end, dur, name, idx;   /* end: at most INT64_MAX */
	long prev;          /* the latest earlier span that ends later, -1 */
	int ranged;         /* a record_function range or a Python frame */
	int python;         /* a Python frame */
	int engine;         /* a task of autograd's engine (a backward op) */
	int amp;            /* GradScaler's ops: AMP_UNSCALE, AMP_UPDATE */
	int64_t pid, tid;   /* its thread; TA_NO_THREAD where not a number */
	int64_t reach;      /* the latest end of an op or Python frame among
			     * it and those before it (INT64_MIN: none) */
};

#define TA_NO_THREAD INT64_MIN
#define AMP_UNSCALE 1
#define AMP_UPDATE 2

struct ta_host_spans {
	struct ta_host_span *v;   /* in events_cpu's order: start, length, */
	size_t n, cap;            /* event */
	int64_t max_dur;          /* the longest (SQL's max: NULL is none) */
	int64_t max_engine;       /* the longest task of autograd's engine */
	int loaded;
	/* by thread, made at the first ta_host_spans_enclosing: the spans'
	 * indices by (pid, tid, order); each span's place there; the nearest
	 * earlier span of its thread that ends no earlier (-1) */
	int64_t *by_thread;
	long *place, *tprev;
	size_t *segs, nsegs;      /* where each thread's spans begin, and n */
};

/* Reads rank's spans; -1 on a database error. */
int ta_host_spans_load(sqlite3 *db, int64_t rank, struct ta_host_spans *s,
		       struct ta_error *err);
void ta_host_spans_free(struct ta_host_spans *s);
/* Sets each span's prev and reach (the load does; tests build spans by
 * hand). */
void ta_host_spans_link(struct ta_host_spans *s);

/* The innermost span covering [a, b] (the latest in order that starts by
 * a, ends at b or later and starts no earlier than a - max_dur); -1 if
 * none. */
long ta_host_spans_covering(const struct ta_host_spans *s, int64_t a, int64_t b);
/* The record_function range (else Python frame) over at least half of
 * [a, b] and at most 4 times as long, starting no earlier than 4 times
 * its length before a: the shortest, then the latest event; -1 if none. */
long ta_host_spans_overlapping(const struct ta_host_spans *s, int64_t a,
			       int64_t b);
/* Where ta_host_spans_overlapping finds none: the innermost
 * record_function range (else Python frame) over the whole of [a, b],
 * however long (a hole inside "## backward ##" is named so, not left
 * unnamed), of a thread whose tid is in tids (the launching threads':
 * by tid alone, as the calls' index has no pid), and not over the whole
 * of [outer_a, outer_b] (the step's window: a frame around every step,
 * like the step itself, says nothing of one); the shortest of the
 * threads'; -1 if none. Each thread's spans are searched outwards from
 * the hole along their own nesting: another thread's spans neither hide
 * nor cost. */
/* Whether autograd's engine ran its tasks (the backward's ops, on its
 * own thread) through at least half of [a, b]. */
int ta_host_spans_in_backward(const struct ta_host_spans *s, int64_t a, int64_t b);
/* The time in [a, b] some op or Python frame (not a range) ran, on any
 * thread. */
int64_t ta_host_spans_op_time(const struct ta_host_spans *s, int64_t a, int64_t b);
/* When thread tid (pid aside) last ended GradScaler's unscale (its check
 * of the gradients for inf) before t, with no update of the scaler since
 * (GradScaler.step then reads that check with .item()); INT64_MIN: none. */
int64_t ta_host_spans_after_unscale(const struct ta_host_spans *s, int64_t tid,
				    int64_t t);
struct ta_ids;
long ta_host_spans_enclosing(struct ta_host_spans *s, int64_t a, int64_t b,
			     const struct ta_ids *tids, int64_t outer_a,
			     int64_t outer_b);

#endif
