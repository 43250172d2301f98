/* The GPU work an analysis sees (TEMP TABLE dev) and the analysis window,
 * by the default rules or HTA's (hta-semantics §2-§7): HTA's event
 * selection, µs rounding, device-row rule and step filter differ from the
 * right ones in a handful of rules, and both versions live here. */
#include "model_int.h"
#include "model_id.inc"   /* TA_MODEL_ID: a checksum of the model's source */
#include "ta_intern.h"

#include <stdlib.h>
#include <string.h>

#define STEP_GLOB "'ProfilerStep#[0-9]*'"

/* ta_classify searches the name for many words; a trace has a few
 * hundred kernel names and thousands of kernels, so each (rules, cat,
 * name) is classified once per connection (37k GPU rows of a 200 MB
 * trace: 30 of dev's 70 ms without). */
struct kind_memo {
	struct ta_intern *keys;  /* rules byte, cat, NUL, name */
	signed char *kind;       /* by key id */
	size_t cap;
	struct ta_buf key;
	/* the same by name and category ids (ta_kind_known, ta_kind_learn):
	 * a kernel name is 300 bytes on average, fetched and hashed per row */
	struct ta_intern *ids;   /* struct id_key's bytes */
	signed char *id_kind;
	size_t id_cap;
};

struct id_key {
	int64_t name, cat;
	char rules, null_name, null_cat;
};

void *ta_model_kind_memo_new(void)
{
	struct kind_memo *m = ta_xcalloc(1, sizeof(*m));

	m->keys = ta_intern_new();
	m->ids = ta_intern_new();
	return m;
}

void ta_model_kind_memo_free(void *p)
{
	struct kind_memo *m = p;

	if (!m)
		return;
	ta_intern_free(m->keys);
	ta_intern_free(m->ids);
	free(m->kind);
	free(m->id_kind);
	ta_buf_free(&m->key);
	free(m);
}

/* The class of key id in a table grown as ids come. */
static signed char *kind_slot(signed char **kind, size_t *cap, int64_t id)
{
	if ((size_t)id >= *cap) {
		*cap = (size_t)id * 2 + 64;
		*kind = ta_xrealloc(*kind, *cap);
	}
	return &(*kind)[id];
}

void ta_model_sql_kind(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct kind_memo *m = sqlite3_user_data(ctx);
	const char *name = (const char *)sqlite3_value_text(argv[0]);
	const char *cat = (const char *)sqlite3_value_text(argv[1]);
	int hta = sqlite3_value_int(argv[2]), is_new;
	char rules = (char)('0' + (hta != 0));
	int64_t id;

	(void)argc;
	ta_buf_reset(&m->key);
	ta_buf_addc(&m->key, rules);
	ta_buf_add(&m->key, cat ? cat : "", cat ? (size_t)sqlite3_value_bytes(argv[1]) : 0);
	ta_buf_addc(&m->key, '\0');
	ta_buf_add(&m->key, name ? name : "", name ? (size_t)sqlite3_value_bytes(argv[0]) : 0);
	ta_buf_addc(&m->key, cat ? 'c' : '-');   /* NULL and '' differ */
	ta_buf_addc(&m->key, name ? 'n' : '-');
	id = ta_intern(m->keys, m->key.s, m->key.len, &is_new);
	if (is_new)
		*kind_slot(&m->kind, &m->cap, id) =
			(signed char)ta_classify(name, cat, hta);
	sqlite3_result_int(ctx, m->kind[id]);
}

static struct id_key id_key_of(sqlite3_value **argv)
{
	struct id_key k;

	memset(&k, 0, sizeof(k)); /* padding too: the key is hashed as bytes */
	k.name = sqlite3_value_int64(argv[0]);
	k.cat = sqlite3_value_int64(argv[1]);
	k.rules = (char)(sqlite3_value_int(argv[2]) != 0);
	k.null_name = sqlite3_value_type(argv[0]) == SQLITE_NULL;
	k.null_cat = sqlite3_value_type(argv[1]) == SQLITE_NULL;
	return k;
}

