/* Packed databases (src/util/zvfs.c): a packed file reads as the plain one
 * it was packed from, takes writes, rollbacks and a second connection's
 * changes, survives a writer killed mid-transaction (SQLite's journal
 * restores it through the log), ignores a torn tail and cuts it before it
 * appends, and reports a damaged block as damage, never a crash. */
#include "check_main.h"
#include "ta.h"
#include "ta_ingest.h"
#include "ta_zvfs.h"

#include <dirent.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	ck_assert_msg(sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK,
		      "%s: %s", sql, msg ? msg : "");
}

static int64_t query_int(sqlite3 *db, const char *sql, int *rc)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;
	int r = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (r == SQLITE_OK && (r = sqlite3_step(st)) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc)
		*rc = r;
	return v;
}

static sqlite3 *open_db(const char *path)
{
	sqlite3 *db = NULL;

	ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
	return db;
}

/* A plain database of page_size bytes a page: rows of text that deflates
 * and of random bytes that does not (stored blocks), over many pages. */
static void make_plain(const char *path, int page_size)
{
	sqlite3 *db;
	char sql[160];

	unlink(path);
	db = open_db(path);
	snprintf(sql, sizeof(sql), "PRAGMA page_size = %d; PRAGMA journal_mode = OFF;",
		 page_size);
	exec_ok(db, sql);
	exec_ok(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT, b BLOB);"
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
		" WHERE i < 20000) INSERT INTO t SELECT i, printf('kernel %d of step"
		" %d', i % 97, i / 500), CASE WHEN i % 200 = 0 THEN randomblob(3000)"
		" END FROM n; CREATE INDEX t_s ON t (s);"
		/* pages of random bytes: blocks stored, not deflated */
		"CREATE TABLE r (b BLOB); INSERT INTO r VALUES (randomblob(300000));");
	sqlite3_close(db);
}

/* What a database holds, as one number (the same plain and packed). */
static int64_t digest(sqlite3 *db, int *rc)
{
	return query_int(db, "SELECT sum(id * 31 + length(s) + coalesce(length(b), 0)"
			 " + unicode(substr(s, 8)) + coalesce(unicode(hex(b)), 0))"
			 " FROM t", rc);
}

struct files {
	char *dir, plain[256], packed[256];
};

static void setup(struct files *f, int page_size)
{
	struct ta_error err = { 0 };

	f->dir = tmp_dir();
	snprintf(f->plain, sizeof(f->plain), "%s/plain.db", f->dir);
	snprintf(f->packed, sizeof(f->packed), "%s/packed.db", f->dir);
	make_plain(f->plain, page_size);
	ck_assert_msg(ta_zvfs_pack(f->plain, f->packed, 3, &err) == 0, "%s", err.msg);
}

/* The plain file's digest. */
static int64_t plain_digest(const struct files *f)
{
	sqlite3 *db = open_db(f->plain);
	int64_t v = digest(db, NULL);

	sqlite3_close(db);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Walks a packed file's records: where the whole ones end, and the
 * payload offset of the first record with flags (-1: none). */
static off_t walk(const char *path, uint32_t flags, off_t *first)
{
	FILE *fp = fopen(path, "rb");
	unsigned char h[32];
	off_t at = 32;

	ck_assert_ptr_nonnull(fp);
	*first = -1;
	while (fseeko(fp, at, SEEK_SET) == 0 && fread(h, 1, 32, fp) == 32 &&
	       get32(h) == 0x7a726563u && get32(h + 28) == (uint32_t)crc32(0, h, 28)) {
		if (*first < 0 && get32(h + 20) == flags)
			*first = at + 32;
		at += 32 + get32(h + 16);
	}
	fclose(fp);
	return at;
}

/* The file's size as SQLite sees it through the connection. */
static sqlite3_int64 logical_size(sqlite3 *db)
{
	sqlite3_file *f = NULL;
	sqlite3_int64 n = -1;

	ck_assert_int_eq(sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f),
			 SQLITE_OK);
	ck_assert_int_eq(f->pMethods->xFileSize(f, &n), SQLITE_OK);
	return n;
}

