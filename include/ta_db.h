/* The SQLite database every analysis reads: schema, writer, opening. */
#ifndef TA_DB_H
#define TA_DB_H

#include <sqlite3.h>

#include "ta_event.h"

#define TA_SCHEMA_VERSION 5

/* The schema as SQL, with comments (also what `traceanalyze schema` prints). */
extern const char ta_db_schema_sql[];
extern const char ta_db_index_sql[];

struct ta_db_writer;

/* Creates a new database at path (which must not be in use). */
struct ta_db_writer *ta_db_writer_new(const char *path, struct ta_error *err);
/* Starts a file; events that follow belong to it. */
int ta_db_writer_begin_file(struct ta_db_writer *w, const char *path,
			    int64_t bytes, int64_t mtime_ns, int64_t rank,
			    struct ta_error *err);
int ta_db_writer_event(struct ta_db_writer *w, const struct ta_event *ev);
int ta_db_writer_meta(struct ta_db_writer *w, const char *key,
		      const char *json, size_t len);
/* Records what the parse found; moves the file's rows to its final rank. */
struct ta_parse_result;
int ta_db_writer_end_file(struct ta_db_writer *w, int64_t rank,
			  const struct ta_parse_result *res,
			  struct ta_error *err);
/* Drops what was written for the current file (it was not a trace). */
int ta_db_writer_discard_file(struct ta_db_writer *w, struct ta_error *err);
/* Builds indexes and commits. The writer is freed either way. */
int ta_db_writer_finish(struct ta_db_writer *w, struct ta_error *err);
void ta_db_writer_abort(struct ta_db_writer *w);

/* Opens a finished database read-only; checks the schema version. */
/* Process-wide SQLite settings; call before any other SQLite use. */
void ta_db_global_init(void);

int ta_db_open(const char *path, sqlite3 **db, struct ta_error *err);

/* Helper: prepare or fill err with SQLite's message. */
int ta_db_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st,
		  struct ta_error *err);
int ta_db_exec(sqlite3 *db, const char *sql, struct ta_error *err);

#endif
