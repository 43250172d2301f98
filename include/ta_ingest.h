/* From a user's PATH to an open database: directory scan, rank
 * assignment, ingestion into a cached database. */
#ifndef TA_INGEST_H
#define TA_INGEST_H

#include <sqlite3.h>

#include "ta.h"
#include "ta_cache.h"

struct ta_ingest_opts {
	int strict;      /* a damaged trace is an error, not a warning */
	int no_cache;    /* never read or write the cache */
	int jobs;        /* threads at most (files parsed at once); 0: cores */
	int verbose;     /* say on stderr whether the cache was used */
	/* bits 1 << enum ta_lazy_index: build those while loading, for a
	 * command that will read them, or all for ingest -o */
	unsigned lazy_indexes;
	/* the database is the cache's own (info.cache_entry): commands may
	 * add to it what later runs reuse (the model's dev_rows); a user's
	 * database or shards are only read, a --no-cache one lives a run */
	int cache_entry;
	/* optional: run on the finished database before it is put in place
	 * (ingest -o: what later commands read, made once, ta_model_keep) */
	int (*finish)(const char *path, struct ta_error *err);
	/* optional: the same for a cache entry, before it is packed */
	int (*entry_finish)(const char *path, struct ta_error *err);
	/* once in place, the database is noted in the cache as checked
	 * (ta_cache_note_written): known whole, by having been written */
	int note_written;
	/* optional: told of progress (bytes of file i of n); done < 0 at the
	 * end, with the total events read in total */
	void (*progress)(const char *path, int64_t done, int64_t total,
			 size_t i, size_t n);
};

/* The trace files of PATH: every *.json and *.json.gz directly in a
 * directory (sorted), or PATH itself. *n == 0 is an error. */
int ta_input_list(const char *path, char ***files, size_t *n,
		  struct ta_error *err);
void ta_input_list_free(char **files, size_t n);

struct stat;
/* Whether target is PATH or one of its trace files (same inode). */
int ta_input_contains(const char *path, const struct stat *target);

/* A CUDA allocator snapshot pickle (gzipped or not) into a new database
 * at out (snapshot.c). */
int ta_snapshot_ingest(const char *path, const char *out, struct ta_error *err);
/* Shards (one database per trace file, ingest FILE... -o DIR) into one
 * database at out (shards.c), with the lazy indexes asked for
 * (TA_NLAZY_INDEXES bits; the others are built when first needed). */
int ta_shards_merge(char *const *paths, size_t n, const char *out,
		    unsigned lazy_indexes, struct ta_error *err);
/* -j: the jobs asked for, else the cores this process may run on. */
int ta_jobs(const struct ta_ingest_opts *o);
/* Each files[i] into its own database outs[i], up to o->jobs at once in
 * child processes (shard_build.c); -1 with the first failing file's error,
 * and with quiet_on_failure nothing the parsers said; with said_out what
 * they said goes there, not to stderr. A database already there is
 * replaced. */
int ta_shards_build(char *const *files, char *const *outs, size_t n,
		    const struct ta_ingest_opts *o, int quiet_on_failure,
		    struct ta_buf *said_out, struct ta_error *err);
/* The shards PATH is read as: a directory of shards as it is, or for a
 * directory of several traces with two or more jobs each file's own
 * cache entry, made where missing, or without a cache its shard in a new
 * directory *tmpdir (paths allocated; 0: PATH is read as one database);
 * what parsing them said is in *said, for the caller to say if it uses
 * them. ta_input_shards_free frees them, and removes the temporary ones.
 * *given: the shards are the user's (a directory of them), not made here,
 * so to be validated before they are read. */
/* Input files left out of this run's answer (not traces), counted as
 * they are skipped or, for a database made earlier, as it is opened: a
 * gate never passes while it is not 0. */
size_t ta_input_skipped(void);
void ta_input_add_skipped(size_t n);
/* A directory of shards that also holds traces: each trace must be one a
 * shard was made from (name, size, modification time), else exit 3 (its
 * rank would be silently left out). */
int ta_shard_dir_check(const char *dir, char *const *shards, size_t n, struct ta_error *err);
/* *again (n entries, or NULL): for each shard this run did not parse, the
 * trace's path to name in what its parse said, said again ("" for the
 * path kept in it); NULL where this run parsed it and said so. */
size_t ta_input_shards(const char *path, const struct ta_ingest_opts *o,
		       char ***paths, char **tmpdir, int *given, char ***again,
		       struct ta_buf *said, struct ta_error *err);
void ta_input_shards_free(char **paths, size_t n, char *tmpdir);
void ta_input_again_free(char **again, size_t n);
/* The shards of a directory (*.tadb, sorted): 0 if none. */
size_t ta_shard_list(const char *dir, char ***paths);

/* Whether path holds a pickle (gzipped or not). */
int ta_is_pickle(const char *path);

/* Parses files into a new database at out (temp name, then rename). */
int ta_ingest(char *const *files, size_t n, const char *out,
	      const struct ta_ingest_opts *o, struct ta_error *err);

/* Opens PATH (directory, trace file, or database) for analysis,
 * ingesting or reusing the cached database as needed. */
int ta_input_open(const char *path, const struct ta_ingest_opts *o,
		  sqlite3 **db, struct ta_error *err);

/* Rank from a file name (rank-3, rank_3, rank3); -1 if none, -2 if its
 * number does not fit in int64. */
int64_t ta_rank_from_filename(const char *path);

/* Whether a database file is an entry of the cache (then a damaged one
 * may be removed and built again). */
int ta_input_is_cached(const char *db_path);

/* tensorboard_trace_handler's log directories (tblog.c). The run and
 * span the command line chose (--run, --span; NULL, 0: the newest run,
 * each worker's last span). */
void ta_tblog_select(const char *run, long span);
/* Whether path is named WORKER.SPAN.pt.trace.json[.gz] (SPAN digits):
 * the length of WORKER and where SPAN starts. */
int ta_tblog_name(const char *path, size_t *worker_len, const char **span);
/* files (sorted, malloc'd): each worker's chosen span kept (the others
 * freed), in place; how many are left. said: a line when a worker had
 * several. */
size_t ta_tblog_spans(char **files, size_t n, struct ta_buf *said);
/* A directory without traces of its own whose subdirectories hold some (a
 * log directory): the chosen run's path (malloc'd), said which in said
 * when there were several; NULL if none (err set when --run names none). */
char *ta_tblog_run(const char *path, struct ta_buf *said, struct ta_error *err);
/* A handler-named trace's rank without distributedInfo: its worker's place
 * among its directory's workers, by name; -1 for another name. */
int64_t ta_tblog_rank(const char *path);

#endif