void ta_model_sql_kind_known(sqlite3_context *ctx, int argc,
			     sqlite3_value **argv)
{
	struct kind_memo *m = sqlite3_user_data(ctx);
	struct id_key k = id_key_of(argv);
	int64_t id = ta_intern_find(m->ids, (const char *)&k, sizeof(k));

	(void)argc;
	if (id > 0)
		sqlite3_result_int(ctx, m->id_kind[id]);
	else
		sqlite3_result_null(ctx);
}

void ta_model_sql_kind_learn(sqlite3_context *ctx, int argc,
			     sqlite3_value **argv)
{
	struct kind_memo *m = sqlite3_user_data(ctx);
	struct id_key k = id_key_of(argv);
	int is_new, kind;
	int64_t id = ta_intern(m->ids, (const char *)&k, sizeof(k), &is_new);

	(void)argc;
	(void)is_new; /* a pair asked for again: classified again, the same */
	kind = ta_classify((const char *)sqlite3_value_text(argv[3]),
			   (const char *)sqlite3_value_text(argv[4]), k.rules);
	*kind_slot(&m->id_kind, &m->id_cap, id) = (signed char)kind;
	sqlite3_result_int(ctx, kind);
}

/* The last CPU row of each correlation: the partner of §4. */
#define CPU_CORR_SQL \
"DROP TABLE IF EXISTS temp.cpu_corr;" \
"CREATE TEMP TABLE cpu_corr (rank INTEGER, correlation INTEGER, idx INTEGER," \
"  PRIMARY KEY (rank, correlation));" \
"INSERT INTO cpu_corr SELECT rank, correlation, max(idx) FROM hrows" \
"  WHERE is_gpu = 0 AND correlation != -1 GROUP BY rank, correlation;"

/* §2.3-§2.4: rows with dur and cat (not "Trace"), µs-rounded when the
 * file has float timestamps; §3 GPU-event flag; §4 partner index. */
static const char hta_rows_sql[] =
"CREATE TEMP TABLE hrows AS SELECT e.rank, e.idx, e.name, e.cat,"
"  e.ts_ns + CASE WHEN f.hta_rounded THEN e.hta_ts_off ELSE 0 END AS ts,"
"  e.dur_ns + CASE WHEN f.hta_rounded THEN e.hta_dur_off ELSE 0 END AS dur,"
"  e.stream, e.correlation, COALESCE(e.gbps, 0.0) AS gbps,"
"  ((e.stream >= 0 AND e.correlation >= 0) OR e.name IN (SELECT name_id"
"    FROM names WHERE name IN ('Event Sync', 'Context Sync'))) AS is_gpu,"
"  NULL AS partner, e.pid, e.tid,"
"  " TA_ARG("e", "wait_on_stream") " AS wait_on_stream,"
"  " TA_ARG("e", "wait_corr") " AS wait_corr"
" FROM events e JOIN files f ON f.rank = e.rank"
" WHERE e.rank IN (SELECT rank FROM sel_ranks) AND e.dur_ns IS NOT NULL"
"  AND e.cat IS NOT NULL"
"  AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace');"
"CREATE INDEX temp.hrows_idx ON hrows (rank, idx);"
"CREATE INDEX temp.hrows_corr ON hrows (rank, correlation);"
CPU_CORR_SQL
"UPDATE hrows SET partner = COALESCE((SELECT c.idx FROM cpu_corr c"
"  WHERE c.rank = hrows.rank AND c.correlation = hrows.correlation), 0)"
" WHERE is_gpu AND correlation != -1;";

/* HTA's trace start: its rows before the step filter (§2). */
#define HTA_MIN_TS_SQL \
	"SELECT min(e.ts_ns + CASE WHEN f.hta_rounded THEN e.hta_ts_off ELSE 0 END)" \
	" FROM events e JOIN files f ON f.rank = e.rank" \
	" WHERE e.dur_ns IS NOT NULL AND e.cat IS NOT NULL" \
	" AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace')"

