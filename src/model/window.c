/* The analysis window of each rank (default rules; --hta-compat and
 * --window span use first-to-last GPU activity, as HTA does).
 *
 * The kept steps are the rank's ProfilerStep#N ranges but the last when
 * there are two or more. A kept step's window runs from the end of the
 * previous step's window (the first: the later of its CPU start and the
 * end of the GPU work launched before it) to the later of its CPU end and
 * the end of the GPU work launched inside it. So windows are contiguous:
 * a host stall at a step's start or end is that step's idle time, and a
 * GPU-bound pipeline (the CPU running ahead) shows no false idle. A rank
 * without steps: its first to last GPU activity.
 *
 *   step_win (rank, step, ts, end_ts)   each kept step's window
 *   span (rank, ts, end_ts)             the union of a rank's windows */
#include "model_int.h"

#include <stdlib.h>

struct step {
	int64_t step, ts, end, gpu_end;
	int64_t reach; /* the latest end of this and every earlier step */
};

/* A rank's kept steps, in time order, and the end of the GPU work
 * launched before the first; first_corr: the correlation of the first
 * launch call in the trace (work with a smaller one and no call was
 * launched before the trace began: warm-up's), -1 if none. */
struct rank_steps {
	int64_t rank, before, first_corr;
	struct step *v;
	size_t n;
};

static int load_steps(sqlite3_stmt *st, struct rank_steps *r,
		      struct ta_error *err)
{
	size_t cap = 0;
	int rc;

	sqlite3_bind_int64(st, 1, r->rank);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->n == cap) {
			cap = cap ? 2 * cap : 16;
			r->v = ta_xrealloc(r->v, cap * sizeof(*r->v));
		}
		r->v[r->n] = (struct step){ sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
			INT64_MIN, 0 };
		r->n++;
	}
	sqlite3_reset(st);
	if (r->n >= 2)
		r->n--; /* the last step is cut short by the profiler */
	for (size_t k = 0; k < r->n; k++)
		r->v[k].reach = k && r->v[k - 1].reach > r->v[k].end ?
				r->v[k - 1].reach : r->v[k].end;
	r->before = INT64_MIN;
	return ta_db_done(sqlite3_db_handle(st), rc, err);
}

/* The step that work launched at l belongs to: the first whose end is
 * after l (what a walk over the work in launch order finds), if l is not
 * before its start. reach is sorted, so a binary search finds it. */
static struct step *step_of(struct rank_steps *r, int64_t l)
{
	size_t lo = 0, hi = r->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->v[mid].reach > l)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < r->n && l >= r->v[lo].ts ? &r->v[lo] : NULL;
}

