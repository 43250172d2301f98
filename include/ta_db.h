/* The SQLite database every analysis reads: schema, opening, SQL helpers
 * (the writer's API is the parser's own: src/parse/db_writer.h). */
#ifndef TA_DB_H
#define TA_DB_H

#include <sqlite3.h>

#include "ta.h"

#define TA_SCHEMA_VERSION 28

/* events.role, set at ingestion from the category. Macros, so that SQL
 * text splices them: "role = " TA_SQL(TA_ROLE_GPU). */
#define TA_ROLE_OTHER 0
#define TA_ROLE_GPU 1        /* kernel, memcpy, memset */
#define TA_ROLE_RUNTIME 2    /* runtime or driver call */
#define TA_ROLE_SYNC 3       /* cuda_sync */
#define TA_ROLE_CPU_OP 4     /* CPU op or Python function */
#define TA_ROLE_GPU_ANN 5    /* gpu_user_annotation */
#define TA_ROLE_CPU_ANN 6    /* record_function, ProfilerStep#N */

/* Categories of GPU activity (CUDA, older Kineto, MTIA): TA_ROLE_GPU.
 * One list, spelled for C (TA_GPU_CATS_C) and for SQL (TA_GPU_CATS_SQL). */
#define TA_GPU_CATS(FIRST, NEXT) FIRST(kernel) NEXT(Kernel) NEXT(gpu_memcpy) \
	NEXT(Memcpy) NEXT(gpu_memset) NEXT(Memset) NEXT(mtia_ccp_events)
#define TA_CAT_C1_(s) #s
#define TA_CAT_C_(s) , #s
#define TA_CAT_SQL1_(s) "'" #s "'"
#define TA_CAT_SQL_(s) ", '" #s "'"
#define TA_GPU_CATS_C TA_GPU_CATS(TA_CAT_C1_, TA_CAT_C_)
#define TA_GPU_CATS_SQL TA_GPU_CATS(TA_CAT_SQL1_, TA_CAT_SQL_)

/* One of the rarer args a row keeps in its column args (a JSON object:
 * event_cols.h), as SQL: TA_ARG("e", "pg_size"). collective is text
 * whatever it was written as (the column it was declared TEXT). */
#define TA_ARG(tbl, key) "json_extract(" tbl ".args, '$." key "')"
#define TA_ARG_TEXT(tbl, key) "CAST(" TA_ARG(tbl, key) " AS TEXT)"

#define TA_SQL(x) TA_SQL_(x)
#define TA_SQL_(x) #x

/* events_thread's WHERE, and host_thread's, which must match it word for
 * word for the index to serve it. A CASE: an IN list made SQLite build a
 * temporary b-tree on every insert (a fifth of ingest -o's instructions),
 * and ORs let the planner pick this index for the host view's time
 * lookups, a scan per lookup (diagnose ran past 20 s beside ops). */
/* A trace file's path as this run was given it (files.path is the one a
 * cache entry was first built from, maybe from another directory):
 * temp.given_paths, which the input fills where a path differs; the
 * model's views make it (TA_GIVEN_PATHS_DDL) if none did. Not made at
 * every open: a temp table costs a connection a file descriptor. */
#define TA_GIVEN_PATHS_DDL "CREATE TEMP TABLE IF NOT EXISTS given_paths" \
	" (stored TEXT PRIMARY KEY, given TEXT);"
#define TA_GIVEN_PATH(f) "COALESCE((SELECT g.given FROM temp.given_paths g" \
	" WHERE g.stored = " f ".path), " f ".path)"

/* The same for one stored path, where no temp table may be: into buf. */
const char *ta_db_given_path(sqlite3 *db, const char *stored, char *buf,
			     size_t len);

#define TA_THREAD_ROLES "CASE role WHEN " TA_SQL(TA_ROLE_RUNTIME) " THEN 1 WHEN " \
	TA_SQL(TA_ROLE_CPU_OP) " THEN 1 WHEN " TA_SQL(TA_ROLE_CPU_ANN) " THEN 1 ELSE 0 END"