/* §7.1: P counts distinct step names over all ranks. */
static const char hta_steps_sql[] =
"SELECT count(DISTINCT e.name) FROM events e JOIN names n"
" ON n.name_id = e.name WHERE e.dur_ns IS NOT NULL AND e.cat IS NOT NULL"
" AND e.cat NOT IN (SELECT name_id FROM names WHERE name = 'Trace')"
" AND n.name GLOB " STEP_GLOB;

/* §7.2: keep CPU rows before the last step's start, and GPU rows whose
 * correlation a kept CPU row has. */
static const char hta_filter_sql[] =
"CREATE TEMP TABLE win AS SELECT s.rank, COALESCE("
"  (SELECT max(h.ts) FROM hrows h JOIN names n ON n.name_id = h.name"
"   WHERE h.rank = s.rank AND NOT h.is_gpu AND n.name GLOB " STEP_GLOB "),"
"  (SELECT min(h.ts) FROM hrows h WHERE h.rank = s.rank AND NOT h.is_gpu))"
"  AS last_start FROM sel_ranks s;"
"CREATE INDEX temp.win_rank ON win (rank);"
"DELETE FROM hrows WHERE NOT is_gpu"
"  AND ts >= (SELECT last_start FROM win w WHERE w.rank = hrows.rank);"
CPU_CORR_SQL
"DELETE FROM hrows WHERE is_gpu"
"  AND (SELECT last_start FROM win w WHERE w.rank = hrows.rank) IS NOT NULL"
"  AND NOT EXISTS (SELECT 1 FROM cpu_corr c WHERE c.rank = hrows.rank"
"   AND c.correlation = hrows.correlation);";

/* Every device row an analysis sees, whichever rules chose it. kind:
 * enum ta_kind; idle_kernel: counts for idle time; ord: row order. */
#define DEV_COLS_DECL \
"rank INTEGER, idx INTEGER, name INTEGER, ts INTEGER," \
"  dur INTEGER, stream INTEGER, correlation INTEGER, gbps REAL, kind INTEGER," \
"  idle_kernel INTEGER, launch_ts INTEGER, ord INTEGER, pid, tid," \
/* kernels' launch figures, as Kineto wrote them (default rules only) */ \
"  blocks_per_sm REAL, occupancy REAL, shared_mem INTEGER"
#define DEV_DECL "(" DEV_COLS_DECL ")"
/* The default rules' rows: every GPU row, cut 1 where it was launched in
 * the step the profiler cut short (dev_fill.c). dev, what the per-launch
 * analyses read, is the rest; dev_win, what the window's breakdowns
 * measure, clips all of them to the window by time: a copy for the next
 * batch launched in the cut step runs inside the last kept window too. */
#define DEV_ALL_DECL "(" DEV_COLS_DECL ", cut INTEGER)"

/* dev_table_sql's columns, in order */
#define DEV_COLUMNS "rank,idx,name,ts,dur,stream,correlation,gbps,kind," \
	"idle_kernel,launch_ts,ord,pid,tid,blocks_per_sm,occupancy,shared_mem"

static const char dev_table_sql[] =
"CREATE TEMP TABLE dev " DEV_DECL ";"
"CREATE INDEX temp.dev_ts ON dev (rank, ts);"
"CREATE INDEX temp.dev_corr ON dev (rank, correlation);";
static const char dev_all_table_sql[] =
"CREATE TEMP TABLE dev_all " DEV_ALL_DECL ";"
"CREATE INDEX temp.dev_all_ts ON dev_all (rank, ts);"
"CREATE INDEX temp.dev_all_corr ON dev_all (rank, correlation);"
"CREATE TEMP VIEW dev AS SELECT " DEV_COLUMNS " FROM dev_all WHERE cut = 0;";

