/* PATH -> database: list trace files, reuse the cached database when the
 * files are unchanged, ingest otherwise. */
#include "ta_cleanup.h"
#include "ta_db.h"
#include "ta_cache.h"
#include "ta_files.h"
#include "ta_ingest.h"
#include "ta_zvfs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int is_trace_name(const char *name)
{
	return ends_with(name, ".json") || ends_with(name, ".json.gz");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *path, char ***files, size_t *n, int quiet,
		    struct ta_error *err)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t cap = 0;

	if (!d) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", path, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char *full;
		struct stat sb;
		int gone;

		if (de->d_name[0] == '.')
			continue;
		full = ta_xmalloc(strlen(path) + strlen(de->d_name) + 2);
		sprintf(full, "%s/%s", path, de->d_name);
		if (!is_trace_name(de->d_name)) {
			/* an allocator snapshot beside its traces is expected
			 * (memory --trace, report --snapshot) */
			if (!quiet && !ends_with(de->d_name, ".pickle") &&
			    !ends_with(de->d_name, ".pickle.gz") &&
			    stat(full, &sb) == 0 && S_ISREG(sb.st_mode))
				ta_warn("'%s': not a trace file name (*.json, "
					"*.json.gz); skipped", full);
			free(full);
			continue;
		}
		/* a trace's name on something unreadable is worth a word: a
		 * dangling or looping link, or the kind of file it is */
		gone = stat(full, &sb) < 0;
		if (gone || !S_ISREG(sb.st_mode)) {
			if (!quiet) {
				ta_warn("'%s': %s; skipped", full, gone ? strerror(errno) :
					ta_file_kind(sb.st_mode));
				ta_input_add_skipped(1);   /* a gate trips on it */
			}
			free(full);
			continue;
		}
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*files = ta_xrealloc(*files, cap * sizeof(**files));
		}
		(*files)[(*n)++] = full;
	}
	closedir(d);
	if (*n == 0) {
		/* tensorboard_trace_handler's log directory: one of its runs */
		struct ta_buf said = { 0 };
		char *run = ta_tblog_run(path, &said, err);
		int rc;

		if (!run) {
			if (!err->code)
				ta_error_set(err, TA_EXIT_INPUT,
					     "'%s': no trace files (*.json, *.json.gz)", path);
			ta_buf_free(&said);
			return -1;
		}
		if (!quiet && !ta_quiet)
			ta_stderr_bytes(said.s, said.len);
		ta_buf_free(&said);
		rc = list_dir(run, files, n, quiet, err);
		free(run);
		return rc;
	}
	ta_qsort(*files, *n, sizeof(**files), cmp_str);
	{
		/* a worker profiled in several spans: the one asked for */
		struct ta_buf said = { 0 };

		*n = ta_tblog_spans(*files, *n, &said);
		if (!quiet && !ta_quiet)
			ta_stderr_bytes(said.s, said.len);
		ta_buf_free(&said);
	}
	if (*n == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': no worker has that many spans "
			     "(--span)", path);
		free(*files);
		*files = NULL;
		return -1;
	}
	return 0;
}

int ta_input_list(const char *path, char ***files, size_t *n,
		  struct ta_error *err)
{
	struct stat sb;

	*files = NULL;
	*n = 0;
	if (strcmp(path, "-") != 0) {
		if (stat(path, &sb) < 0) {
			ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", path,
				     strerror(errno));
			return -1;
		}
		if (S_ISDIR(sb.st_mode))
			return list_dir(path, files, n, 0, err);
		if (!S_ISREG(sb.st_mode)) {
			ta_error_set(err, TA_EXIT_INPUT, "'%s': %s, not a trace, "
				     "directory or database (use - for standard "
				     "input)", path, ta_file_kind(sb.st_mode));
			return -1;
		}
	}
	*files = ta_xmalloc(sizeof(**files));
	(*files)[0] = ta_xstrdup(path);
	*n = 1;
	return 0;
}

void ta_input_list_free(char **files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

int ta_input_contains(const char *path, const struct stat *target)
{
	struct stat sb;
	struct dirent *de;
	DIR *d;
	int found = 0;

	if (strcmp(path, "-") == 0 || stat(path, &sb) < 0)
		return 0;
	if (!S_ISDIR(sb.st_mode))
		return ta_same_file(&sb, target);
	if (!(d = opendir(path)))
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		char full[PATH_MAX];

		size_t nl = strlen(de->d_name);

		/* traces, and shards (a directory of them is an input too) */
		if (de->d_name[0] == '.' || (!is_trace_name(de->d_name) &&
		    !(nl > 5 && strcmp(de->d_name + nl - 5, ".tadb") == 0)))
			continue;
		snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
		found = stat(full, &sb) == 0 && ta_same_file(&sb, target);
	}
	closedir(d);
	return found;
}