/* The schema as SQL, with comments (also what `traceanalyze schema` prints). */
extern const char ta_db_schema_sql[];
extern const char ta_db_index_sql[];
/* Indexes only some commands read, built when first needed. */
enum ta_lazy_index {
	TA_INDEX_HOST_TIME,   /* events_cpu: diagnose */
	TA_INDEX_THREAD,      /* events_thread: ops */
	TA_INDEX_MEMORY,      /* events_mem: memory */
	TA_INDEX_FLOW,        /* events_flow: modules, the plugin's call trees */
	TA_NLAZY_INDEXES
};
extern const char *const ta_db_lazy_index_sql[TA_NLAZY_INDEXES];

/* Process-wide SQLite settings; call before any other SQLite use. */
void ta_db_global_init(void);

/* Opens a finished database read-only, as data another may have made: a
 * regular file (never a FIFO, never a dangling link), in SQLite's
 * defensive mode with an untrusted schema, whose views and triggers are
 * ours and whose schema version is ours (exit 3 otherwise). */
int ta_db_open(const char *path, sqlite3 **db, struct ta_error *err);
/* What an open database holds, checked once before a command reads a
 * database or shard it did not make in this run: integer ranks (exactly
 * one file when one_rank: a shard), every event's rank one of them, and
 * every page sound. With memo, a file unchanged since a check passed is
 * not read again (ta_cache_checked), and one that passes is noted. */
int ta_db_validate(sqlite3 *db, const char *path, int one_rank, int memo,
		   struct ta_error *err);

/* Makes sure a lazy index exists: a cached database is written without
 * them, and gets each when first needed. */
int ta_db_need_index(sqlite3 *db, enum ta_lazy_index which,
		     struct ta_error *err);
/* The first column of sql's first row; dflt if none or NULL. */
int64_t ta_db_int(sqlite3 *db, const char *sql, int64_t dflt);
/* The first column of the first row as a new string, NULL if none. */
char *ta_db_text(sqlite3 *db, const char *sql);
/* The same, but a database error is an error (err set, -1), never the
 * default. */
int ta_db_get_int(sqlite3 *db, const char *sql, int64_t dflt, int64_t *v,
		  struct ta_error *err);
/* After a sqlite3_step loop: 0 if rc is SQLITE_DONE, else -1 with err
 * set from the database's message. */
int ta_db_done(sqlite3 *db, int rc, struct ta_error *err);
/* err says why db's last statement failed: exit 3 for a damaged file,
 * else 4 */
void ta_db_failed(sqlite3 *db, struct ta_error *err);
/* Whether SQLite has found a damaged page on this thread since the last
 * clear (its error log, whatever code the failure reached us with: a
 * statement finalized since resets it, an analysis may say SQLITE_ERROR);
 * the executor clears it when it rebuilds a damaged cache entry. */
int ta_db_damage_seen(void);
void ta_db_damage_clear(void);
/* Whether the schema has an object of this type ("table", "index", ...). */
int ta_db_has(sqlite3 *db, const char *type, const char *name);
/* Adds to the read-only db's file: fn runs in one transaction on a
 * second, read-write connection. Fails (nothing changed) when the file
 * cannot be written. */
int ta_db_write(sqlite3 *db, int (*fn)(sqlite3 *rw, void *ctx,
				       struct ta_error *err),
		void *ctx, struct ta_error *err);
/* The same without waiting: fails at once when another connection
 * writes (for what is only worth keeping, not needed). */
int ta_db_try_write(sqlite3 *db, int (*fn)(sqlite3 *rw, void *ctx,
					   struct ta_error *err),
		    void *ctx, struct ta_error *err);

/* Copies the rows of sql on from into table (made if absent, its columns
 * named and declared as sql's) of to, in one transaction (the caller's
 * when to is in one: the caller commits); values keep
 * their types. How a shard's small views travel between processes. */
int ta_db_copy_rows(sqlite3 *from, const char *sql, sqlite3 *to,
		    const char *table, struct ta_error *err);

/* Helper: prepare or fill err with SQLite's message. */
int ta_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
		  struct ta_error *err);
int ta_db_exec(sqlite3 *db, const char *sql, struct ta_error *err);

#endif