/* §3: device rows are stream != -1; ord is §7.2 step 5's row order. */
static const char hta_dev_sql[] =
"INSERT INTO dev SELECT h.rank, h.idx, h.name, h.ts, h.dur,"
"  h.stream, h.correlation, h.gbps, ta_kind(n.name, c.name, 1) AS kind,"
"  c.name IN (" TA_GPU_CATS_SQL ") AS idle_kernel,"
"  CASE WHEN h.partner IS NULL THEN NULL ELSE (SELECT p.ts FROM hrows p"
"   WHERE p.rank = h.rank AND p.idx = h.partner) END AS launch_ts,"
"  CASE WHEN %d AND NOT h.is_gpu THEN h.idx + 1000000000000 ELSE h.idx END"
"   AS ord, h.pid, h.tid, NULL, NULL, NULL"
" FROM hrows h LEFT JOIN names n ON n.name_id = h.name"
" LEFT JOIN names c ON c.name_id = h.cat WHERE h.stream != -1;"
/* HTA's table of the rank as its critical path reads it: its rows in its
 * order (§7.2 step 5: by part, then idx) */
"CREATE TEMP VIEW hta_trace AS SELECT h.rank, h.idx, h.cat, h.name, h.pid,"
"  h.tid, h.ts, h.dur, h.stream, h.correlation, h.is_gpu,"
"  COALESCE(h.partner, -1) AS partner, COALESCE(h.wait_on_stream, -1)"
"  AS wait_on_stream, COALESCE(h.wait_corr, -1) AS wait_corr,"
"  CASE WHEN %d AND NOT h.is_gpu THEN 1 ELSE 0 END AS part FROM hrows h;";

/* HTA's rows and step filter into TEMP TABLE hrows; returns whether the
 * filter ran (1), or -1. */
static int hta_rows(sqlite3 *db, struct ta_error *err)
{
	int64_t steps;
	int filtered;

	if (ta_db_exec(db, hta_rows_sql, err) < 0 ||
	    ta_db_get_int(db, hta_steps_sql, 0, &steps, err) < 0)
		return -1;
	filtered = steps >= 2;
	if (filtered && ta_db_exec(db, hta_filter_sql, err) < 0)
		return -1;
	return filtered;
}

/* Those rules cost about a second per 200 MB of trace, so a database
 * that can be written keeps their result for every rank (main.hta_rows,
 * and whether the step filter ran in info), and later runs only select.
 * Changing a rule above means a new TA_SCHEMA_VERSION. */
static int keep_hta_rows(sqlite3 *rw, void *ctx, struct ta_error *err)
{
	struct ta_query every = { 0, NULL, 0, 0, NULL, NULL };
	char sql[1024];
	int filtered;

	(void)ctx;
	if (ta_db_has(rw, "table", "hta_rows"))
		return 0; /* another process was first */
	if (ta_model_select_ranks(rw, &every, err) < 0 || (filtered = hta_rows(rw, err)) < 0)
		return -1;
	snprintf(sql, sizeof(sql),
		 "CREATE TABLE hta_rows AS SELECT * FROM temp.hrows;"
		 "CREATE INDEX hta_rows_idx ON hta_rows (rank, idx);"
		 "CREATE INDEX hta_rows_corr ON hta_rows (rank, correlation);"
		 "CREATE INDEX hta_rows_dev ON hta_rows (rank, ts) WHERE stream != -1;"
		 "INSERT INTO info VALUES ('hta_step_filter', %d);"
		 "INSERT INTO info SELECT 'hta_min_ts', (" HTA_MIN_TS_SQL ");",
		 filtered);
	return ta_db_exec(rw, sql, err);
}