static int is_sqlite_file(const char *path)
{
	char head[16];
	int fd;
	ssize_t got;

	if (strcmp(path, "-") == 0 || (fd = ta_open_read(path, "", NULL)) < 0)
		return 0;
	got = read(fd, head, sizeof(head));
	close(fd);
	/* SQLite's, or a packed cache entry (a copy given by path) */
	return got == (ssize_t)sizeof(head) &&
	       (memcmp(head, "SQLite format 3", 16) == 0 ||
		ta_zvfs_is_packed(head, sizeof(head)));
}

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* Whether the database keeps what its parse said ('noted:N'). */
static int noted_any(sqlite3 *db)
{
	return ta_db_int(db, "SELECT EXISTS (SELECT 1 FROM info WHERE key GLOB 'noted:*')",
			 0) == 1;
}

/* Files left out when the database was made: said again, and counted. */
static void report_skipped(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM info WHERE key GLOB 'skipped:*'"
			       " ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		char what[1024];

		ta_warn("%s; skipped", v ? ta_no_controls(what, sizeof(what), v) : "a file");
		ta_input_add_skipped(1);
	}
	sqlite3_finalize(st);
}

/* What the parse said of the file stored as path ('noted:N': [path,
 * message]), in the order said, named as given now; path NULL: the notes
 * of no file in the database (an edited one). */
static void report_noted(sqlite3 *db, sqlite3_stmt *st, const char *path)
{
	char shown[PATH_MAX];

	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char what[1024];

		ta_db_given_path(db, (const char *)sqlite3_column_text(st, 0), shown,
				 sizeof(shown));
		ta_warn("'%s': %s", shown, ta_no_controls(what, sizeof(what), (const char *)
							  sqlite3_column_text(st, 1)));
	}
}

/* Damage found when the database was built is reported on every use,
 * file by file in the order a parse says it (by path), with what else it
 * said of each. */
static int report_damage(sqlite3 *db, const struct ta_ingest_opts *o,
			 struct ta_error *err)
{
	sqlite3_stmt *st = NULL, *noted = NULL;
	int rc = 0, kept = noted_any(db);

	report_skipped(db);
	/* the notes by path, once (a search of them all for each of 8192
	 * files would be quadratic); a value that is not JSON reads as
	 * NULL, not an error */
	if (kept &&
	    (sqlite3_exec(db, "DROP TABLE IF EXISTS temp.said;"
			  "CREATE TEMP TABLE said AS SELECT rowid AS r, v ->> 0 AS path,"
			  " v ->> 1 AS what FROM (SELECT rowid, CASE WHEN json_valid(value)"
			  " THEN value END AS v FROM info WHERE key GLOB 'noted:*')"
			  " WHERE v IS NOT NULL;"
			  "CREATE INDEX temp.said_path ON said (path, r);", NULL, NULL,
			  NULL) != SQLITE_OK ||
	     sqlite3_prepare_v2(db, "SELECT path, what FROM temp.said WHERE path IS ?1"
				" OR (?1 IS NULL AND path NOT IN (SELECT path FROM files))"
				" ORDER BY r", -1, &noted, NULL) != SQLITE_OK))
		noted = NULL;
	if (ta_db_prepare(db, "SELECT path, damage, events, truncated, bad_times"
			  " FROM files ORDER BY path, rank", &st, err) < 0) {
		sqlite3_finalize(noted);
		return -1;
	}
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		char shown[PATH_MAX];
		const char *stored = (const char *)sqlite3_column_text(st, 0);
		const char *path = ta_db_given_path(db, stored, shown, sizeof(shown));
		const char *what = (const char *)sqlite3_column_text(st, 1);

		if (sqlite3_column_int(st, 3)) {
			if (o->strict) {
				ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", path, what);
				rc = -1;
				break;
			}
			ta_warn("'%s': %s; analysing the %lld events before it",
				path, what, (long long)sqlite3_column_int64(st, 2));
		}
		/* said with the notes where this build kept them */
		if (sqlite3_column_int64(st, 4) && !kept)
			ta_warn("'%s': %lld events have a ts or dur that is not a "
				"usable number (a string, a ts past the year 2116 "
				"or a dur over 13 days); they have no time", path,
				(long long)sqlite3_column_int64(st, 4));
		if (noted)
			report_noted(db, noted, stored);
	}
	if (rc == 0 && noted)
		report_noted(db, noted, NULL);
	sqlite3_finalize(st);
	if (noted) {
		sqlite3_finalize(noted);
		sqlite3_exec(db, "DROP TABLE IF EXISTS temp.said", NULL, NULL, NULL);
	}
	return rc;
}