static void teardown(struct files *f)
{
	rm_tree(f->dir);
	free(f->dir);
}

static off_t size_of(const char *path)
{
	struct stat sb;

	ck_assert_int_eq(stat(path, &sb), 0);
	return sb.st_size;
}

/* A test's child: its result through a pipe, then killed, so that
 * valgrind (CK_FORK=no) runs no leak check in it to change its exit
 * code (what a child that stops mid-way holds is no leak). */
static int result_pipe[2];

static pid_t child_fork(void)
{
	pid_t pid;

	ck_assert_int_eq(pipe(result_pipe), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	close(result_pipe[pid == 0 ? 0 : 1]);
	return pid;
}

static void child_exit(int code)
{
	unsigned char c = (unsigned char)code;

	if (write(result_pipe[1], &c, 1) != 1)
		_exit(code);
	raise(SIGKILL);
	_exit(code);
}

static int child_wait(pid_t pid)
{
	unsigned char c = 255;
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(read(result_pipe[0], &c, 1), 1);
	close(result_pipe[0]);
	return c;
}

START_TEST(test_zvfs_reads_as_plain)
{
	struct files f;
	sqlite3 *a, *b;
	char head[16];
	FILE *fp;
	int rc;

	setup(&f, 65536);
	fp = fopen(f.packed, "rb");
	ck_assert_int_eq(fread(head, 1, sizeof(head), fp), sizeof(head));
	fclose(fp);
	ck_assert(ta_zvfs_is_packed(head, sizeof(head)));
	ck_assert_int_lt(size_of(f.packed), size_of(f.plain) / 2);
	a = open_db(f.plain);
	b = open_db(f.packed);
	ck_assert_int_eq(digest(b, &rc), digest(a, NULL));
	ck_assert_int_eq(query_int(b, "SELECT count(*) FROM t WHERE s = 'kernel 5 of step 3'",
				   NULL), query_int(a, "SELECT count(*) FROM t WHERE s ="
						    " 'kernel 5 of step 3'", NULL));
	ck_assert_int_eq(query_int(b, "SELECT quick_check = 'ok' FROM pragma_quick_check",
				   NULL), 1);
	sqlite3_close(a);
	sqlite3_close(b);
	teardown(&f);
}
END_TEST

/* The same statements on the plain file and the packed one: the same
 * contents after, read again by a new connection. Page size 4096 writes
 * parts of blocks. */
static void writes(int page_size)
{
	static const char *const steps[] = {
		"CREATE TABLE u AS SELECT id, s FROM t WHERE id % 3 = 0",
		"DELETE FROM t WHERE id % 7 = 0",
		"UPDATE t SET s = s || ' again' WHERE id % 11 = 0",
		"BEGIN; INSERT INTO t (s) SELECT s FROM t; ROLLBACK",
		"CREATE INDEX t_b ON t (b)",
		"VACUUM",                    /* truncates */
		"INSERT INTO t (s, b) SELECT s, zeroblob(100) FROM u",
	};
	struct files f;
	size_t i;
	int rc;

	setup(&f, page_size);
	for (i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		sqlite3 *a = open_db(f.plain), *b = open_db(f.packed);

		exec_ok(b, "PRAGMA cache_size = 4"); /* spills to the file mid-way */
		exec_ok(a, steps[i]);
		exec_ok(b, steps[i]);
		sqlite3_close(a);
		sqlite3_close(b);
		a = open_db(f.plain);
		b = open_db(f.packed);
		ck_assert_msg(query_int(a, "SELECT count(*) FROM t", NULL) ==
			      query_int(b, "SELECT count(*) FROM t", NULL), "after %s", steps[i]);
		ck_assert_msg(digest(a, NULL) == digest(b, &rc), "after %s", steps[i]);
		ck_assert_msg(query_int(b, "SELECT quick_check = 'ok' FROM pragma_quick_check",
					NULL) == 1, "after %s", steps[i]);
		/* grown and cut as the plain file was (VACUUM, the rollback) */
		ck_assert_msg(logical_size(b) == size_of(f.plain), "after %s: %lld, plain %lld",
			      steps[i], (long long)logical_size(b), (long long)size_of(f.plain));
		sqlite3_close(a);
		sqlite3_close(b);
	}
	teardown(&f);
}

START_TEST(test_zvfs_writes)
{
	writes(65536);
	writes(4096);
}
END_TEST

START_TEST(test_zvfs_two_connections)
{
	struct files f;
	sqlite3 *r, *w;

	setup(&f, 65536);
	r = open_db(f.packed);
	w = open_db(f.packed);
	ck_assert_int_eq(query_int(r, "SELECT count(*) FROM t", NULL), 20000);
	exec_ok(w, "CREATE TABLE later AS SELECT * FROM t WHERE id <= 1000;"
		"DELETE FROM t WHERE id > 15000");
	/* the reader sees the writer's records the next time it locks */
	ck_assert_int_eq(query_int(r, "SELECT count(*) FROM later", NULL), 1000);
	ck_assert_int_eq(query_int(r, "SELECT count(*) FROM t", NULL), 15000);
	sqlite3_close(r);
	sqlite3_close(w);
	teardown(&f);
}
END_TEST

/* A writer killed mid-transaction, its changes partly in the log: the
 * next connection rolls the journal back, and the file is as before. */
START_TEST(test_zvfs_killed_writer)
{
	struct files f;
	int64_t before;
	sqlite3 *db;
	pid_t pid;
	int rc;

	setup(&f, 65536);
	db = open_db(f.packed);
	before = digest(db, NULL);
	sqlite3_close(db);
	pid = child_fork();
	if (pid == 0) {
		db = open_db(f.packed);
		/* a small cache: pages go to the file before the commit */
		if (sqlite3_exec(db, "PRAGMA cache_size = 2; BEGIN;"
				 "UPDATE t SET s = s || ' changed';"
				 "INSERT INTO t (s, b) SELECT s, randomblob(500) FROM t;",
				 NULL, NULL, NULL) != SQLITE_OK)
			child_exit(2);
		child_exit(0); /* no commit, no close: as if killed */
	}
	ck_assert_int_eq(child_wait(pid), 0);
	{
		char journal[300];

		snprintf(journal, sizeof(journal), "%s-journal", f.packed);
		ck_assert_msg(access(journal, F_OK) == 0, "the killed writer left no journal");
	}
	db = open_db(f.packed);
	ck_assert_int_eq(digest(db, &rc), before);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM t", NULL), 20000);
	ck_assert_int_eq(query_int(db, "SELECT quick_check = 'ok' FROM pragma_quick_check",
				   NULL), 1);
	sqlite3_close(db);
	teardown(&f);
}
END_TEST

/* Runs sql on path in a child process whose files cannot grow past
 * limit bytes (a full disk): SQLite's result code. */
static int limited(const char *path, off_t limit, const char *sql)
{
	pid_t pid = child_fork();

	if (pid == 0) {
		struct rlimit lim = { (rlim_t)limit, (rlim_t)limit };
		sqlite3 *db = NULL;
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
			child_exit(100);
		sqlite3_open(path, &db);
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		sqlite3_close(db);
		child_exit(rc & 0xff);
	}
	return child_wait(pid);
}

/* A full disk mid-transaction (a file size limit here): the transaction
 * fails and SQLite leaves its journal, as it does after any write error.
 * The next connection that may write rolls it back without space (the
 * log went back to its prefix when the write failed: what the journal
 * restores is what it holds), and the file is as before, no larger. */
START_TEST(test_zvfs_full_disk)
{
	struct files f;
	int64_t before;
	off_t size;
	sqlite3 *db;
	int rc;
	char journal[300];

	setup(&f, 65536);
	snprintf(journal, sizeof(journal), "%s-journal", f.packed);
	db = open_db(f.packed);
	before = digest(db, NULL);
	sqlite3_close(db);
	size = size_of(f.packed);
	/* old pages changed (journaled), then new ones past the limit */
	rc = limited(f.packed, size + 100000, "PRAGMA cache_size = 2; UPDATE t SET s = s"
		     " || 'x' WHERE id < 50; INSERT INTO t (s, b) SELECT s, randomblob(2000)"
		     " FROM t");
	ck_assert_msg(rc != SQLITE_OK && rc != 100, "the transaction did not fail at the"
		      " limit (%d)", rc);
	ck_assert_int_le(size_of(f.packed), size);
	/* a connection that may write rolls the journal back, not one byte to spare */
	ck_assert_int_eq(limited(f.packed, size_of(f.packed), "SELECT count(*) FROM t"),
			 SQLITE_OK);
	ck_assert_msg(access(journal, F_OK) != 0, "the journal was not rolled back");
	ck_assert_int_le(size_of(f.packed), size);
	ck_assert_int_eq(sqlite3_open_v2(f.packed, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(digest(db, &rc), before);
	ck_assert_int_eq(rc, SQLITE_ROW);
	ck_assert_int_eq(query_int(db, "SELECT quick_check = 'ok' FROM pragma_quick_check",
				   NULL), 1);
	sqlite3_close(db);
	teardown(&f);
}
END_TEST

/* A connection opened while a writer's records are in the log, not yet
 * committed (it indexes them: the open takes no lock), then the writer
 * fails on a full disk and cuts them off: the reader reads the log again
 * when it next locks, not blocks past its end (it called the file
 * damaged, and the cache rebuilt a good entry). */
START_TEST(test_zvfs_reader_across_revert)
{
	struct files f;
	int64_t before;
	off_t size;
	sqlite3 *db;
	pid_t pid;
	int status;

	setup(&f, 65536);
	db = open_db(f.packed);
	before = digest(db, NULL);
	sqlite3_close(db);
	size = size_of(f.packed);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit lim = { (rlim_t)size + 1500000, (rlim_t)size + 1500000 };
		sqlite3 *w = NULL, *r = NULL;
		int rc;

		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
			_exit(100);
		sqlite3_open(f.packed, &w);
		/* pages rewritten and spilled (a small cache): in the log */
		if (sqlite3_exec(w, "PRAGMA cache_size = 2; BEGIN;"
				 " UPDATE t SET b = zeroblob(10) WHERE b IS NOT NULL;",
				 NULL, NULL, NULL) != SQLITE_OK)
			_exit(101);
		sqlite3_open_v2(f.packed, &r, SQLITE_OPEN_READONLY, NULL);
		rc = sqlite3_exec(w, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1"
				  " FROM n WHERE i < 20000) INSERT INTO t (s, b) SELECT 'x',"
				  " randomblob(2000) FROM n", NULL, NULL, NULL);
		/* the writer rolls its journal back itself, as the tool does */
		sqlite3_exec(w, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(w, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		sqlite3_close(w);
		if (rc == SQLITE_OK)
			_exit(102);
		if (digest(r, &rc) != before || rc != SQLITE_ROW)
			_exit(103);
		sqlite3_close(r);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the reader read the file as other data or damaged (%d)",
		      WEXITSTATUS(status));
	teardown(&f);
}
END_TEST

/* A small trace of 3000 kernels at path. */
static void write_trace(const char *path)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs("{\"traceEvents\": [", fp);
	for (int i = 0; i < 3000; i++)
		fprintf(fp, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\","
			" \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\":"
			" {\"stream\": 7, \"correlation\": %d}}", i ? "," : "", i % 50,
			i * 10, i + 1);
	fputs("]}", fp);
	fclose(fp);
}

/* A writer killed mid-transaction on entry, its pages in the log: a hot
 * journal. Its new pages first: the log is then longer than a trace's
 * database parsed afresh, which a limit of the entry's size lets through. */
static void kill_writer(const char *entry)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sqlite3 *db = NULL;

		sqlite3_open(entry, &db);
		if (sqlite3_exec(db, "PRAGMA cache_size = 2; BEGIN; CREATE TABLE pad AS"
				 " SELECT randomblob(4000000); DELETE FROM events;",
				 NULL, NULL, NULL) != SQLITE_OK)
			_exit(2);
		raise(SIGKILL);   /* killed: no commit, no close (nor valgrind's leak check) */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "the writer failed (%d)", status);
}

/* The cache entry of dir/cache (the one .db there). */
static void entry_of(const char *dir, char *out, size_t len)
{
	char cache[300];
	struct dirent *e;
	DIR *d;

	snprintf(cache, sizeof(cache), "%s/cache", dir);
	d = opendir(cache);
	ck_assert_ptr_nonnull(d);
	out[0] = 0;
	while ((e = readdir(d)) != NULL)
		if (strlen(e->d_name) > 3 && !strcmp(e->d_name + strlen(e->d_name) - 3, ".db"))
			snprintf(out, len, "%s/%s", cache, e->d_name);
	closedir(d);
	ck_assert_msg(out[0], "no entry in %s", cache);
}

/* ta_input_open on dir's trace in a child whose files cannot grow past
 * limit bytes (0: no limit): 0 when it opened it. */
static int open_limited(const char *dir, off_t limit)
{
	pid_t pid = child_fork();

	if (pid == 0) {
		struct ta_ingest_opts o = { 0 };
		struct ta_error err = { 0 };
		char trace[300];
		sqlite3 *db = NULL;

		if (limit) {
			struct rlimit lim = { (rlim_t)limit, (rlim_t)limit };

			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
				child_exit(100);
		}
		snprintf(trace, sizeof(trace), "%s/rank-0.json", dir);
		if (ta_input_open(trace, &o, &db, &err) == 0 && db)
			child_exit(0);
		child_exit(1);
	}
	return child_wait(pid);
}

static char *kept_dir2;   /* as kept_dir, below */

/* A packed cache entry with a hot journal that cannot be rolled back now
 * (a writer killed, then a full disk): not damage. The run parses the
 * trace without the cache and leaves the entry; a later one, with space,
 * rolls the journal back and uses it. (It was deleted as damaged, and
 * its rebuild failed on the full disk: every command failed.) */
START_TEST(test_zvfs_entry_journal_full)
{
	char *dir = kept_dir2 = tmp_dir(), path[300], entry[400], journal[420], cache[300];
	struct stat before, after;
	sqlite3 *db;

	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("TRACEANALYZE_CACHE_DIR", cache, 1);
	snprintf(path, sizeof(path), "%s/rank-0.json", dir);
	write_trace(path);
	ck_assert_int_eq(open_limited(dir, 0), 0);
	entry_of(dir, entry, sizeof(entry));
	ck_assert_int_eq(stat(entry, &before), 0);
	kill_writer(entry);
	snprintf(journal, sizeof(journal), "%s-journal", entry);
	ck_assert_msg(access(journal, F_OK) == 0, "the killed writer left no journal");
	/* no space: opened all the same, without the cache */
	ck_assert_int_eq(stat(entry, &after), 0);
	ck_assert_int_eq(open_limited(dir, after.st_size), 0);
	ck_assert_int_eq(stat(entry, &after), 0);
	ck_assert_msg(after.st_ino == before.st_ino, "the entry was rebuilt");
	ck_assert_msg(access(journal, F_OK) == 0, "rolled back after all: not the case");
	/* space again: the journal rolled back, the entry used as it was */
	ck_assert_int_eq(open_limited(dir, 0), 0);
	ck_assert_msg(access(journal, F_OK) != 0, "the journal is still there");
	ck_assert_int_eq(stat(entry, &after), 0);
	ck_assert_msg(after.st_ino == before.st_ino, "the entry was rebuilt");
	db = open_db(entry);
	ck_assert_int_eq(query_int(db, "SELECT count(*) FROM events", NULL), 3000);
	sqlite3_close(db);
	unsetenv("TRACEANALYZE_CACHE_DIR");
	rm_tree(dir);
	free(dir);
}
END_TEST

/* ta_input_shards on dir's two traces (an entry each) in a child whose
 * files cannot grow past limit (0: none): 0, with the shards in the cache;
 * 1, parsed without it (a temporary directory); else failed. */
static int shards_limited(const char *dir, off_t limit)
{
	pid_t pid = child_fork();

	if (pid == 0) {
		struct ta_ingest_opts o = { .jobs = 2 };
		struct ta_error err = { 0 };
		struct ta_buf said = { 0 };
		char **paths = NULL, *tmpdir = NULL;
		int given = 0;
		size_t n;

		if (limit) {
			struct rlimit lim = { (rlim_t)limit, (rlim_t)limit };

			signal(SIGXFSZ, SIG_IGN);
			if (setrlimit(RLIMIT_FSIZE, &lim) < 0)
				child_exit(100);
		}
		int code;

		char **again = NULL;

		n = ta_input_shards(dir, &o, &paths, &tmpdir, &given, &again, &said, &err);
		code = n != 2 ? 2 : tmpdir ? 1 : 0;
		ta_input_shards_free(paths, n, tmpdir);
		ta_input_again_free(again, n);
		ta_buf_free(&said);
		child_exit(code);
	}
	return child_wait(pid);
}

/* The same for a directory read an entry per file: an entry whose
 * journal cannot be rolled back now is left, the files are parsed
 * without the cache (it took the merged way, whose new entry the full
 * disk failed: exit 4); with space, the entries serve again. */
/* the tests' directories where valgrind (CK_FORK=no) sees them from the
 * children they fork, which _exit holding them */
static char *kept_dir;

START_TEST(test_zvfs_shard_journal_full)
{
	char *dir = kept_dir = tmp_dir(), path[300], cache[300], entry[400], journal[420];
	struct dirent *e;
	struct stat sb;
	DIR *d;

	snprintf(cache, sizeof(cache), "%s/cache", dir);
	setenv("TRACEANALYZE_CACHE_DIR", cache, 1);
	snprintf(path, sizeof(path), "%s/traces", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/traces/rank-0.json", dir);
	write_trace(path);
	snprintf(path, sizeof(path), "%s/traces/rank-1.json", dir);
	write_trace(path);
	snprintf(path, sizeof(path), "%s/traces", dir);
	ck_assert_int_eq(shards_limited(path, 0), 0);
	d = opendir(cache);
	ck_assert_ptr_nonnull(d);
	entry[0] = 0;
	while ((e = readdir(d)) != NULL)
		if (!entry[0] && strlen(e->d_name) > 3 &&
		    !strcmp(e->d_name + strlen(e->d_name) - 3, ".db"))
			snprintf(entry, sizeof(entry), "%s/%s", cache, e->d_name);
	closedir(d);
	ck_assert_msg(entry[0], "no entries");
	kill_writer(entry);
	snprintf(journal, sizeof(journal), "%s-journal", entry);
	ck_assert_int_eq(access(journal, F_OK), 0);
	ck_assert_int_eq(stat(entry, &sb), 0);
	ck_assert_int_eq(shards_limited(path, sb.st_size), 1);
	ck_assert_msg(access(journal, F_OK) == 0, "rolled back after all: not the case");
	ck_assert_int_eq(shards_limited(path, 0), 0);
	ck_assert_msg(access(journal, F_OK) != 0, "the journal is still there");
	unsetenv("TRACEANALYZE_CACHE_DIR");
	rm_tree(dir);
	free(dir);
}
END_TEST

static void append_bytes(const char *path, const void *p, size_t n)
{
	FILE *fp = fopen(path, "ab");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fwrite(p, 1, n, fp), n);
	fclose(fp);
}

/* A torn record at the end (a crash mid-append) is not read, and a
 * writer cuts it before appending its own. */
START_TEST(test_zvfs_torn_tail)
{
	static unsigned char torn[100000];
	struct files f;
	off_t whole;
	sqlite3 *db;
	int64_t want;
	int rc;

	setup(&f, 65536);
	whole = size_of(f.packed);
	memset(torn, 0x5a, sizeof(torn));
	memcpy(torn, "\x63\x65\x72\x7a", 4);  /* a record's magic, then junk */
	append_bytes(f.packed, torn, sizeof(torn));
	db = open_db(f.packed);
	want = plain_digest(&f);
	ck_assert_int_eq(digest(db, &rc), want);
	exec_ok(db, "CREATE TABLE w (x); INSERT INTO w VALUES (1)");
	sqlite3_close(db);
	db = open_db(f.packed);
	ck_assert_int_eq(query_int(db, "SELECT x FROM w", NULL), 1);
	ck_assert_int_eq(digest(db, &rc), want);
	sqlite3_close(db);
	/* the junk went: the file is whole records, end to end */
	{
		off_t none, end = walk(f.packed, 0, &none);

		ck_assert_int_gt(end, whole);
		ck_assert_int_eq(end, size_of(f.packed));
	}
	teardown(&f);
}
END_TEST

/* Damage in a block's payload, and records forged to grow the index or
 * overrun a buffer: SQLite's damage (or the log's end), never a crash. */
START_TEST(test_zvfs_damage)
{
	struct files f;
	sqlite3 *db;
	FILE *fp;
	int rc, c;

	int seen;
	off_t at[] = { 32 + 32 + 100, 0, 0 };  /* block 0's payload, the middle, near the end */
	size_t i;

	for (i = 0; i < sizeof(at) / sizeof(*at); i++) {
		setup(&f, 65536);
		at[1] = size_of(f.packed) / 2;
		at[2] = size_of(f.packed) - 5000;
		fp = fopen(f.packed, "r+b");
		ck_assert_int_eq(fseeko(fp, at[i], SEEK_SET), 0);
		c = fgetc(fp);
		ck_assert_int_eq(fseeko(fp, at[i], SEEK_SET), 0);
		fputc(c ^ 0x40, fp);
		fclose(fp);
		/* page 1 damaged: the open says so; else the pages' check */
		rc = sqlite3_open(f.packed, &db);
		seen = (rc & 0xff) == SQLITE_CORRUPT;
		if (rc == SQLITE_OK) {
			int64_t ok = query_int(db, "SELECT quick_check = 'ok' FROM"
					       " pragma_quick_check", &rc);

			seen = (rc & 0xff) == SQLITE_CORRUPT || (rc == SQLITE_ROW && ok == 0);
		}
		ck_assert_msg(seen, "damage at %lld not seen (%d)", (long long)at[i], rc);
		sqlite3_close(db);
		teardown(&f);
	}
}
END_TEST

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

/* A forged record: header crc right, fields hostile. */
static void forged(const char *path, uint32_t block, uint64_t size, uint32_t len,
		   uint32_t flags)
{
	unsigned char h[32 + 70000];

	memset(h, 0, sizeof(h));
	put32(h, 0x7a726563u);
	put32(h + 4, block);
	put32(h + 8, (uint32_t)size);
	put32(h + 12, (uint32_t)(size >> 32));
	put32(h + 16, len);
	put32(h + 20, flags);
	put32(h + 24, (uint32_t)crc32(0, h + 32, len));
	put32(h + 28, (uint32_t)crc32(0, h, 28));
	append_bytes(path, h, 32 + len);
}

START_TEST(test_zvfs_forged)
{
	static const struct { uint32_t block; uint64_t size; uint32_t len, flags; } bad[] = {
		{ 0xfffffff0u, (uint64_t)1 << 50, 10, 0 },   /* the index to petabytes */
		{ 0x7ffffffu, (uint64_t)1 << 38, 10, 0 },    /* past its own size */
		{ 1, 1 << 20, 100, 1 },                      /* stored, short */
		{ 1, 1 << 20, 66000, 1 },                    /* stored, past the block */
		{ 1, 1 << 20, 60000, 6 },                    /* flags unknown */
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct files f;
		sqlite3 *db;

		setup(&f, 65536);
		forged(f.packed, bad[i].block, bad[i].size, bad[i].len, bad[i].flags);
		db = open_db(f.packed);
		ck_assert_msg(digest(db, &rc) == plain_digest(&f),
			      "forged record %zu read", i);
		sqlite3_close(db);
		teardown(&f);
	}
}
END_TEST

/* Whole records no writer of ours makes, header crc right: a block far
 * past what the records before it hold (block 4194303 of a 256 GB size,
 * then the size back: every open indexed 4 million blocks, 200 MB, and
 * each later size record walked them all), and a size that is not whole
 * pages. Damage: refused at the open or the first read, in no time. */
START_TEST(test_zvfs_implausible)
{
	static const struct { uint32_t block; uint64_t size; } bad[] = {
		{ 4194303u, (uint64_t)1 << 38 },
		{ 0xffffffffu, 1000 },
	};
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct files f;
		sqlite3 *db = NULL;
		struct stat st;

		setup(&f, 65536);
		ck_assert_int_eq(stat(f.plain, &st), 0);
		forged(f.packed, bad[i].block, bad[i].size, bad[i].block == 0xffffffffu ? 0 : 10, 0);
		forged(f.packed, 0xffffffffu, (uint64_t)st.st_size, 0, 0);
		rc = sqlite3_open(f.packed, &db);
		if (rc == SQLITE_OK)
			query_int(db, "SELECT count(*) FROM t", &rc);
		ck_assert_msg((rc & 0xff) == SQLITE_CORRUPT, "record %zu: %d", i, rc);
		sqlite3_close(db);
		teardown(&f);
	}
}
END_TEST

