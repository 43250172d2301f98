/* Exposed communication: what computation waited for (exposed.c). */
#ifndef TA_EXPOSED_H
#define TA_EXPOSED_H

#include "analyses/common/intervals.h"
#include "ta_analyses.h"

struct ta_exposed {
	int64_t exposed;  /* communication that computation waited for */
	int64_t wait;     /* of it, the collectives' wait for a late peer */
};

/* Work other than communication, on a stream that carries none: when it
 * started and when it was launched (INT64_MAX: not known). Such work that
 * was queued before a collective ended and started as it ended was
 * waiting for it, whatever the host did next. */
struct ta_queued {
	int64_t start, launched;
};

/* A rank's GPU work, added by start, becomes its queue: the rows on
 * streams without communication; and the host's waits for the GPU. */
struct ta_queue {
	struct ta_queued *v;
	int64_t *stream;
	size_t n, cap;
	int64_t *comm_streams;
	size_t ncomm, capcomm;
	struct ta_queued *host;   /* the host's: returned, began */
	size_t nhost, caphost;
	int64_t *comm_ends;       /* when each collective kernel ended, sorted */
	size_t nends, capends;
	int64_t *copy_ends;       /* and each copy or memset */
	size_t ncopies, capcopies;
};

/* kind: TA_KIND_COMM, TA_KIND_MEMORY or other work. */
void ta_queue_add(struct ta_queue *q, int64_t stream, int kind,
		  int64_t start, int64_t end, int64_t launched);
/* The host waited for the GPU from began to returned (a blocking sync, a
 * spin of queries): it is queued work too. A collective whose wait for a
 * late peer ends in such a sync (all_reduce then .item()) held the host
 * back however long the host then took to launch more: without the
 * peer's delay, the sync and what followed it would have come sooner. */
void ta_queue_add_host(struct ta_queue *q, int64_t returned, int64_t began);
/* Drops the rows of streams that carry communication and merges in the
 * host's waits; q->v[0..n) is the queue, by start. */
void ta_queue_finish(struct ta_queue *q);
void ta_queue_reset(struct ta_queue *q);
void ta_queue_free(struct ta_queue *q);

/* queue: finished (ta_queue_finish). comm, comp and waits: disjoint groups in ascending order (ta_union) of
 * a rank's communication, computation and peer waits in one window. A
 * stretch in which communication runs and computation does not is
 * exposed when it ends with the communication and computation resumes
 * within resume_ns, or when work of queued (or a host sync) that was
 * launched before it ended starts within resume_ns of its end:
 * computation (or a copy it needs, or the host) was waiting for it, from
 * that launch (or the sync's start) on, not before; also a stretch that
 * computation ends, when a collective ended within resume_ns before, no
 * copy did, and that computation was launched before (nothing but that
 * collective can have held it: no computation ran; FSDP's all-gather
 * beside an all-reduce). Any
 * other such stretch is computation idle for the host's reasons, not
 * the network's. Each stretch, in order, goes to each(ctx, a, b,
 * exposed) when each is not NULL. */
void ta_exposed_comm(const struct ta_union *comm, const struct ta_union *comp,
		     const struct ta_queue *queue,
		     const struct ta_union *waits, int64_t resume_ns,
		     struct ta_exposed *out,
		     void (*each)(void *ctx, int64_t a, int64_t b, int exposed),
		     void *ctx);

/* A computation kernel: its name id, start and length; over: scratch;
 * slowed: what ta_comm_slowdown found it lost; at: the caller's. */
struct ta_comp_kernel {
	int64_t name, ts, dur, over, slowed, at;
};

/* How much longer computation ran because communication ran beside it:
 * each kernel overlapped by comm against the median length of the kernels
 * of its name that ran alone, for the part of it comm overlapped. NCCL
 * takes SMs and memory bandwidth, so bucketed DDP hides its all-reduces
 * and still costs the step: the step less the step without gradient sync
 * is this plus the exposed time. Reorders k. */
int64_t ta_comm_slowdown(struct ta_comp_kernel *k, size_t n,
			 const struct ta_union *comm);

/* Gradient sync's own ops, which launch work on the compute stream that
 * is absent under no_sync() (DDP's reducer scaling each bucket: ops named
 * torch::distributed::*), of the selected ranks: their times. */
struct ta_sync_ops {
	int64_t *v;          /* rank, start, end: by rank, then start */
	int64_t *reach;      /* the latest end of a rank's ops up to each */
	size_t n, at;
};

int ta_sync_ops_load(sqlite3 *db, struct ta_sync_ops *o, struct ta_error *err);
/* Whether work launched at l on rank was launched inside one of them
 * (asked in order of rank). */
int ta_sync_ops_launched(struct ta_sync_ops *o, int64_t rank, int64_t l);
void ta_sync_ops_free(struct ta_sync_ops *o);

#endif