static int open_checked(const char *path, const struct ta_ingest_opts *o,
			sqlite3 **db, struct ta_error *err)
{
	if (ta_db_open(path, db, err) < 0)
		return -1;
	if (ta_db_validate(*db, path, 0, !o->no_cache, err) < 0 ||
	    report_damage(*db, o, err) < 0) {
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	return 0;
}

size_t ta_shard_list(const char *dir, char ***paths)
{
	struct stat sb;
	struct dirent *de;
	size_t n = 0, cap = 0;
	DIR *d;

	*paths = NULL;
	if (strcmp(dir, "-") == 0 || stat(dir, &sb) < 0 || !S_ISDIR(sb.st_mode) ||
	    !(d = opendir(dir)))
		return 0;
	while ((de = readdir(d)) != NULL) {
		char *full;

		if (de->d_name[0] == '.' || !ends_with(de->d_name, ".tadb"))
			continue;
		full = ta_xmalloc(strlen(dir) + strlen(de->d_name) + 2);
		sprintf(full, "%s/%s", dir, de->d_name);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			*paths = ta_xrealloc(*paths, cap * sizeof(**paths));
		}
		(*paths)[n++] = full;
	}
	closedir(d);
	ta_qsort(*paths, n, sizeof(**paths), cmp_str);
	return n;
}

/* Whether a shard was made from trace file f: its stored path ends in f's
 * name, and the size and modification time are f's. */
static int shard_of(char *const *shards, size_t n, const char *f)
{
	const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;
	struct stat sb;
	size_t i;
	int found = 0;

	if (stat(f, &sb) < 0)
		return 0;
	for (i = 0; i < n && !found; i++) {
		struct ta_error ignored = { 0, "", 0 };
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		if (ta_db_open(shards[i], &db, &ignored) == 0 &&
		    sqlite3_prepare_v2(db, "SELECT path, bytes, mtime_ns FROM files", -1, &st,
				       NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW) {
			const char *p = (const char *)sqlite3_column_text(st, 0);
			const char *pb = p && strrchr(p, '/') ? strrchr(p, '/') + 1 : p;

			found = pb && strcmp(pb, base) == 0 &&
				sqlite3_column_int64(st, 1) == (int64_t)sb.st_size &&
				sqlite3_column_int64(st, 2) == (int64_t)sb.st_mtim.tv_sec *
				1000000000 + sb.st_mtim.tv_nsec;
		}
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	return found;
}

int ta_shard_dir_check(const char *dir, char *const *shards, size_t n, struct ta_error *err)
{
	struct ta_error none = { 0, "", 0 };
	char **traces = NULL;
	size_t nt = 0, i;
	int rc = 0;

	/* a trace's name on what cannot be read (a dangling link, a FIFO, a
	 * directory) may be a rank the shards lack: never passed over */
	{
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d)) != NULL) {
			char full[PATH_MAX];
			struct stat sb;

			if (de->d_name[0] == '.' || !is_trace_name(de->d_name))
				continue;
			snprintf(full, sizeof(full), "%s/%s", dir, de->d_name);
			if (stat(full, &sb) < 0 || !S_ISREG(sb.st_mode)) {
				ta_error_set(err, TA_EXIT_INPUT, "'%s': a trace's name beside "
					     "shards (*.tadb), on %s; its rank would be left out",
					     full, stat(full, &sb) < 0 ? strerror(errno) :
					     ta_file_kind(sb.st_mode));
				closedir(d);
				return -1;
			}
		}
		if (d)
			closedir(d);
	}
	/* quietly: a directory of shards alone has no traces */
	if (list_dir(dir, &traces, &nt, 1, &none) < 0)
		return 0;
	for (i = 0; i < nt && rc == 0; i++)
		if (!shard_of(shards, n, traces[i])) {
			ta_error_set(err, TA_EXIT_INPUT, "'%s': a trace beside shards (*.tadb) "
				     "that no shard was made from; its rank would be left out "
				     "(ingest it into the shards, or move one or the other)",
				     traces[i]);
			rc = -1;
		}
	ta_input_list_free(traces, nt);
	return rc;
}

int ta_is_pickle(const char *path)
{
	unsigned char head[2];
	gzFile f;
	int got, fd;

	/* a regular file only: a FIFO or device must not be read here */
	if (strcmp(path, "-") == 0 || (fd = ta_open_read(path, "", NULL)) < 0)
		return 0;
	if (!(f = gzdopen(fd, "rb"))) {
		close(fd);
		return 0;
	}
	got = gzread(f, head, 2);
	gzclose(f);
	/* PROTO 2 to 5: what pickle.dump and torch write; protocols 0 and 1
	 * have no header, so a name says so */
	return (got == 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5) ||
	       (got > 0 && (ends_with(path, ".pickle") || ends_with(path, ".pickle.gz") ||
			    ends_with(path, ".pkl") || ends_with(path, ".pkl.gz")));
}

