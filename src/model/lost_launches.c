/* Kernel launches whose kernels the trace lacks, thread by thread: the
 * profiler recorded none of a side thread's kernels (helper-59: a Python
 * thread's EMA update, 490 launches and no kernel of theirs, its memsets
 * and copies there), and every GPU number then leaves that work out
 * without a word. Sampled (one launch in LOST_SAMPLE, by row): a cached
 * command pays a few milliseconds, not a lookup a launch. Said here too,
 * once a connection: kernels with no launch, and the device rows' GPU
 * events recorded twice or of negative length (dev_fill.c counts them). */
#include "model_int.h"

#include <pthread.h>

#define LOST_SAMPLE "16"
#define LOST_MIN 8          /* sampled launches a thread needs to be judged */
#define SAID_MAX 64

static const char lost_sql[] =
"SELECT c.rank, c.tid, count(*), sum(NOT EXISTS (SELECT 1 FROM dev_all d"
"  WHERE d.rank = c.rank AND d.correlation = c.correlation))"
" FROM main.events c WHERE c.role = " TA_SQL(TA_ROLE_RUNTIME)
"  AND c.rank IN (SELECT rank FROM temp.sel_ranks) AND c.correlation >= 0"
"  AND c.name IN (SELECT name_id FROM main.names WHERE name GLOB '*LaunchKernel*')"
"  AND c.rowid % " LOST_SAMPLE " = 0 AND typeof(c.tid) = 'integer'"
" GROUP BY c.rank, c.tid";

/* The other way: kernels with no launch call (the runtime and driver
 * calls not recorded: older Kineto missed Triton's cuLaunchKernel);
 * their windows shrink and their ops are not known (helper-66: a planted
 * sleep's step lost it). Sampled by row as above. */
static const char unlaunched_sql[] =
"SELECT d.rank, count(*), sum(d.launch_ts IS NULL) FROM dev_all d"
" WHERE d.ord % " LOST_SAMPLE " = 0 AND d.kind = " TA_SQL(TA_KIND_COMPUTE)
" GROUP BY d.rank";

/* Each (rank, thread) said once a process: report's threads and a
 * directory's shards each ask on a connection of their own. */
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t said[SAID_MAX][2];
static size_t nsaid;

static int first_time(int64_t rank, int64_t tid)
{
	size_t i;
	int first = 1;

	pthread_mutex_lock(&said_lock);
	for (i = 0; i < nsaid && first; i++)
		first = !(said[i][0] == rank && said[i][1] == tid);
	if (first && nsaid < SAID_MAX) {
		said[nsaid][0] = rank;
		said[nsaid][1] = tid;
		nsaid++;
	}
	pthread_mutex_unlock(&said_lock);
	return first;
}

void ta_model_warn_lost_launches(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	/* once a connection; a failure is no answer, and no warning */
	if (ta_db_int(db, "SELECT count(*) FROM temp.sqlite_master"
		      " WHERE name = 'launches_checked'", 1) != 0 ||
	    sqlite3_exec(db, "CREATE TEMP TABLE launches_checked (x)", NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, lost_sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		int64_t n = sqlite3_column_int64(st, 2), lost = sqlite3_column_int64(st, 3);

		if (n >= LOST_MIN && 2 * lost > n && first_time(rank, tid))
			ta_warn("rank %lld: thread %lld launched kernels the trace holds "
				"no GPU activity for (%lld of %lld launches sampled): the "
				"profiler recorded none of them, so GPU time leaves that "
				"work out", (long long)rank, (long long)tid,
				(long long)lost, (long long)n);
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, unlaunched_sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int64_t n = sqlite3_column_int64(st, 1), lost = sqlite3_column_int64(st, 2);

		/* thread -1: the rank's kernels, said once too */
		if (n >= LOST_MIN && 2 * lost > n && first_time(rank, -1))
			ta_warn("rank %lld: %lld of %lld kernels sampled have no launch "
				"call in the trace (the runtime and driver calls were not "
				"recorded): the ops that launched them are not known, and "
				"the steps' windows, which follow launches, may be short",
				(long long)rank, (long long)lost, (long long)n);
	}
	sqlite3_finalize(st);
	st = NULL;
	/* GPU rows recorded twice, counted once (dev_fill.c) */
	if (sqlite3_prepare_v2(db, "SELECT rank, n, negative FROM dev_repeats WHERE rank IN"
			       " (SELECT rank FROM temp.sel_ranks) ORDER BY rank", -1, &st,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		long long rank = sqlite3_column_int64(st, 0);

		if (sqlite3_column_int64(st, 1) > 0 && first_time(rank, -2))
			ta_warn("rank %lld: %lld GPU events recorded twice (the same "
				"name, stream, start, length and correlation): the GPU's "
				"time counts each once (ops and roofline, which read every "
				"event, twice)", rank, (long long)sqlite3_column_int64(st, 1));
		/* helper-66: a compute kernel's -5 us read 0 without a word */
		if (sqlite3_column_int64(st, 2) > 0 && first_time(rank, -3))
			ta_warn("rank %lld: %lld GPU events have a negative duration "
				"(a damaged trace): counted as 0 long", rank,
				(long long)sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
}
