/* Collectives matched across ranks (the model's coll view): when each
 * member arrived, each rank's clock offset, and per rank and step how long
 * it waited for its peers and they for it (peers.c). Shared by stragglers
 * and diagnose. */
#ifndef TA_PEERS_H
#define TA_PEERS_H

#include "analyses/common/intervals.h"
#include "ta_analyses.h"

struct ta_peer_step {
	int64_t rank, step;
	int64_t comm_ns;       /* its matched collectives' kernel time */
	int64_t wait_ns;       /* its collectives waiting for the last member */
	int64_t late_ns;       /* the others waiting for it: arrival - earliest */
	int64_t ncoll, nlast;  /* matched collectives, and those it came last to */
	int64_t peer;          /* the rank it waited for longest, -1: none */
	int64_t peer_wait_ns;  /* that longest single wait */
	int64_t nuntimed;      /* of ncoll, those with no length (damaged):
				* comm_ns and wait_ns leave them out */
};

/* One collective's wait for its last member, on the rank's own clock;
 * peer_ts: when the last member's kernel started, on its clock; tid: the
 * host thread that issued it (-1: not known); done: when the collective
 * ended here; cpu: 1 for gloo's (a CPU range, not a kernel). */
struct ta_peer_wait {
	int64_t rank, step, ts, end, peer, peer_ts, tid, done, cpu;
	int64_t peer_done;  /* the last member's end, on its clock */
};

/* The largest lateness of any rank in a step. */
struct ta_peer_most {
	int64_t step, late_ns;
};

struct ta_peers {
	struct ta_peer_step *v;     /* by rank, then step */
	size_t n, cap;
	struct ta_peer_wait *waits; /* by rank, then ts */
	size_t nwaits;
	int64_t *reach;             /* per wait: the latest end of its rank's
				     * waits up to it (searches start by it) */
	int64_t *tids;              /* rank, tid: the threads that issued */
	size_t ntids;               /* collectives (-1: not known), sorted */
	int64_t *ranks, *offset_ns; /* every rank with collectives, its offset */
	int64_t *readings;          /* and the collectives it was read from */
	size_t nranks;
	struct ta_peer_most *most;  /* by step, over every rank */
	size_t nmost;
	size_t matched;     /* collectives matched over two or more ranks */
	size_t mismatched;  /* members disagreeing on name or size: left out */
	size_t untimed;     /* matched members with no length: no wait */
	size_t unpaired;    /* sends and recvs whose peer is not known */
	size_t partial;     /* matched without some members' traces */
	size_t lone;        /* on one rank only (a window edge): left out */
	int gloo;           /* the trace has gloo's collectives (CPU ranges, not matched) */
	size_t absent;      /* ranks a process group names that have no
			     * collective here (no trace): what they wait for
			     * and hold back is not measured */
	size_t max_group;   /* the largest group size known, 0: none known */
	size_t world;       /* the job's ranks as its traces say (INT64_MAX: not said) */
	int64_t *unmatched; /* rank, ts: the collectives matched with none, */
	size_t nunmatched, unmatched_cap;   /* sorted (their waits not measured) */
};

/* Builds the model's coll (every rank) and matches it. On a shard with
 * the gathered collectives attached ("peers", shard_run.c), the matching
 * ta_peers_save made there once: v and waits of the shard's own ranks,
 * the rest whole. */
int ta_peers_match(sqlite3 *db, const struct ta_query *q, struct ta_peers *p,
		   struct ta_error *err);
/* A rank's steps added up (--window span: one row a rank): the sums, the
 * peer it waited for longest in one go; *latest: how many of its steps it
 * came last to (late_ns above 0 and the step's most). */
void ta_peers_rank_total(const struct ta_peers *p, int64_t rank, struct ta_peer_step *sum,
			 size_t *latest);
/* What the matching found, said on t: missing ranks (t->ranks_absent, for
 * gates), collectives left out, each rank's clock offset. */