/* A snapshot: read into a private temp database each time (small, and
 * quick to read). */
static int open_snapshot(const char *path, sqlite3 **db, struct ta_error *err)
{
	char base[PATH_MAX], *tmp = NULL;
	void *doomed;
	int rc, fd;

	snprintf(base, sizeof(base), "%s/traceanalyze.db", ta_tmpdir());
	/* removed by a signal too: a big snapshot takes a while */
	fd = ta_temp_create(base, &tmp, &doomed, err);
	if (fd < 0)
		return -1;
	rc = ta_snapshot_ingest(path, tmp, err);
	if (rc == 0)
		rc = ta_db_open(tmp, db, err);
	unlink(tmp);
	ta_cleanup_drop(doomed);
	close(fd);
	free(tmp);
	return rc;
}

/* Shards merge into a temp name beside out, renamed when complete. */
static int merge_shards(char **files, size_t n, const char *out,
			unsigned lazy_indexes, struct ta_error *err)
{
	char *tmp = NULL;
	void *doomed;
	int fd = ta_temp_create(out, &tmp, &doomed, err), rc;

	if (fd < 0)
		return -1;
	rc = ta_shards_merge(files, n, tmp, lazy_indexes, err);
	if (rc == 0 && rename(tmp, out) < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot rename '%s' to '%s'", tmp, out);
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	ta_cleanup_drop(doomed);
	close(fd);
	free(tmp);
	return rc;
}

/* A cache entry: traces parsed, or shards merged (an entry merged from a
 * user's shards is not marked one: it builds the model's rows each run,
 * as a user's database does). */
static int build(char **files, size_t n, int shards, const char *out,
		 const struct ta_ingest_opts *o, struct ta_error *err)
{
	struct ta_ingest_opts entry = *o;

	entry.cache_entry = 1;
	return shards ? merge_shards(files, n, out, o->lazy_indexes, err) :
			ta_ingest(files, n, out, &entry, err);
}

/* Ingests into a private temp file that disappears once it is open. */
static int open_uncached(char **files, size_t n, int shards,
			 const struct ta_ingest_opts *o, sqlite3 **db,
			 struct ta_error *err)
{
	char base[PATH_MAX], *path = NULL;
	void *doomed;
	int rc, fd;

	snprintf(base, sizeof(base), "%s/traceanalyze.db", ta_tmpdir());
	ta_temp_clean(ta_tmpdir(), "traceanalyze.db.tmp.", "");
	/* a signal removes what lands on the name, until it is unlinked */
	fd = ta_temp_create(base, &path, &doomed, err);
	if (fd < 0)
		return -1;
	/* the name is ours (mkstemp); the database lands on it by rename, and
	 * ext4 flushes a file renamed over another one (auto_da_alloc): 0.1 s
	 * of writeback on a 200 MB trace for a file that is deleted next */
	unlink(path);
	rc = shards ? ta_shards_merge(files, n, path, o->lazy_indexes, err) :
		      ta_ingest(files, n, path, o, err);
	if (rc == 0)
		rc = ta_db_open(path, db, err);
	unlink(path);
	ta_cleanup_drop(doomed);
	close(fd);
	free(path);
	return rc;
}

/* path's rollback journal: the name SQLite gives it */
static void journal_of(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s-journal", path);
}

static void unlink_journal(const char *path)
{
	char j[PATH_MAX + 16];

	journal_of(path, j, sizeof(j));
	unlink(j);
}

/* A journal beside the entry: an interrupted write, rolled back by the
 * first connection that may write (what SQLite does when it opens it);
 * where the cache cannot be written, the open that follows says so. */
static void rollback_journal(const char *path)
{
	char j[PATH_MAX + 16];
	sqlite3 *rw = NULL;

	journal_of(path, j, sizeof(j));
	if (access(j, F_OK) != 0)
		return;
	if (sqlite3_open_v2(path, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(rw, 2000);
		sqlite3_exec(rw, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	}
	sqlite3_close(rw);
}

/* The cache directory, made if missing; else why not. */
static const char *cache_dir(char *dir, size_t len)
{
	struct stat sb;
	int rc = ta_cache_dir(dir, len);

	if (rc == -1)
		return "no HOME, XDG_CACHE_HOME or TRACEANALYZE_CACHE_DIR";
	if (rc == -2)
		return "name too long";
	if (mkdir_p(dir) < 0 || stat(dir, &sb) < 0)
		return strerror(errno);
	return S_ISDIR(sb.st_mode) ? NULL : ta_file_kind(sb.st_mode);
}

/* Whether a database can be written into dir; else why not. */
static const char *cache_unwritable(const char *dir)
{
	char probe[PATH_MAX], *tmp = NULL;
	int fd;

	snprintf(probe, sizeof(probe), "%s/probe", dir);
	fd = ta_temp_create(probe, &tmp, NULL, NULL);
	if (fd < 0)
		return strerror(errno);
	unlink(tmp);
	close(fd);
	free(tmp);
	return NULL;
}

/* /dev/stdin, /dev/fd/0 or any name of this process's standard input
 * when that is a pipe or terminal: "-", read on purpose (any other FIFO
 * as PATH is an error, never a hang). */
static const char *as_stdin(const char *path)
{
	struct stat a, b;

	if (strcmp(path, "-") != 0 && stat(path, &a) == 0 && fstat(0, &b) == 0 &&
	    ta_same_file(&a, &b) && !S_ISREG(a.st_mode) && !S_ISDIR(a.st_mode))
		return "-";
	return path;
}

/* Several traces read by a per-rank command (shard_run.c) with two or
 * more jobs: each file becomes a shard of its own, parsed N at once by
 * child processes with a writer each, in the cache (one rank file
 * changed is one file parsed again) or, without one, in a temporary
 * directory. One database has one writer, which two files already keep
 * busy: two 200 MB ranks take 0.60x of -j 1 that way, 0.52x as shards.
 * With the default jobs only for 32 MB of files or more, and 1 MB a file
 * on average: below that a process per file gains nothing (a shard costs
 * about 15 ms to open and model whatever its size: 1024 ranks of 8 KB
 * took 19 s as shards, 2.5 s as one database); -j asks for it at any
 * size. (A command that needs more than the shards one by one merges
 * them, which took longer than parsing: 16 ranks of 200 MB, 51 s
 * against 37 s.) */
static int per_file(char **files, size_t n, const struct ta_ingest_opts *o)
{
	int64_t total = 0, mb = (int64_t)1 << 20;
	struct stat sb;
	size_t i;

	if (n < 2 || ta_jobs(o) < 2)
		return 0;
	if (o->jobs > 0)
		return 1;
	for (i = 0; i < n; i++)
		if (stat(files[i], &sb) == 0)
			total += (int64_t)sb.st_size;
	return total >= 32 * mb && total >= (int64_t)n * mb;
}

/* Without a cache: the files' shards in a new directory under TMPDIR
 * (*tmpdir, which the caller removes with them). */
static int temp_shards(char **files, size_t n, const struct ta_ingest_opts *o,
		       char ***paths, char **tmpdir, struct ta_buf *said,
		       struct ta_error *err)
{
	char dir[PATH_MAX - 32];
	void *made;
	size_t i;

	ta_temp_clean(ta_tmpdir(), "traceanalyze.db.tmp.", "");
	snprintf(dir, sizeof(dir), "%s/traceanalyze.shards.XXXXXX", ta_tmpdir());
	/* an interrupted run removes them (ta_input_shards_free: done) */
	if (!ta_cleanup_mkdtemp(dir, &made)) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': %s", dir, strerror(errno));
		return -1;
	}
	*paths = ta_xcalloc(n + 1, sizeof(**paths));
	for (i = 0; i < n; i++) {
		(*paths)[i] = ta_xmalloc(strlen(dir) + 32);
		sprintf((*paths)[i], "%s/%zu.db", dir, i);
		ta_cleanup_path((*paths)[i]);
	}
	*tmpdir = ta_xstrdup(dir);
	if (ta_shards_build(files, *paths, n, o, 1, said, err) == 0)
		return 0;
	ta_input_shards_free(*paths, n, *tmpdir);
	*paths = NULL;
	*tmpdir = NULL;
	return -1;
}

void ta_input_shards_free(char **paths, size_t n, char *tmpdir)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (tmpdir)
			unlink(paths[i]);
		free(paths[i]);
	}
	free(paths);
	if (tmpdir) {
		rmdir(tmpdir);
		ta_cleanup_drop_under(tmpdir);
	}
	free(tmpdir);
}

