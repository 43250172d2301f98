/* Opening a finished database, and SQLite helpers shared by all layers. */
#include "ta_db.h"
#include "ta_cache.h"
#include "ta_files.h"
#include "ta_zvfs.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How long a run waits for another that writes the same database (an
 * index or HTA's rows on a cached database, a few seconds). */
#define BUSY_MS 600000

/* ta_sum(x): sum() that holds at INT64_MAX or INT64_MIN where SQLite's
 * stops the statement with "integer overflow" (9000 kernels of the 2^50 ns
 * a duration may be, under one name, ended ops --kernels with exit 4).
 * NULLs are skipped; no value gives NULL, as sum() does. 128 bits hold
 * any count of int64 values, so a window's inverse step is exact. */
struct sat_sum {
	unsigned char v[16]; /* an __int128: SQLite aligns a context to 8 only */
	int64_t n;
};

static __int128 sum_of(const struct sat_sum *s)
{
	__int128 v;

	memcpy(&v, s->v, sizeof(v));
	return v;
}

static void add_to(struct sat_sum *s, __int128 x, int64_t n)
{
	__int128 v = sum_of(s) + x;

	memcpy(s->v, &v, sizeof(v));
	s->n += n;
}

static int64_t as_i64(sqlite3_value *x)
{
	double d;

	if (sqlite3_value_type(x) != SQLITE_FLOAT)
		return sqlite3_value_int64(x);
	d = sqlite3_value_double(x);
	return d != d ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
}

static void sat_sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sat_sum *s = sqlite3_aggregate_context(ctx, sizeof(*s));

	(void)argc;
	if (s && sqlite3_value_type(argv[0]) != SQLITE_NULL)
		add_to(s, as_i64(argv[0]), 1);
}

static void sat_sum_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sat_sum *s = sqlite3_aggregate_context(ctx, sizeof(*s));

	(void)argc;
	if (s && sqlite3_value_type(argv[0]) != SQLITE_NULL)
		add_to(s, -(__int128)as_i64(argv[0]), -1);
}

static void sat_sum_value(sqlite3_context *ctx)
{
	struct sat_sum *s = sqlite3_aggregate_context(ctx, 0);
	__int128 v;

	if (!s || !s->n) {
		sqlite3_result_null(ctx);
		return;
	}
	v = sum_of(s);
	sqlite3_result_int64(ctx, v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN :
			     (int64_t)v);
}

static int add_functions(sqlite3 *db, const char **msg,
			 const struct sqlite3_api_routines *api)
{
	(void)msg;
	(void)api;
	return sqlite3_create_window_function(db, "ta_sum", 1, SQLITE_UTF8 |
					      SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
					      sat_sum_step, sat_sum_value, sat_sum_value,
					      sat_sum_inverse, NULL);
}

/* SQLite's error log: a damaged page is noted for the thread that met it
 * (each thread has its own connections). */
static _Thread_local int damage_seen;