/* A stored block (random bytes, not deflated) has only its crc to tell
 * damage from data. */
START_TEST(test_zvfs_stored_damage)
{
	struct files f;
	sqlite3 *db;
	off_t at;
	FILE *fp;
	int rc, c;

	setup(&f, 65536);
	walk(f.packed, 1, &at);
	ck_assert_int_gt(at, 0);
	fp = fopen(f.packed, "r+b");
	ck_assert_int_eq(fseeko(fp, at + 30000, SEEK_SET), 0);
	c = fgetc(fp);
	ck_assert_int_eq(fseeko(fp, at + 30000, SEEK_SET), 0);
	fputc(c ^ 1, fp);
	fclose(fp);
	db = open_db(f.packed);
	query_int(db, "SELECT length(hex(b)) FROM r", &rc);
	ck_assert_int_eq(rc & 0xff, SQLITE_CORRUPT);
	sqlite3_close(db);
	teardown(&f);
}
END_TEST

Suite *suite_zvfs(void)
{
	Suite *s = suite_create("zvfs");
	TCase *tc = tcase_create("zvfs");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_zvfs_reads_as_plain);
	tcase_add_test(tc, test_zvfs_writes);
	tcase_add_test(tc, test_zvfs_two_connections);
	tcase_add_test(tc, test_zvfs_killed_writer);
	tcase_add_test(tc, test_zvfs_full_disk);
	tcase_add_test(tc, test_zvfs_entry_journal_full);
	tcase_add_test(tc, test_zvfs_reader_across_revert);
	tcase_add_test(tc, test_zvfs_shard_journal_full);
	tcase_add_test(tc, test_zvfs_torn_tail);
	tcase_add_test(tc, test_zvfs_damage);
	tcase_add_test(tc, test_zvfs_stored_damage);
	tcase_add_test(tc, test_zvfs_forged);
	tcase_add_test(tc, test_zvfs_implausible);
	suite_add_tcase(s, tc);
	return s;
}