/* DIR/PATHS-CONTENT.db: the cache entry of these files (man: CACHE). */
static void entry_name(char *e, size_t len, const char *dir, char **files, size_t n)
{
	snprintf(e, len, "%s/%016llx-%016llx.db", dir,
		 (unsigned long long)ta_cache_paths_key(files, n),
		 (unsigned long long)ta_cache_content_key(files, n));
}

/* Whether every file has its entry: a read-only cache still serves. */
static int all_entries(char **files, size_t n, const char *dir)
{
	char e[PATH_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		entry_name(e, sizeof(e), dir, &files[i], 1);
		if (access(e, R_OK) != 0)
			return 0;
	}
	return 1;
}

/* Whether entry e can be read now: not when its journal is still there
 * and a read-only connection cannot roll it back (a full disk: a packed
 * entry's rollback appends), which is said. Damage is the shard
 * check's to find. */
static int usable_now(const char *e, struct ta_buf *said)
{
	struct ta_error why = { 0, "", 0 };
	char j[PATH_MAX + 16];
	sqlite3 *db = NULL;
	int ok;

	journal_of(e, j, sizeof(j));
	if (access(j, F_OK) != 0)
		return 1;
	ok = ta_db_open(e, &db, &why) == 0 || why.code == TA_EXIT_INPUT;
	sqlite3_close(db);
	if (!ok && !ta_quiet)
		ta_buf_addf(said, "traceanalyze: warning: %s; not using the cache\n", why.msg);
	return ok;
}