static void on_log(void *arg, int code, const char *msg)
{
	(void)arg;
	(void)msg;
	if ((code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB)
		damage_seen = 1;
}

int ta_db_damage_seen(void)
{
	return damage_seen;
}

void ta_db_damage_clear(void)
{
	damage_seen = 0;
}

void ta_db_global_init(void)
{
	/* SQLite's allocation statistics take a global mutex on every malloc;
	 * nothing here reads them */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	/* A sort keeps at least this many pages in memory before it spills
	 * to a temp file: 250 by default, 16 MB at our 64 KB page size. 16
	 * pages, with the 2 MB page cache, keep every sort within 2 MB. */
	sqlite3_config(SQLITE_CONFIG_PMASZ, 16);
	/* a path is a path: 'file:x.db' (Debian's SQLite reads URIs by
	 * default) would open something else and leave an empty file */
	sqlite3_config(SQLITE_CONFIG_URI, 0);
	sqlite3_config(SQLITE_CONFIG_LOG, on_log, NULL);
	/* packed cache entries open as any database (ta_zvfs.h) */
	ta_zvfs_register();
	/* every connection, whichever layer opens it, has ta_sum(); last:
	 * this initializes SQLite, after which sqlite3_config() is refused */
	sqlite3_auto_extension((void (*)(void))add_functions);
}

/* A statement failed (rc: what its step returned, or SQLITE_OK): a
 * damaged file is the input's fault (exit 3, as when the open finds it,
 * and err->damaged: plan.c rebuilds a cached one), the rest the
 * machine's (exit 4). The connection's code is reset by a statement
 * finalized since ("not an error"): the step's own is then used. */
static void db_error(sqlite3 *db, int rc, const char *msg, struct ta_error *err)
{
	int now = sqlite3_errcode(db), code, damaged, sys;
	const char *name;

	if ((now == SQLITE_OK || now == SQLITE_ROW || now == SQLITE_DONE) &&
	    rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE)
		code = rc, msg = msg ? msg : sqlite3_errstr(rc);
	else
		code = now, msg = msg ? msg : sqlite3_errmsg(db);
	damaged = (code & 0xff) == SQLITE_CORRUPT || (code & 0xff) == SQLITE_NOTADB;
	/* events.args is JSON we wrote: JSON that is not is an edited or
	 * damaged file, not a failure of ours (SQLite has no code for it) */
	if ((code & 0xff) == SQLITE_ERROR && strcmp(msg, "malformed JSON") == 0)
		damaged = 1, msg = "events.args is not JSON";
	/* a damaged page met on the way, the code lost since (SQL logic
	 * error, not an error): the damage is what failed */
	if (!damaged && damage_seen && (code & 0xff) != SQLITE_NOMEM &&
	    (code & 0xff) != SQLITE_INTERRUPT)
		damaged = 1, msg = sqlite3_errstr(SQLITE_CORRUPT);
	/* the file's name where it has one (a temporary database has
	 * none), and the system's word for a failed write (File too large) */
	name = sqlite3_db_filename(db, "main");
	sys = (code & 0xff) == SQLITE_IOERR || (code & 0xff) == SQLITE_FULL ?
	      sqlite3_system_errno(db) : 0;
	if (!name || !name[0])
		name = NULL;
	ta_error_set(err, damaged ? TA_EXIT_INPUT : TA_EXIT_SYSTEM, "%s%.*s%s: %s%s%s",
		     name ? "'" : "", name ? (int)ta_temp_base_len(name) : 8,
		     name ? name : "database", name ? "'" : "", msg, sys ? ": " : "",
		     sys ? strerror(sys) : "");
	if (err)
		err->damaged = damaged;
}

int ta_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
		  struct ta_error *err)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK)
		return 0;
	db_error(db, SQLITE_OK, NULL, err);
	return -1;
}

int ta_db_exec(sqlite3 *db, const char *sql, struct ta_error *err)
{
	char *msg = NULL;
	int rc;

	if ((rc = sqlite3_exec(db, sql, NULL, NULL, &msg)) == SQLITE_OK)
		return 0;
	db_error(db, rc, msg, err);
	sqlite3_free(msg);
	return -1;
}

/* The schema version an info TABLE names, or -1: read before
 * check_objects, so only a plain table without generated columns is
 * asked (no view's or column's code runs). */
static int64_t stated_version(sqlite3 *db)
{
	if (ta_db_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
		      " AND name = 'info'", 0) != 1 ||
	    ta_db_int(db, "SELECT count(*) FROM pragma_table_xinfo('info')"
		      " WHERE hidden IN (2, 3)", 1) != 0)
		return -1; /* a generated column runs code on read */
	return ta_db_int(db, "SELECT CASE WHEN typeof(value) = 'integer' THEN value"
			 " END FROM info WHERE key = 'schema_version'", -1);
}

/* A database another build made (ingest -o of an older release) is told
 * so, with both versions, before its tables are compared word for word
 * (which it would fail as "not the one traceanalyze makes"). */
static int check_older(sqlite3 *db, const char *path, struct ta_error *err)
{
	int64_t v = stated_version(db);

	if (v < 0 || v == TA_SCHEMA_VERSION)
		return 0;
	ta_error_set(err, TA_EXIT_INPUT, "'%s': not a traceanalyze database of "
		     "schema %d (it is of schema %lld: ingest its traces again)",
		     path, TA_SCHEMA_VERSION, (long long)v);
	return -1;
}

