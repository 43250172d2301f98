/* What the critical path's walk (critical.c) and the join of its pieces
 * walked on shards (critical_join.c) share: what a path consists of, and
 * how a step's row and its items are written. */
#ifndef TA_CRITICAL_INT_H
#define TA_CRITICAL_INT_H

#include "ta_analyses.h"
#include "ta_intern.h"

/* The parts of a path, C_CPU to C_PEER, add up to it; time on another
 * rank's work counts as the part it is (that rank's cpu, kernels, ...)
 * and again in C_ON_PEERS, which is not a part: how much of the path the
 * home rank spent on other ranks' work. C_PEER is a wait for a late
 * member the walk cannot follow (its rank not analysed). */
enum cat { C_CPU, C_LAUNCH, C_COMPUTE, C_COMM, C_MEMORY, C_GAP, C_SYNC, C_PEER,
	   C_ON_PEERS, NCAT };
_Static_assert(C_ON_PEERS == TA_PATH_PARTS && NCAT == TA_PATH_COLS,
	       "ta_analyses.h's count of parts");

struct item {
	int kind;                   /* enum cat */
	char *name;
	int64_t ns, count;
};

/* A path's time by part, and its items in the order first met. */
struct acc {
	int64_t cat[NCAT];
	struct ta_intern *keys;     /* "KIND\x1fNAME" */
	struct item *items;
	size_t n;
	struct ta_buf key;          /* the key being looked up */
	struct ta_buf plain;        /* a name without its addresses */
};

/* Adds ns (> 0) and count to the item (kind, name). */
void cp_acc_item(struct acc *a, int kind, const char *name, int64_t ns,
		 int64_t count);
/* Frees a's items and starts it again, empty. */
void cp_acc_reset(struct acc *a);
void cp_acc_free(struct acc *a);

/* The tables ta_critical_run gives: with_what adds predicted_us. */
struct ta_table *cp_path_table(int with_what);
struct ta_table *cp_top_table(void);
/* One step's row of t (step < 0: none) and its ntop items with the most
 * time onto top; matched: path time of the --what-if items. Sorts a's
 * items. */
/* Warns on t when --what-if's items were on no step's path (any: some
 * were): a pattern that matches nothing predicts no change, silently. */
void cp_what_if_check(struct ta_table *t, const struct ta_critical_opts *o, int any);
/* With absent ranks (t->ranks_absent: their traces missing), a wait for
 * one of them is not measured: peer_wait_us is left empty, not 0. */
void cp_absent_waits(struct ta_table *t);
/* What a rank with no collective here leaves unmeasured (the warning's). */
#define ABSENT_WAIT "peer_wait_us, the wait for a member the path cannot follow, is"
/* busy: the step's GPU busy time, under which --what-if's prediction of
 * items that are not kernels does not go. */
void cp_emit(struct ta_table *t, struct ta_table *top,
	     const struct ta_critical_opts *o, struct acc *a, int64_t matched,
	     int64_t rank, int64_t step, int64_t len, int64_t busy, size_t ntop);

/* A piece of a path walked on a shard (ta_critical_pieces): a row for
 * the walk (P_KIND null), then a row per item. P_LEN and P_BUSY: the
 * step's length and GPU busy time, on the walk from its end (round one)
 * only; P_EXIT_*: where it goes on, null if it ends here. All in ns. */
enum piece_col { P_HOME, P_WALK, P_STEP, P_LEN, P_START, P_EXIT_RANK,
		 P_EXIT_TS, P_MATCHED, P_CAT, P_KIND = P_CAT + NCAT, P_NAME, P_NS,
		 P_COUNT, P_BUSY, P_NCOLS };

struct ta_table *cp_piece_table(void);

/* ta_critical_run's tables kept in a cache entry (critical_keep.c): read
 * for these options (1, *out and *top set; 0: none kept, or not whole),
 * and kept after a walk. */
int cp_kept(sqlite3 *db, const struct ta_query *q, const struct ta_critical_opts *o,
	    struct ta_table **out, struct ta_table **top);
void cp_keep(sqlite3 *db, const struct ta_query *q, const struct ta_critical_opts *o,
	     const struct ta_table *out, const struct ta_table *top);

#endif