/* Each file's cache entry in dir (entries[i], allocated), made where
 * missing or stale: 0, 1 where one cannot be read now (said), -1. */
static int file_entries(char **files, size_t n, const char *dir,
			const struct ta_ingest_opts *o, char ***entries,
			char **again, struct ta_buf *said, struct ta_error *err)
{
	char **todo = ta_xcalloc(n + 1, sizeof(*todo)), **outs = ta_xcalloc(n + 1, sizeof(*outs));
	struct ta_ingest_opts entry = *o;
	size_t i, k = 0;
	int rc;

	ta_temp_clean(dir, "", ".db.tmp.");   /* dead writers' leftovers */
	*entries = ta_xcalloc(n + 1, sizeof(**entries));
	for (i = 0; i < n; i++) {
		char e[PATH_MAX];

		entry_name(e, sizeof(e), dir, &files[i], 1);
		(*entries)[i] = ta_xstrdup(e);
		/* as ta_input_open's entry: a link to nowhere goes, a
		 * directory with files in it leaves the cache out */
		switch (ta_cache_unodd(e)) {
		case 1:
			ta_warn("cached database '%s' was not a file; rebuilding it", e);
			break;
		case -1:
			if (!ta_quiet)
				ta_buf_addf(said, "traceanalyze: warning: '%s': a directory "
					    "that is not empty; not using the cache\n", e);
			ta_input_list_free(*entries, n);
			*entries = NULL;
			free(todo);
			free(outs);
			return 1;
		}
		if (access(e, F_OK) == 0) {
			/* a run killed adding to it left its journal: the
			 * shard check opens it read-only, and failed on it
			 * (the merged way then taken, and a second entry
			 * built, every run) */
			rollback_journal(e);
			if (!usable_now(e, said)) {
				ta_input_list_free(*entries, n);
				*entries = NULL;
				free(todo);
				free(outs);
				return 1;
			}
			ta_cache_touch(e);
			again[i] = ta_xstrdup(files[i]);
		} else {
			todo[k] = files[i];
			outs[k++] = (*entries)[i];
		}
	}
	if (k && o->verbose)
		ta_note("parsing %zu of %zu files into cache entries of their own", k, n);
	entry.cache_entry = 1;
	rc = ta_shards_build(todo, outs, k, &entry, 1, said, err);
	for (i = 0; rc == 0 && i < k; i++) {
		ta_cache_added(outs[i], &todo[i], 1);
		ta_cache_drop_older(dir, ta_cache_paths_key(&todo[i], 1), outs[i]);
	}
	free(todo);
	free(outs);
	if (rc < 0) {
		ta_input_list_free(*entries, n);
		*entries = NULL;
	}
	return rc;
}

void ta_input_again_free(char **again, size_t n)
{
	size_t i;

	for (i = 0; again && i < n; i++)
		free(again[i]);
	free(again);
}

size_t ta_input_shards(const char *path, const struct ta_ingest_opts *o,
		       char ***paths, char **tmpdir, int *given, char ***again,
		       struct ta_buf *said, struct ta_error *err)
{
	char **files = NULL, dir[PATH_MAX - 64];
	const char *why = NULL;
	size_t n = ta_shard_list(path, paths), nf = 0, i;
	struct stat sb;
	int made;