static int check_version(sqlite3 *db, const char *path, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int ok = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT value FROM info WHERE key = 'schema_version'",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		ok = sqlite3_column_int(st, 0) == TA_SCHEMA_VERSION;
	sqlite3_finalize(st);
	if (!ok)
		ta_error_set(err, TA_EXIT_INPUT,
			     "'%s': not a traceanalyze database of schema %d",
			     path, TA_SCHEMA_VERSION);
	return ok ? 0 : -1;
}

int64_t ta_db_int(sqlite3 *db, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st = NULL;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

char *ta_db_text(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = ta_xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

int ta_db_get_int(sqlite3 *db, const char *sql, int64_t dflt, int64_t *v,
		  struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*v = dflt;
	if (ta_db_prepare(db, sql, &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return ta_db_done(db, rc == SQLITE_ROW ? SQLITE_DONE : rc, err);
}

int ta_db_done(sqlite3 *db, int rc, struct ta_error *err)
{
	if (rc == SQLITE_DONE)
		return 0;
	db_error(db, rc, NULL, err);
	return -1;
}

void ta_db_failed(sqlite3 *db, struct ta_error *err)
{
	db_error(db, SQLITE_OK, NULL, err);
}

int ta_db_has(sqlite3 *db, const char *type, const char *name)
{
	sqlite3_stmt *st = NULL;
	int have = 0;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = ?"
			       " AND name = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, type, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		have = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	return have;
}

static int db_write(sqlite3 *db, int (*fn)(sqlite3 *rw, void *ctx,
					  struct ta_error *err),
		    void *ctx, int busy_ms, struct ta_error *err)
{
	sqlite3 *rw = NULL;
	const char *path = sqlite3_db_filename(db, "main");
	int rc;

	/* a second connection may write; ours is read-only. BEGIN IMMEDIATE
	 * waits for another process doing the same; fn finds its work done */
	if (!path || !path[0] ||
	    sqlite3_open_v2(path, &rw, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write: %s",
			     path ? path : "", rw ? sqlite3_errmsg(rw) : "cannot open");
		sqlite3_close(rw);
		return -1;
	}
	sqlite3_busy_timeout(rw, busy_ms);
	ta_db_exec(rw, "PRAGMA temp_store = FILE", NULL);
	rc = ta_db_exec(rw, "BEGIN IMMEDIATE", err) < 0 || fn(rw, ctx, err) < 0 ||
	     ta_db_exec(rw, "COMMIT", err) < 0 ? -1 : 0;
	/* a write that failed (a full disk) leaves SQLite's journal, hot,
	 * for the next connection that may write: ours, now, or the
	 * read-only one this run goes on with finds it and fails */
	if (rc < 0 && (sqlite3_errcode(rw) & 0xff) != SQLITE_BUSY &&
	    (sqlite3_errcode(rw) & 0xff) != SQLITE_LOCKED) {
		sqlite3_exec(rw, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(rw, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	}
	sqlite3_close(rw); /* rolls back what was not committed */
	return rc;
}

int ta_db_write(sqlite3 *db, int (*fn)(sqlite3 *rw, void *ctx,
				       struct ta_error *err),
		void *ctx, struct ta_error *err)
{
	return db_write(db, fn, ctx, BUSY_MS, err);
}

int ta_db_try_write(sqlite3 *db, int (*fn)(sqlite3 *rw, void *ctx,
					   struct ta_error *err),
		    void *ctx, struct ta_error *err)
{
	return db_write(db, fn, ctx, 0, err);
}

static int add_index(sqlite3 *rw, void *ctx, struct ta_error *err)
{
	return ta_db_exec(rw, ctx, err);
}

int ta_db_need_index(sqlite3 *db, enum ta_lazy_index which,
		     struct ta_error *err)
{
	static const char *const names[TA_NLAZY_INDEXES] = {
		/* the last of its entry's indexes (one made before it
		 * was added gets it) */
		"events_call_name", "events_thread", "events_mem", "events_flow"
	};

	if (ta_db_has(db, "index", names[which]))
		return 0;
	return ta_db_write(db, add_index, (void *)ta_db_lazy_index_sql[which],
			   err);
}

/* A database that cannot be read: damaged (the words ta_cli_damaged
 * uses), or not one at all. */
static void unreadable(sqlite3 *db, const char *path, struct ta_error *err)
{
	int code = sqlite3_errcode(db) & 0xff, e = sqlite3_system_errno(db);

	/* a hot journal a read-only connection cannot roll back: a write
	 * cut short, the file whole; the machine's (a full disk, a
	 * read-only directory), not the input's */
	if (sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': its journal, left by a write cut "
			     "short, cannot be rolled back (a full disk, or no write access)",
			     path);
		return;
	}
	if ((code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_NOMEM) &&
	    (e == 0 || ta_errno_exit(e) == TA_EXIT_SYSTEM)) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': %s%s%s", path, sqlite3_errmsg(db),
			     e ? ": " : "", e ? strerror(e) : "");
		return;
	}
	ta_error_set(err, TA_EXIT_INPUT, code == SQLITE_CORRUPT ? "'%s': damaged database (%s)" :
		     "'%s': not a database we can read: %s", path, sqlite3_errmsg(db));
}

/* The schema objects we make, to tell a database's own from planted ones:
 * built once, from the schema itself, in memory. */
struct object {
	char *type, *name, *sql;
};

static struct object *ours;
static size_t nours;
static pthread_once_t ours_once = PTHREAD_ONCE_INIT;

static void make_ours(void)
{
	sqlite3 *mem = NULL;
	sqlite3_stmt *st = NULL;
	int k;

	if (sqlite3_open(":memory:", &mem) != SQLITE_OK ||
	    sqlite3_exec(mem, ta_db_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(mem, ta_db_index_sql, NULL, NULL, NULL) != SQLITE_OK) {
		/* only a broken build gets here */
		fprintf(stderr, "traceanalyze: the schema does not build: %s\n",
			sqlite3_errmsg(mem));
		exit(TA_EXIT_SYSTEM);
	}
	for (k = 0; k < TA_NLAZY_INDEXES; k++)
		sqlite3_exec(mem, ta_db_lazy_index_sql[k], NULL, NULL, NULL);
	if (sqlite3_prepare_v2(mem, "SELECT type, name, sql FROM sqlite_master", -1, &st,
			       NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			struct object *o;
			const char *sql = (const char *)sqlite3_column_text(st, 2);

			ours = ta_xrealloc(ours, (nours + 1) * sizeof(*ours));
			o = &ours[nours++];
			o->type = ta_xstrdup((const char *)sqlite3_column_text(st, 0));
			o->name = ta_xstrdup((const char *)sqlite3_column_text(st, 1));
			o->sql = sql ? ta_xstrdup(sql) : NULL;
		}
	}
	sqlite3_finalize(st);
	sqlite3_close(mem);
}

/* Reading a database's schema and its small tables takes a few thousand
 * steps; a planted recursion would take forever. */
#define VET_STEPS 1000
#define VET_CALLS 100000       /* 10^8 steps */

static int vet_progress(void *ctx)
{
	return ++*(long *)ctx > VET_CALLS;
}

/* Every view and trigger must be ours, and every table, index and view
 * of a name we use must be what we made it, word for word: a view named
 * info that recurses, a trigger, a generated column are refused (other
 * tables and indexes, without generated columns, are harmless in a
 * database opened read-only). */
static int check_objects(sqlite3 *db, const char *path, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char why[200] = "";
	size_t i;
	int rc;

	pthread_once(&ours_once, make_ours);
	if (sqlite3_prepare_v2(db, "SELECT type, name, sql FROM sqlite_master", -1, &st,
			       NULL) != SQLITE_OK) {
		unreadable(db, path, err);
		return -1;
	}
	while (!why[0] && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *sql = (const char *)sqlite3_column_text(st, 2);

		if (!type || !name)
			continue;
		for (i = 0; i < nours && strcmp(ours[i].name, name) != 0; i++)
			;
		if (i == nours && (strcmp(type, "view") == 0 || strcmp(type, "trigger") == 0))
			snprintf(why, sizeof(why), "a %.20s '%.60s' that traceanalyze "
				 "did not make", type, name);
		else if (i < nours && (strcmp(type, ours[i].type) != 0 ||
				       (!sql) != (!ours[i].sql) ||
				       (sql && strcmp(sql, ours[i].sql) != 0)))
			snprintf(why, sizeof(why), "its %.20s '%.60s' is not the one "
				 "traceanalyze makes", type, name);
	}
	sqlite3_finalize(st);
	if (why[0]) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s; refused", path, why);
		return -1;
	}
	if (rc != SQLITE_DONE) {
		unreadable(db, path, err);
		return -1;
	}
	/* a generated column runs its expression on every read: in a table
	 * of ours the text above has none, in another it is refused */
	if (sqlite3_prepare_v2(db, "SELECT m.name FROM sqlite_master m,"
			       " pragma_table_xinfo(m.name) x WHERE m.type = 'table'"
			       " AND x.hidden IN (2, 3) LIMIT 1", -1, &st, NULL) != SQLITE_OK) {
		unreadable(db, path, err);
		return -1;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		ta_error_set(err, TA_EXIT_INPUT, "'%s': its table '%.60s' has a generated "
			     "column, which traceanalyze never makes; refused", path,
			     (const char *)sqlite3_column_text(st, 0));
	else if (rc != SQLITE_DONE)
		unreadable(db, path, err);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* s as a message may show it: bytes outside printable ASCII as '?',
 * cut to len - 1 (a damaged file's text is anything). */
static const char *printable(char *buf, size_t len, const char *s)
{
	size_t i;

	for (i = 0; s && s[i] && i + 1 < len; i++)
		buf[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

/* The header says WAL (bytes 18 and 19: 2): ours never are. */
static int is_wal(const char *path)
{
	unsigned char h[20];
	FILE *f = fopen(path, "rb");
	int wal = 0;

	if (f && fread(h, 1, sizeof(h), f) == sizeof(h))
		wal = memcmp(h, "SQLite format 3", 16) == 0 && (h[18] == 2 || h[19] == 2);
	if (f)
		fclose(f);
	return wal;
}

int ta_db_open(const char *path, sqlite3 **db, struct ta_error *err)
{
	struct stat sb;
	long calls = 0;

	*db = NULL;
	/* a FIFO would wait forever, a dangling link would be created */
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", path,
			     stat(path, &sb) < 0 ? strerror(errno) : "not a regular file");
		return -1;
	}
	if (is_wal(path)) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': a database in WAL mode, which "
			     "SQLite cannot read without writing files beside it; "
			     "convert it: sqlite3 '%s' 'PRAGMA journal_mode = DELETE'", path, path);
		return -1;
	}
	/* NOMUTEX: a connection is used by one thread (the shard checks open
	 * one each); the lock every column read took was 6 % of diagnose */
	if (sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		/* too many open files, no memory: the machine's, exit 4 */
		ta_error_set(err, *db ? ta_errno_exit(sqlite3_system_errno(*db)) : TA_EXIT_SYSTEM,
			     "'%s': %s%s%s", path, *db ? sqlite3_errmsg(*db) : "cannot open",
			     *db && sqlite3_system_errno(*db) ? ": " : "",
			     *db && sqlite3_system_errno(*db) ?
			     strerror(sqlite3_system_errno(*db)) : "");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	/* a database is data: its schema may not call functions with side
	 * effects, nor be written around SQLite's checks */
	sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	/* another run adding an index or HTA's rows holds the file for a
	 * moment: wait for it rather than fail (the checks below read it: a
	 * lock there is not damage) */
	sqlite3_busy_timeout(*db, BUSY_MS);
	sqlite3_progress_handler(*db, VET_STEPS, vet_progress, &calls);
	if (check_older(*db, path, err) < 0 || check_objects(*db, path, err) < 0 ||
	    check_version(*db, path, err) < 0) {
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	sqlite3_progress_handler(*db, 0, NULL, NULL);
	/* analyses build temporary tables: on disk, so memory stays bounded */
	sqlite3_exec(*db, "PRAGMA temp_store = FILE; PRAGMA cache_size = -2048",
		     NULL, NULL, NULL);
	return 0;
}

const char *ta_db_given_path(sqlite3 *db, const char *stored, char *buf,
			     size_t len)
{
	sqlite3_stmt *st = NULL;

	snprintf(buf, len, "%s", stored ? stored : "?");
	/* no table: no path differs */
	if (stored && sqlite3_prepare_v2(db, "SELECT given FROM temp.given_paths"
					 " WHERE stored = ?", -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, stored, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	}
	sqlite3_finalize(st);
	return buf;
}

/* A database from elsewhere, whole: SQLite's quick_check reads every page
 * (a page overwritten in the middle read as other numbers, exit 0, until
 * it was; 22 ms for a 2 MB shard, about 0.1 s for 60 MB). */
static int check_pages(sqlite3 *db, const char *path, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL) != SQLITE_OK) {
		unreadable(db, path, err);
		return -1;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
		const char *said = (const char *)sqlite3_column_text(st, 0);
		char what[120];

		if (strncmp(said, "*** in database main ***\n", 25) == 0)
			said += 25;
		printable(what, sizeof(what), said);
		ta_error_set(err, TA_EXIT_INPUT, "'%s': damaged database (%s)", path, what);
		rc = SQLITE_ERROR;
	} else if (rc != SQLITE_ROW) {
		unreadable(db, path, err);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* The bounds ingestion keeps values in (trace_parse.c, snapshot.c), on
 * which the analyses' arithmetic relies: an edited database's values
 * beyond them overflowed it (a time near 2^63 added to a duration). */
#define TS_LO "-2305843009213693952"   /* -2^61 ns */
#define TS_HI "4611686018427387904"    /* 2^62 ns */
#define DUR_LIM "1125899906842624"     /* 2^50 ns */
#define SIZE_HI "281474976710656"      /* 2^48 bytes */
#define TIME_HI "9007199254740992"     /* 2^53 us */
#define NOT_IN(lo, hi) " NOT BETWEEN " lo " AND " hi

/* a table's values to check: an expression, what it is out of bounds */
struct bound {
	const char *table, *expr, *out;
};

static const struct bound bounds[] = {
	{ "events", "ts_ns", NOT_IN(TS_LO, TS_HI) },
	{ "events", "dur_ns", NOT_IN("-" DUR_LIM, DUR_LIM) },
	{ "events", "ts_ns + max(dur_ns, 0)", " > " TS_HI },
	{ "events", "hta_ts_off", NOT_IN("-" DUR_LIM, DUR_LIM) },
	{ "events", "hta_dur_off", NOT_IN("-" DUR_LIM, DUR_LIM) },
	/* the model writes every GPU row with its time, length and cut flag:
	 * a NULL (which NOT BETWEEN lets by) or another flag read as rows of
	 * neither kind (a forged cut = 2 made temporal's idle 63 % for 0.3 %) */
	{ "dev_rows", "COALESCE(ts, -1e300)", NOT_IN(TS_LO, TS_HI) },
	{ "dev_rows", "COALESCE(dur, -1)", NOT_IN("0", DUR_LIM) },   /* max(dur, 0) */
	{ "dev_rows", "COALESCE(cut, -1)", NOT_IN("0", "1") },
	{ "dev_rows", "ts + max(dur, 0)", " > " TS_HI },
	{ "dev_rows", "launch_ts", NOT_IN(TS_LO, TS_HI) },
	/* a shard's kept collectives: start, end, enqueue and its clock */
	{ "part_coll", "ts", NOT_IN(TS_LO, TS_HI) },
	{ "part_coll", "end_ts - ts", NOT_IN("0", DUR_LIM) },
	{ "part_coll", "issue_ts", NOT_IN(TS_LO, TS_HI) },
	{ "part_clock", "min_ts_ns", NOT_IN(TS_LO, TS_HI) },
	{ "files", "min_ts_ns", NOT_IN(TS_LO, TS_HI) },
	{ "files", "max_ts_ns", NOT_IN(TS_LO, TS_HI) },
	{ "snap_segments", "total_size", NOT_IN("0", SIZE_HI) },
	{ "snap_segments", "allocated_size", NOT_IN("0", SIZE_HI) },
	{ "snap_blocks", "size", NOT_IN("0", SIZE_HI) },
	{ "snap_blocks", "requested", NOT_IN("0", SIZE_HI) },
	{ "snap_events", "size", NOT_IN("0", SIZE_HI) },
	{ "snap_events", "time_us", NOT_IN("0", TIME_HI) },
};
#define NBOUNDS (sizeof(bounds) / sizeof(*bounds))

/* One scan of bounds[from, to) (one table's): the first row out of them,
 * with which expression and its value. */
static void bounds_sql(struct ta_buf *b, size_t from, size_t to)
{
	size_t i;

	ta_buf_adds(b, "SELECT CASE");
	for (i = from; i < to; i++)
		ta_buf_addf(b, " WHEN (%s)%s THEN '%s'", bounds[i].expr, bounds[i].out,
			    bounds[i].expr);
	ta_buf_adds(b, " END, rowid, CASE");
	for (i = from; i < to; i++)
		ta_buf_addf(b, " WHEN (%s)%s THEN %s", bounds[i].expr, bounds[i].out,
			    bounds[i].expr);
	ta_buf_addf(b, " END FROM %s WHERE 0", bounds[from].table);
	for (i = from; i < to; i++)
		ta_buf_addf(b, " OR (%s)%s", bounds[i].expr, bounds[i].out);
	ta_buf_adds(b, " LIMIT 1");
}

/* Every time, duration and size within the bounds above, and a
 * snapshot's sizes adding up to at most 2^62 bytes, as ingestion's. */
static int check_values(sqlite3 *db, const char *path, struct ta_error *err)
{
	char shown[48];
	sqlite3_stmt *st = NULL;
	size_t from, to;
	int rc = SQLITE_DONE;

	for (from = 0; rc == SQLITE_DONE && from < NBOUNDS; from = to) {
		struct ta_buf sql = { NULL, 0, 0 };

		for (to = from; to < NBOUNDS && strcmp(bounds[to].table, bounds[from].table) == 0;
		     to++)
			;
		if (!ta_db_has(db, "table", bounds[from].table))
			continue;
		bounds_sql(&sql, from, to);
		rc = sqlite3_prepare_v2(db, sql.s, -1, &st, NULL);
		ta_buf_free(&sql);
		if (rc != SQLITE_OK) {
			unreadable(db, path, err);
			return -1;
		}
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			ta_error_set(err, TA_EXIT_INPUT, "'%s': %s.%s of row %lld is %s, beyond "
				     "what traceanalyze reads (times within [-2^61, 2^62] ns, "
				     "durations within 2^50 ns, sizes 0 to 2^48 bytes); refused",
				     path, bounds[from].table,
				     (const char *)sqlite3_column_text(st, 0),
				     (long long)sqlite3_column_int64(st, 1),
				     printable(shown, sizeof(shown),
					       (const char *)sqlite3_column_text(st, 2)));
		else if (rc != SQLITE_DONE)
			unreadable(db, path, err);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_DONE)
		return -1;
	if (ta_db_has(db, "table", "snap_events") &&
	    ta_db_int(db, "SELECT (SELECT total(size) FROM snap_events) + (SELECT"
		      " total(size) FROM snap_blocks) + (SELECT total(total_size) FROM"
		      " snap_segments) > 4611686018427387904", 0) != 0) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': the snapshot's sizes add up past "
			     "2^62 bytes; refused", path);
		return -1;
	}
	return 0;
}

int ta_db_validate(sqlite3 *db, const char *path, int one_rank, int memo,
		   struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	char shown[48];
	int rc;

	if (memo && ta_cache_checked(path, one_rank))
		return 0;
	if (check_pages(db, path, err) < 0)
		return -1;

	/* the files' ranks: integers, one for a shard; every event's rank
	 * one of them (a shard's events under another rank would be
	 * dropped by the analyses that join the two) */
	if (ta_db_prepare(db, "SELECT (SELECT count(*) FROM files),"
			  " (SELECT count(*) FROM files WHERE typeof(rank) != 'integer'),"
			  " (SELECT rank FROM events WHERE typeof(rank) != 'integer' OR rank NOT IN"
			  "  (SELECT rank FROM files) LIMIT 1),"
			  " (SELECT min(rank) FROM files)", &st, err) < 0)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		int64_t nfiles = sqlite3_column_int64(st, 0);

		if (nfiles == 0 || (one_rank && nfiles != 1))
			ta_error_set(err, TA_EXIT_INPUT, "'%s': a %s holds %s trace file%s, "
				     "not %lld", path, one_rank ? "shard" : "database",
				     one_rank ? "one" : "at least one", one_rank ? "" : "s",
				     (long long)nfiles);
		else if (sqlite3_column_int64(st, 1))
			ta_error_set(err, TA_EXIT_INPUT, "'%s': a rank that is not an "
				     "integer", path);
		else if (sqlite3_column_type(st, 2) != SQLITE_NULL && one_rank)
			ta_error_set(err, TA_EXIT_INPUT, "'%s': events of rank '%s' in "
				     "the shard of rank %lld", path,
				     printable(shown, sizeof(shown),
					       (const char *)sqlite3_column_text(st, 2)),
				     (long long)sqlite3_column_int64(st, 3));
		else if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			ta_error_set(err, TA_EXIT_INPUT, "'%s': events of rank '%s', "
				     "which has no file", path,
				     printable(shown, sizeof(shown),
					       (const char *)sqlite3_column_text(st, 2)));
		else
			rc = SQLITE_DONE;
	} else {
		unreadable(db, path, err);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE && check_values(db, path, err) < 0)
		return -1;
	if (rc == SQLITE_DONE && memo)
		ta_cache_note_checked(path, one_rank);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* "CREATE TABLE IF NOT EXISTS table ("c1" decl1, ...)" from st's columns. */
static char *create_like(sqlite3_stmt *st, const char *table)
{
	struct ta_buf b = { 0 };
	int i, n = sqlite3_column_count(st);

	ta_buf_addf(&b, "CREATE TABLE IF NOT EXISTS \"%s\" (", table);
	for (i = 0; i < n; i++) {
		const char *decl = sqlite3_column_decltype(st, i);

		ta_buf_addf(&b, "%s\"%s\" %s", i ? ", " : "",
			      sqlite3_column_name(st, i), decl ? decl : "");
	}
	ta_buf_adds(&b, ")");
	return b.s;
}

int ta_db_copy_rows(sqlite3 *from, const char *sql, sqlite3 *to,
		    const char *table, struct ta_error *err)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	struct ta_buf q = { 0 };
	char *create;
	int i, n, rc = -1, step, own;

	if (ta_db_prepare(from, sql, &st, err) < 0)
		return -1;
	n = sqlite3_column_count(st);
	create = create_like(st, table);
	ta_buf_addf(&q, "INSERT INTO \"%s\" VALUES (", table);
	for (i = 0; i < n; i++)
		ta_buf_adds(&q, i ? ", ?" : "?");
	ta_buf_adds(&q, ")");
	/* in a transaction of the caller's, the caller commits */
	own = sqlite3_get_autocommit(to);
	if (ta_db_exec(to, create, err) == 0 && (!own || ta_db_exec(to, "BEGIN", err) == 0) &&
	    ta_db_prepare(to, q.s, &ins, err) == 0) {
		while ((step = sqlite3_step(st)) == SQLITE_ROW) {
			/* values as they are: their types are the table's own */
			for (i = 0; i < n; i++)
				sqlite3_bind_value(ins, i + 1, sqlite3_column_value(st, i));
			if (sqlite3_step(ins) != SQLITE_DONE)
				break;
			sqlite3_reset(ins);
		}
		rc = step == SQLITE_DONE ? (own ? ta_db_exec(to, "COMMIT", err) : 0)
			: step == SQLITE_ROW ? ta_db_done(to, SQLITE_ERROR, err)
			: ta_db_done(from, step, err);
		if (rc < 0 && own)
			sqlite3_exec(to, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(st);
	free(create);
	ta_buf_free(&q);
	return rc;
}