void ta_peers_say(struct ta_table *t, const struct ta_peers *p);
const struct ta_peer_step *ta_peers_find(const struct ta_peers *p,
					 int64_t rank, int64_t step);
/* rank's waits for late peers in [s, e], clipped, as a union (reset
 * first). */
void ta_peers_wait_union(const struct ta_peers *p, int64_t rank, int64_t s,
			 int64_t e, struct ta_union *u);
/* Whether host thread tid of rank issued a collective (one whose thread
 * is not known: any thread may have). */
int ta_peers_issued_on(const struct ta_peers *p, int64_t rank, int64_t tid);
/* A rank's exposed wait split by the peer it waited for. */
struct ta_peer_share {
	int64_t peer, ns;
};

struct ta_peer_shares {
	struct ta_peer_share *v;
	size_t n, cap;
};

/* Adds to s the time in [a, b) that rank's collectives waited for a late
 * peer, each instant once, to the peer of the wait over it that ended
 * last (two collectives waiting at once: the longer wait holds the rank):
 * the shares sum to ta_peers_wait_union's length over [a, b). */
void ta_peers_share_waits(const struct ta_peers *p, int64_t rank, int64_t a,
			  int64_t b, struct ta_peer_shares *s);
/* The same of gloo's waits alone (CPU ranges: idle GPU time may lie
 * under them, never under a collective kernel's). */
void ta_peers_cpu_wait_union(const struct ta_peers *p, int64_t rank, int64_t s,
			     int64_t e, struct ta_union *u);
void ta_peers_cpu_share_waits(const struct ta_peers *p, int64_t rank, int64_t a,
			      int64_t b, struct ta_peer_shares *s);
void ta_peer_shares_add(struct ta_peer_shares *s, int64_t peer, int64_t ns);
void ta_peers_free(struct ta_peers *p);
/* Whether rank's collective that started at ts was matched with none
 * (disagreeing, or a send or recv with no other half): its wait is
 * not measured. */
int ta_peers_unmatched(const struct ta_peers *p, int64_t rank, int64_t ts);
/* The latest end, past e, of rank's gloo collectives whose waits lie in
 * [s, e] (their transfer after the last member came), e if none; *ts:
 * that collective's start. */
int64_t ta_peers_cpu_done(const struct ta_peers *p, int64_t rank, int64_t s,
			  int64_t e, int64_t *ts);
/* How many of rank's matched collectives had no length (damaged): its
 * waits are not measured where they are (ta_peer_step.nuntimed). */
int64_t ta_peers_untimed(const struct ta_peers *p, int64_t rank);
/* The warning for them, on t (stragglers and comms through
 * ta_peers_say; diagnose and overlap, which read them as idle or as no
 * wait). */
void ta_peers_warn_untimed(struct ta_table *t, const struct ta_peers *p);
/* How many ranks the job's process groups name that have no collective
 * here (their traces missing, or left out by --ranks; at least 1 where
 * collectives of groups of several ranks matched nothing): 0 if none.
 * A wait for them is not measured, so it is not read as 0. */
size_t ta_peers_absent(const struct ta_peers *p);
/* The warning for them, on t, naming what is not measured (what), and
 * t->ranks_absent set: a gate on t trips. */
void ta_peers_warn_absent(struct ta_table *t, const struct ta_peers *p,
			  const char *what);
/* The same for n such ranks, counted elsewhere (critical-path's join of
 * its shards' rounds); nothing when n is 0. */
void ta_peers_warn_absent_n(struct ta_table *t, size_t n, const char *what);
/* rank's clock offset as the matching found it (every rank's, on a
 * shard too); 0 if it has none. */
int64_t ta_peers_offset(const struct ta_peers *p, int64_t rank);
/* The name of rank's gloo collective that started at ts (the model's
 * coll), in buf: 1, else 0 ("gloo collective" in buf). */
int ta_peers_cpu_name(sqlite3 *db, int64_t rank, int64_t ts, char *buf, size_t len);

#endif