	*tmpdir = NULL;
	*again = NULL;
	*given = n > 0;
	if (n > 0 && ta_shard_dir_check(path, *paths, n, err) < 0) {
		ta_input_list_free(*paths, n);
		*paths = NULL;
		return 0;
	}
	if (n > 0) {
		/* the user's shards: what their parse said, said again */
		*again = ta_xcalloc(n, sizeof(**again));
		for (i = 0; i < n; i++)
			(*again)[i] = ta_xstrdup("");
	}
	if (n > 0 || ta_jobs(o) < 2 || stat(path, &sb) < 0 ||
	    !S_ISDIR(sb.st_mode))
		return n;
	/* quietly: the merged way, if it comes to that, says what it skips */
	if (list_dir(path, &files, &nf, 1, err) < 0 || !per_file(files, nf, o)) {
		ta_input_list_free(files, nf);
		return 0;
	}
	*again = ta_xcalloc(nf + 1, sizeof(**again));
	if (!o->no_cache && !(why = cache_dir(dir, sizeof(dir))) &&
	    (!(why = cache_unwritable(dir)) || all_entries(files, nf, dir))) {
		int rc = file_entries(files, nf, dir, o, paths, *again, said, err);

		/* an entry unusable now: the files parsed without the cache */
		for (i = 0; rc == 1 && i < nf; i++) {
			free((*again)[i]);
			(*again)[i] = NULL;
		}
		made = rc == 0 || (rc == 1 &&
				   temp_shards(files, nf, o, paths, tmpdir, said, err) == 0);
	} else {
		/* said as the merged way says it, once, if this way is taken */
		if (why && !ta_quiet)
			ta_buf_addf(said, "traceanalyze: warning: cache directory '%s': "
				    "%s; not caching\n", dir, why);
		made = temp_shards(files, nf, o, paths, tmpdir, said, err) == 0;
	}
	ta_input_list_free(files, nf);
	if (!made) {
		ta_input_again_free(*again, nf);
		*again = NULL;
		return 0;
	}
	files = NULL;
	n = nf;
	nf = 0;
	list_dir(path, &files, &nf, 0, err);   /* now say it */
	ta_input_list_free(files, nf);
	return n;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int cmp_base(const void *x, const void *y)
{
	return strcmp(base_of(*(char *const *)x), base_of(*(char *const *)y));
}

/* The one of files (n, sorted by name) that is the trace a cache entry's
 * row names: its name, size and modification time; NULL if none or two
 * are. A search by halves: 8,192 ranks compared every row with every
 * file, 67 M comparisons an open. */
static const char *given_of(char **by_base, size_t n, const char *stored,
			    int64_t bytes, int64_t mtime_ns)
{
	const char *sb = base_of(stored), *found = NULL;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(base_of(by_base[mid]), sb) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && strcmp(base_of(by_base[lo]), sb) == 0; lo++) {
		struct stat st;

		if (stat(by_base[lo], &st) < 0 || (int64_t)st.st_size != bytes ||
		    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != mtime_ns)
			continue;
		if (found)
			return NULL;
		found = by_base[lo];
	}
	return found;
}

/* A cache entry names its traces as the run that built it was given them
 * (maybe from another directory): messages and pages name them as this
 * run was (temp.given_paths, TA_GIVEN_PATH). Best effort: a path left
 * as stored is only a name. */
static void name_given(sqlite3 *db, char **files, size_t n)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	char **by_base = ta_xcalloc(n + 1, sizeof(*by_base));

	memcpy(by_base, files, n * sizeof(*by_base));
	ta_qsort(by_base, n, sizeof(*by_base), cmp_base);
	if (sqlite3_prepare_v2(db, "SELECT path, bytes, mtime_ns FROM main.files",
			       -1, &st, NULL) == SQLITE_OK)
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *p = (const char *)sqlite3_column_text(st, 0);
			const char *g = p ? given_of(by_base, n, p, sqlite3_column_int64(st, 1),
						     sqlite3_column_int64(st, 2)) : NULL;

			if (!g || strcmp(g, p) == 0)
				continue;
			/* the table only where a path differs */
			if (!ins && (sqlite3_exec(db, TA_GIVEN_PATHS_DDL, NULL, NULL,
						  NULL) != SQLITE_OK ||
				     sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO"
							" temp.given_paths VALUES (?, ?)",
							-1, &ins, NULL) != SQLITE_OK))
				break;
			sqlite3_bind_text(ins, 1, p, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, g, -1, SQLITE_STATIC);
			sqlite3_step(ins);
			sqlite3_reset(ins);
		}
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	free(by_base);
}