static struct rank_steps *find_rank(struct rank_steps *rs, size_t n,
				    int64_t rank)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs[mid].rank == rank)
			return &rs[mid];
		if (rs[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The end of the GPU work launched inside each step (launched: its
 * launch call's start, or its own start when none was recorded), and of
 * the work launched before the first. One pass over dev in any order: a
 * sort of every row by launch time cost more than the rest together. */
static int gpu_ends(sqlite3 *db, struct rank_steps *rs, size_t n,
		    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	struct rank_steps *r = NULL;
	int rc;

	if (ta_db_prepare(db, "SELECT rank, COALESCE(launch_ts, ts), ts + dur,"
			  " launch_ts IS NULL AND correlation >= 0, correlation"
			  " FROM dev", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t rank = sqlite3_column_int64(st, 0);
		int64_t l = sqlite3_column_int64(st, 1);
		int64_t end = sqlite3_column_int64(st, 2);
		struct step *k;

		if (!r || r->rank != rank)
			r = find_rank(rs, n, rank);
		if (!r || r->n == 0)
			continue;
		/* warm-up's work, running into the first step: before it */
		if (sqlite3_column_int(st, 3) && r->first_corr >= 0 &&
		    sqlite3_column_int64(st, 4) < r->first_corr)
			l = INT64_MIN;
		if (l < r->v[0].ts) {
			if (end > r->before)
				r->before = end;
		} else if ((k = step_of(r, l)) && end > k->gpu_end) {
			k->gpu_end = end;
		}
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc, err);
}

static int put(sqlite3_stmt *st, int64_t rank, int64_t step, int64_t ts,
	       int64_t end)
{
	sqlite3_bind_int64(st, 1, rank);
	sqlite3_bind_int64(st, 2, step);
	sqlite3_bind_int64(st, 3, ts);
	sqlite3_bind_int64(st, 4, end);
	if (sqlite3_step(st) != SQLITE_DONE)
		return -1;
	sqlite3_reset(st);
	return 0;
}

static int rank_windows(sqlite3 *db, sqlite3_stmt *ins,
			const struct rank_steps *r, struct ta_error *err)
{
	const struct step *v = r->v;
	int64_t prev = 0;

	if (r->n > 0)
		prev = r->before > v[0].ts ? r->before : v[0].ts;
	for (size_t k = 0; k < r->n; k++) {
		int64_t end = v[k].end;

		if (v[k].gpu_end > end)
			end = v[k].gpu_end;
		if (end < prev) /* the previous step's work outlasts this one */
			end = prev;
		if (put(ins, r->rank, v[k].step, prev, end) < 0)
			return ta_db_done(db, SQLITE_ERROR, err);
		prev = end;
	}
	return 0;
}

/* Every selected rank's steps (ranks in order), then one pass over the
 * GPU work, then the windows. */
static int step_windows(sqlite3 *db, struct ta_error *err)
{
	sqlite3_stmt *ranks = NULL, *steps = NULL, *ins = NULL;
	struct rank_steps *rs = NULL;
	size_t n = 0, cap = 0, i;
	int rc = -1, step;

	if (ta_db_prepare(db, "SELECT s.rank, COALESCE(" TA_FIRST_CALL_SQL("s.rank")
			  ", -1) FROM sel_ranks s ORDER BY s.rank", &ranks, err) < 0 ||
	    ta_db_prepare(db, "SELECT step, ts, end_ts FROM steps WHERE rank = ?"
			  " ORDER BY ts", &steps, err) < 0 ||
	    ta_db_prepare(db, "INSERT INTO temp.step_win VALUES (?, ?, ?, ?)",
			  &ins, err) < 0)
		goto out;
	while ((step = sqlite3_step(ranks)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			rs = ta_xrealloc(rs, cap * sizeof(*rs));
		}
		rs[n] = (struct rank_steps){ .rank = sqlite3_column_int64(ranks, 0),
			.first_corr = sqlite3_column_int64(ranks, 1) };
		if (load_steps(steps, &rs[n++], err) < 0)
			goto out;
	}
	if (ta_db_done(db, step, err) < 0 || gpu_ends(db, rs, n, err) < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (rank_windows(db, ins, &rs[i], err) < 0)
			goto out;
	rc = 0;
out:
	for (i = 0; i < n; i++)
		free(rs[i].v);
	free(rs);
	sqlite3_finalize(ranks);
	sqlite3_finalize(steps);
	sqlite3_finalize(ins);
	return rc;
}

int ta_model_windows(sqlite3 *db, int by_steps, struct ta_error *err)
{
	if (ta_db_exec(db, "DROP TABLE IF EXISTS temp.step_win;"
		       "DROP TABLE IF EXISTS temp.span;"
		       "CREATE TEMP TABLE step_win (rank INTEGER, step INTEGER,"
		       "  ts INTEGER, end_ts INTEGER);"
		       /* step_host and per-rank reads look a rank up: without
			* it each scanned every rank's steps (8192 ranks: 40 s) */
		       "CREATE INDEX temp.step_win_rank ON step_win (rank, step);", err) < 0)
		return -1;
	if (by_steps && step_windows(db, err) < 0)
		return -1;
	/* ranks without steps (or --window span): first to last GPU work,
	 * looked up by rank (a scan of dev read every rank's work to keep
	 * none of it where every rank has steps) */
	return ta_db_exec(db, "CREATE TEMP TABLE span AS"
			  " SELECT rank, min(ts) AS ts, max(end_ts) AS end_ts"
			  " FROM step_win GROUP BY rank"
			  " UNION ALL SELECT rank, min(ts), max(ts + dur) FROM dev"
			  " WHERE rank IN (SELECT rank FROM sel_ranks"
			  "  WHERE rank NOT IN (SELECT rank FROM step_win))"
			  " GROUP BY rank;"
			  "CREATE UNIQUE INDEX temp.span_rank ON span (rank);", err);
}

int ta_model_steps_kept(sqlite3 *db, int64_t lo, int64_t hi, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char which[64];
	int rc;

	if (ta_db_prepare(db, "SELECT EXISTS (SELECT 1 FROM step_win w JOIN sel_ranks s"
			  " ON s.rank = w.rank WHERE w.step BETWEEN ?1 AND ?2),"
			  " (SELECT group_concat(step, ', ') FROM (SELECT DISTINCT w.step"
			  "  FROM step_win w JOIN sel_ranks s ON s.rank = w.rank ORDER BY 1))",
			  &st, err) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, lo);
	sqlite3_bind_int64(st, 2, hi);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && !sqlite3_column_int(st, 0)) {
		const char *kept = (const char *)sqlite3_column_text(st, 1);

		if (lo == hi)
			snprintf(which, sizeof(which), "ProfilerStep#%lld", (long long)lo);
		else
			snprintf(which, sizeof(which), "ProfilerStep#%lld to #%lld",
				 (long long)lo, (long long)hi);
		ta_error_set(err, TA_EXIT_INPUT, "no %s among the kept steps (%s%.200s)",
			     which, kept ? "they are: " : "there are none", kept ? kept : "");
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return ta_db_done(db, rc == SQLITE_ROW ? SQLITE_DONE : rc, err);
}
