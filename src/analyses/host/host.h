/* What a rank's host was doing, for diagnose (host.c): the calls that
 * made it wait for the GPU (blocking syncs, and spins on queries), and
 * names for a stretch of its time (the op, range or Python frame over it,
 * the user's call site, the op that launched a kernel). */
#ifndef TA_HOST_H
#define TA_HOST_H

#include "host_spans.h"
#include "ta_db.h"

#define TA_SYNC_NO_TID INT64_MIN   /* a thread id that is no number */

struct ta_sync {       /* a blocking call, or a spin of queries */
	int64_t ts, end;
	int spin;          /* 1: a run of cudaEventQuery/cudaStreamQuery calls */
	int64_t tid;       /* TA_SYNC_NO_TID: not a number */
	int launcher;      /* its thread launches GPU work (ta_host_load) */
};

struct host_frame;

struct ta_host {
	sqlite3 *db;
	int64_t rank;
	struct ta_sync *syncs;        /* by start */
	size_t nsyncs, capsyncs;
	int64_t max_sync_dur;         /* the longest: searches stop by it */
	int64_t max_op_dur;           /* longest cpu_op, -1 until asked */
	int64_t max_range_dur;        /* longest range (not a step), likewise */
	struct ta_host_spans spans;   /* its ops and ranges, read at the first
				       * stretch named */
	struct ta_ids *launchers;     /* the threads that launch kernels,
				       * read at the first "within" asked */
	struct host_frame *frames;    /* the user's Python frames, by start, */
	size_t nframes, capframes;    /* read at the first call site asked */
	int frames_loaded;
	/* the name lookups' statements, prepared once: a prepare per
	 * lookup was half of diagnose on 2048 ranks (48,000 of them) */
	sqlite3_stmt *named[2];       /* the range over a call, a name by id */
};

/* A name's text by id into buf (left as it is where no label has the
 * id); -1 when the database failed. */
int ta_host_label(struct ta_host *h, int64_t id, char *buf, size_t len);

/* Loads rank's syncs; what was loaded for another rank goes. */
int ta_host_load(sqlite3 *db, int64_t rank, struct ta_host *h,
		 struct ta_error *err);
void ta_host_free(struct ta_host *h);
/* h as ta_host_load would load it, from another's syncs (diagnose's, for
 * the critical path that confirms it: a second load of the same rows)
 * when from holds rank of db; else 0 and h untouched. */
int ta_host_adopt(const struct ta_host *from, sqlite3 *db, int64_t rank,
		  struct ta_host *h);

/* The first sync that can end at a or later (syncs by start: none
 * before it, as none lasts longer than max_sync_dur). */
size_t ta_host_first_sync(const struct ta_host *h, int64_t a);
/* The sync (if any) that ends inside the GPU's idle hole [a, b], of
 * those keep(sync, ctx) accepts (keep NULL: any). */
const struct ta_sync *ta_host_sync_in(const struct ta_host *h, int64_t a,
				      int64_t b,
				      int (*keep)(const struct ta_sync *, const void *),
				      const void *ctx);

/* The functions below return -1 on a database error (the name would be
 * wrong), else 0 with a name (or a placeholder) in buf. */

/* With ops_too, the innermost CPU op or range covering [a, b] (the op
 * that synchronised); else the shortest record_function range (or Python
 * frame) over at least half of it and at most 4 times as long. */
int ta_host_name(struct ta_host *h, int64_t a, int64_t b, int ops_too,
		 char *buf, size_t len);
/* The range ta_host_name names [a, b] after (ops_too 0), and the part of
 * [a, b] it covers, [*lo, *hi]; where it names none, "within X" for the
 * innermost range X over the whole of [a, b], however long, on a thread
 * that launches GPU work and not over all of the step's window [sa, sb],
 * else TA_HOST_BACKWARD where autograd's engine ran the backward's ops
 * through at least half of it, else "(no annotation)" (these: the whole
 * of it). */
#define TA_HOST_BACKWARD "(backward ops, autograd's engine)"
/* A stretch of at least TA_HOST_IDLE_NS in which no op ran (a tenth of it
 * at most), in a trace with ops: the host waited or ran what the profiler
 * does not record. */
#define TA_HOST_IDLE "(no op ran)"
#define TA_HOST_IDLE_NS 1000000
/* How a sync that reads GradScaler's check for inf begins its name. */
#define TA_HOST_SCALER "GradScaler.step's inf check"
/* 1 if a sync of thread tid at ts reads GradScaler's check for inf: the
 * thread's first sync after its unscale (ta_host_spans_after_unscale),
 * which ended at lo or later (the step's start); 0 if not, -1 on a
 * database error. */
int ta_host_scaler_sync(struct ta_host *h, int64_t tid, int64_t lo, int64_t ts);
int ta_host_name_part(struct ta_host *h, int64_t a, int64_t b, int64_t sa,
		      int64_t sb, char *buf, size_t len, int64_t *lo, int64_t *hi);
/* The user's code over [a, b]: the innermost Python frame of the user's
 * own files, else the innermost record_function range; "" if none. */
int ta_host_call_site(struct ta_host *h, int64_t a, int64_t b, char *buf,
		      size_t len);
/* "aten::mm [[50257, 768], [768, 4]]": the op that launched the GPU work
 * of a correlation, with its input shapes. */
int ta_host_launching_op(struct ta_host *h, int64_t corr, char *buf, size_t len);

#endif