int ta_input_open(const char *path, const struct ta_ingest_opts *o,
		  sqlite3 **db, struct ta_error *err)
{
	char **files = NULL, dir[PATH_MAX - 64], cached[PATH_MAX];
	const char *why = NULL;
	uint64_t paths;
	size_t n = 0;
	int rc, shards;

	*db = NULL;
	path = as_stdin(path);
	if (is_sqlite_file(path))
		return open_checked(path, o, db, err);
	if (ta_is_pickle(path))
		return open_snapshot(path, db, err);
	/* a directory of shards (ingest FILE... -o DIR) is read as them */
	n = ta_shard_list(path, &files);
	shards = n > 0;
	if (shards && ta_shard_dir_check(path, files, n, err) < 0) {
		ta_input_list_free(files, n);
		return -1;
	}
	if (!shards && ta_input_list(path, &files, &n, err) < 0)
		return -1;
	if (o->no_cache || strcmp(path, "-") == 0 ||
	    (why = cache_dir(dir, sizeof(dir))) != NULL)
		goto uncached;
	ta_temp_clean(dir, "", ".db.tmp.");
	paths = ta_cache_paths_key(files, n);
	entry_name(cached, sizeof(cached), dir, files, n);
	/* a dangling link or a directory at the entry's name would fail
	 * every run (the entry is put in place only where none is): it goes,
	 * or (a directory with files in it) this run is not cached */
	switch (ta_cache_unodd(cached)) {
	case 1:
		ta_warn("cached database '%s' was not a file; rebuilding it", cached);
		break;
	case -1:
		why = "an entry's name is taken by a directory that is not empty";
		goto uncached;
	}
	/* a read-only cache still serves what it holds */
	if (access(cached, F_OK) == 0) {
		struct ta_error why_not = { 0, "", 0 };

		/* a run killed while adding to the entry left its journal:
		 * a read-only connection cannot roll it back, one that may
		 * write does (as it would if that run had failed) */
		rollback_journal(cached);
		if (ta_db_open(cached, db, &why_not) == 0) {
			if (o->verbose)
				ta_note("using the cached database '%s'", cached);
			ta_cache_touch(cached);
			name_given(*db, files, n);
			rc = report_damage(*db, o, err);
			if (rc < 0) {
				sqlite3_close(*db);
				*db = NULL;
			}
			goto out;
		}
		/* not damage (a journal it cannot roll back, no memory): the
		 * entry stays for a later run, this one parses without it */
		if (why_not.code != TA_EXIT_INPUT) {
			ta_warn("%s; not using the cache", why_not.msg);
			goto uncached;
		}
		ta_warn("cached database '%s' is damaged (%s); rebuilding it",
			cached, ta_msg_unnamed(why_not.msg, cached));
		unlink(cached);
		unlink_journal(cached);
		ta_db_damage_clear();   /* what SQLite met there, not the new one */
	}
	if ((why = cache_unwritable(dir)) != NULL)
		goto uncached;
	if (o->verbose)
		ta_note("parsing %zu files into the cached database '%s'", n, cached);
	/* the same traces, changed since: their old entry is stale */
	ta_cache_drop_older(dir, paths, cached);
	/* a journal with no entry is an old one's (a write cut short, the
	 * entry removed since): replayed onto the new entry, it damages it */
	if (access(cached, F_OK) != 0)
		unlink_journal(cached);
	rc = build(files, n, shards, cached, o, err);
	/* a cache that cannot take the entry (a full disk) is not the
	 * traces' fault: they are parsed without it, under TMPDIR */
	if (rc < 0 && err->code == TA_EXIT_SYSTEM) {
		ta_warn("%s; not caching", err->msg);
		goto uncached;
	}
	if (rc == 0) {
		int64_t max = ta_cache_max();

		ta_cache_added(cached, files, n);
		if (max < 0)
			ta_warn("TRACEANALYZE_CACHE_MAX='%s' is not a size (such as "
				"500M or 2G); the cache has no cap", getenv("TRACEANALYZE_CACHE_MAX"));
		ta_cache_evict(dir, max, cached);
		rc = ta_db_open(cached, db, err);
	}
	goto merged;
uncached:
	if (why)
		ta_warn("cache directory '%s': %s; not caching", dir, why);
	if (o->verbose)
		ta_note("parsing %zu files, not cached", n);
	rc = open_uncached(files, n, shards, o, db, err);
merged:
	/* shards merged: what their parse said (no parse here says it) */
	if (rc == 0 && shards && (rc = report_damage(*db, o, err)) < 0) {
		sqlite3_close(*db);
		*db = NULL;
	}
out:
	ta_input_list_free(files, n);
	return rc;
}

int ta_input_is_cached(const char *db_path)
{
	char name[PATH_MAX - 64], dir[PATH_MAX];
	size_t len;

	if (!db_path || ta_cache_dir(name, sizeof(name)) != 0 ||
	    !realpath(name, dir))
		return 0;
	len = strlen(dir);
	return strncmp(db_path, dir, len) == 0 && db_path[len] == '/' &&
	       !strchr(db_path + len + 1, '/');
}