static int prepare_hta(sqlite3 *db, struct ta_error *err)
{
	char sql[sizeof(hta_dev_sql) + 32];
	int64_t kept;
	int filtered;

	if (ta_db_has(db, "table", "hta_rows") ||
	    ta_db_write(db, keep_hta_rows, NULL, NULL) == 0) {
		if (ta_db_get_int(db, "SELECT value FROM info WHERE key ="
				  " 'hta_step_filter'", 0, &kept, err) < 0)
			return -1;
		filtered = kept == 1;
		if (ta_db_exec(db, "CREATE TEMP VIEW hrows AS SELECT * FROM"
			       " main.hta_rows WHERE rank IN"
			       " (SELECT rank FROM temp.sel_ranks)", err) < 0)
			return -1;
	} else if ((filtered = hta_rows(db, err)) < 0) {
		return -1; /* a database we may not write: for this run only */
	}
	snprintf(sql, sizeof(sql), hta_dev_sql, filtered, filtered);
	return ta_db_exec(db, sql, err);
}

/* Default: GPU activity by category, exact ns, negative durations as 0;
 * the launch is the runtime call with the same correlation. The last
 * ProfilerStep is left out as HTA intends, but per rank: only ranks with
 * two or more steps are cut, and GPU work is kept or dropped by when it
 * was launched (or started, when no launch was recorded); work launched
 * before the trace began (no call, a correlation below every call's:
 * warm-up's, which may start late, held behind a collective) is kept. */
static const char win_sql[] =
"CREATE TEMP TABLE win AS SELECT e.rank, max(e.ts_ns) AS last_start"
" FROM events e INDEXED BY events_ann JOIN names n ON n.name_id = e.name"
" WHERE e.role = " TA_SQL(TA_ROLE_CPU_ANN) " AND e.rank IN (SELECT rank FROM sel_ranks)"
"  AND n.name GLOB " STEP_GLOB " AND e.dur_ns IS NOT NULL"
" GROUP BY e.rank HAVING count(DISTINCT e.name) >= 2;"
/* by rank: the filter looks a rank up per row (quadratic in ranks without) */
"CREATE INDEX temp.win_rank ON win (rank);";

/* the rows themselves: ta_model_fill_dev (dev_fill.c), rank by rank */

/* Every rank of dev_rows is one of the files' (an edited shard's rows
 * may not speak for another rank): its ranks one by one through its
 * index (rank, ts), a seek each, not a scan of its rows. */
#define DEV_RANKS_KNOWN_SQL \
	"WITH RECURSIVE r(x) AS (SELECT min(rank) FROM main.dev_rows" \
	" UNION ALL SELECT (SELECT min(d.rank) FROM main.dev_rows d WHERE d.rank > x)" \
	" FROM r WHERE x IS NOT NULL)" \
	" SELECT NOT EXISTS (SELECT 1 FROM r WHERE x IS NOT NULL AND x NOT IN" \
	"  (SELECT rank FROM main.files))" \
	" AND NOT EXISTS (SELECT 1 FROM main.dev_rows WHERE rank IS NULL)"

/* Whether main.dev_rows was made by this model (info.dev_rows: its
 * TA_MODEL_ID; another build's rows may be chosen by other rules), in
 * dev's shape (an edited one is made again, not read into errors). */
static int dev_rows_current(sqlite3 *db)
{
	return ta_db_has(db, "table", "dev_rows") &&
	       ta_db_int(db, "SELECT value = '" TA_MODEL_ID "' FROM info"
			 " WHERE key = 'dev_rows'", 0) == 1 &&
	       ta_db_int(db, "SELECT group_concat(name, ',') = '" DEV_COLUMNS ",cut'"
			 " FROM (SELECT name FROM pragma_table_info('dev_rows')"
			 " ORDER BY cid)", 0) == 1 &&
	       ta_db_int(db, DEV_RANKS_KNOWN_SQL, 0) == 1;
}

/* info.cache_entry of db, or NULL (not the cache's own); freed with
 * sqlite3_free. */
static char *read_mark(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	char *mark = NULL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM info WHERE key = 'cache_entry'",
			       -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) == SQLITE_TEXT)
		mark = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return mark;
}

/* The default rules' device rows cost a fifth of a cached diagnose (a
 * launch looked up per kernel, two indexes filled), the same every run:
 * a database the tool made keeps them for every rank (main.dev_rows; each
 * rank's rows are its own, so a selection of ranks is a selection of
 * rows), as keep_hta_rows does HTA's: a cache entry from its first run
 * that reads them, ingest -o's output when it is written (keep.c). */
int ta_model_write_dev_rows(sqlite3 *rw, void *unused, struct ta_error *err)
{
	struct ta_query every = { 0, NULL, 0, 0, NULL, NULL };
	void *memo;

	if (dev_rows_current(rw))
		return 0; /* another process was first */
	memo = ta_model_kind_memo_new();
	if (sqlite3_create_function_v2(rw, "ta_kind_known", 3, SQLITE_UTF8, memo,
				       ta_model_sql_kind_known, NULL, NULL,
				       ta_model_kind_memo_free) != SQLITE_OK ||
	    sqlite3_create_function_v2(rw, "ta_kind_learn", 5, SQLITE_UTF8, memo,
				       ta_model_sql_kind_learn, NULL, NULL,
				       NULL) != SQLITE_OK) {
		ta_db_failed(rw, err);
		return -1;
	}
	return ta_model_select_ranks(rw, &every, err) < 0 ||
	       ta_db_exec(rw, "DROP TABLE IF EXISTS main.dev_rows;"
			  "DELETE FROM info WHERE key IN ('dev_rows', 'dev_negative');",
			  err) < 0 ||
	       ta_db_exec(rw, win_sql, err) < 0 ||
	       /* straight into the kept table, its indexes growing as the
		* rows come in (rank, ts) order: a temp table copied and
		* indexed after cost twice the rows themselves */
	       ta_db_exec(rw, "CREATE TABLE main.dev_rows " DEV_ALL_DECL ";"
			  "CREATE INDEX main.dev_rows_ts ON dev_rows (rank, ts);"
			  "CREATE INDEX main.dev_rows_corr ON dev_rows (rank, correlation);",
			  err) < 0 ||
	       ta_model_fill_dev(rw, "main.dev_rows", "main.dev_repeats", err) < 0 ||
	       ta_db_exec(rw, "INSERT INTO info VALUES ('dev_rows', '" TA_MODEL_ID "');",
			  err) < 0 ? -1 : 0;
}

/* Whether db's file is the cache entry its mark names: a copy of an
 * entry under another name is a user's database. */
static int is_entry(sqlite3 *db, const char *mark)
{
	const char *path = sqlite3_db_filename(db, "main"), *base;
	size_t n = strcspn(mark, " ");

	if (!path || !path[0])
		return 0;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strlen(base) == n && strncmp(base, mark, n) == 0;
}

struct entry_write {
	const char *mark;   /* the entry's mark as the reading connection saw it */
	int (*fn)(sqlite3 *rw, void *arg, struct ta_error *err);
	void *arg;
};

/* Another file under the entry's name is left alone. */
static int write_entry(sqlite3 *rw, void *ctx, struct ta_error *err)
{
	const struct entry_write *w = ctx;
	char *mark = read_mark(rw);
	int same = mark && strcmp(mark, w->mark) == 0;

	sqlite3_free(mark);
	if (!same) { /* the name is another file's now: not ours to write */
		ta_error_set(err, TA_EXIT_SYSTEM, "another build of the entry");
		return -1;
	}
	return w->fn(rw, w->arg, err);
}

void ta_model_write_entry(sqlite3 *db, int (*fn)(sqlite3 *rw, void *arg,
						   struct ta_error *err), void *arg)
{
	char *mark = read_mark(db);

	if (mark && is_entry(db, mark)) {
		struct entry_write w = { mark, fn, arg };

		ta_db_try_write(db, write_entry, &w, NULL);
	}
	sqlite3_free(mark);
}

static int write_negative(sqlite3 *rw, void *arg, struct ta_error *err)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DELETE FROM info WHERE key = 'dev_negative';"
		 "INSERT INTO info VALUES ('dev_negative', '%s:%d');", TA_MODEL_ID,
		 *(const int *)arg);
	return dev_rows_current(rw) ? ta_db_exec(rw, sql, err) : 0;
}

/* Whether any of the kept device rows has a negative duration, as the
 * entry keeps it (info.dev_negative, made by the first run that asks: a
 * scan of every row, a tenth of a cached overlap): 0 or 1; -1 where dev
 * is not a view of kept rows (HTA's rules make a table of their own). */
int ta_model_dev_negative_kept(sqlite3 *db)
{
	int v;

	if (ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM temp.sqlite_master"
		      " WHERE type = 'view' AND name = 'dev')", 0) != 1 || !dev_rows_current(db))
		return -1;
	v = ta_db_int(db, "SELECT CASE value WHEN '" TA_MODEL_ID ":0' THEN 0 WHEN '"
		      TA_MODEL_ID ":1' THEN 1 ELSE -1 END FROM info"
		      " WHERE key = 'dev_negative'", -1);
	if (v >= 0)
		return v;
	v = ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM main.dev_rows WHERE dur < 0)", 1) != 0;
	ta_model_write_entry(db, write_negative, &v);
	return v;
}

/* Kept in a cache entry (a user's database and shards are only read, a
 * --no-cache one lives a run), then a view of them. Only worth keeping:
 * an entry that cannot be written now (read-only, another process
 * writing it, or renamed over by a newer build of it) builds them for the
 * run, without waiting. */
static int kept_dev_rows(sqlite3 *db, const struct ta_query *q)
{
	if (!dev_rows_current(db)) {
		ta_model_write_entry(db, ta_model_write_dev_rows, NULL);
		if (!dev_rows_current(db))
			return 0;
	}
	/* every rank: no filter, whose rank IN sent whole scans through an
	 * index (a table seek a row: a sixth more for kernels) */
	return ta_db_exec(db, q->ranks ?
			  "CREATE TEMP VIEW dev_all AS SELECT * FROM main.dev_rows"
			  " WHERE rank IN (SELECT rank FROM temp.sel_ranks);"
			  "CREATE TEMP VIEW dev AS SELECT " DEV_COLUMNS " FROM main.dev_rows"
			  " WHERE cut = 0 AND rank IN (SELECT rank FROM temp.sel_ranks);" :
			  "CREATE TEMP VIEW dev_all AS SELECT * FROM main.dev_rows;"
			  "CREATE TEMP VIEW dev AS SELECT " DEV_COLUMNS " FROM main.dev_rows"
			  " WHERE cut = 0;", NULL) == 0;
}

int ta_model_dev(sqlite3 *db, const struct ta_query *q, struct ta_error *err)
{
	if (!ta_rules(q)->trace_frame && ta_db_exec(db, win_sql, err) < 0)
		return -1;
	if (!ta_rules(q)->trace_frame && kept_dev_rows(db, q))
		return 0;
	/* indexes first: rows arrive in (rank, ts) order, so both grow by
	 * appending, where CREATE INDEX afterwards would sort in memory */
	if (ta_rules(q)->trace_frame)
		return ta_db_exec(db, dev_table_sql, err) < 0 ? -1 : prepare_hta(db, err);
	return ta_db_exec(db, dev_all_table_sql, err) < 0 ? -1 :
	       ta_model_fill_dev(db, "temp.dev_all", "temp.dev_repeats", err);
}

int64_t ta_model_min_ts(sqlite3 *db, const struct ta_query *q)
{
	/* both read every row: the loader and keep_hta_rows noted them; on
	 * a shard with every shard's part attached, the job's */
	if (!ta_rules(q)->trace_frame && ta_model_gathered(db))
		return ta_db_int(db, "SELECT min(min_ts_ns) FROM peers.clock", 0);
	if (!ta_rules(q)->trace_frame)
		return ta_db_int(db, "SELECT min(min_ts_ns) FROM files", 0);
	if (ta_db_has(db, "table", "hta_rows"))
		return ta_db_int(db, "SELECT value FROM info WHERE key = 'hta_min_ts'", 0);
	return ta_db_int(db, HTA_MIN_TS_SQL, 0);
}
