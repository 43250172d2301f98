/* A per-rank command on a directory of shards: each shard analysed on its
 * own, its rows appended in rank order, with no merged copy of the rows
 * (merging costs more than parsing). The commands here give a rank's rows
 * from that rank's events alone (and, for a few, every rank's collectives,
 * gathered first), in rank order: the concatenation is the
 * table the merged database gives, which tests/shards.sh checks byte for
 * byte on every format. Anything unusual (--ranks, --hta-compat, a shard
 * that fails, tables that differ in shape) goes the merged way. */
#include "commands/cli.h"
#include "exec/progress.h"
#include "commands/commands.h"
#include "ta_analyses.h"
#include "ta_cleanup.h"
#include "ta_db.h"
#include "ta_files.h"
#include "ta_ingest.h"
#include "ta_model.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The rules commands name (their declaration's rule, or an after_parse
 * by their options; a per-rank or peers spread alone: these). Per rank: checked option by
 * option on every sample (queue, launch and annotations set theirs:
 * --series, --by-op and --kernels read across ranks; kernels too). */
const struct ta_shard_rule ta_shard_per_rank = { 0, 0, NULL, NULL, NULL };

/* Rows per rank, but what the other ranks did matters too, through their
 * collectives alone (a late peer's wait): every shard's coll is gathered
 * first (a small file, attached as "peers"), then each shard runs as
 * above; stragglers' notes are about every rank (the matching), said
 * once, and the late peers' causes are named over all rows. Not here:
 * diagnose, whose findings and path check span ranks. (kernels --by type,
 * which adds up over ranks, and critical-path, whose paths go on in other
 * shards in further rounds, set their rules themselves: they depend on
 * options.) */
const struct ta_shard_rule ta_shard_with_peers = { 1, 0, NULL, NULL, NULL };
const struct ta_shard_rule ta_shard_stragglers = { 1, 1, ta_stragglers_join, NULL, NULL };
/* comms: with peers, and the matching's notes (about every rank) once */
const struct ta_shard_rule ta_shard_comms = { 1, 1, NULL, NULL, NULL };
/* kernels --by type (and report's table of it): each shard's time per
 * type, added up */
const struct ta_shard_rule ta_shard_kernel_types = { 0, 0, ta_kernels_types_join, NULL,
							    NULL };


struct shard {
	char *path;
	int64_t rank;
	int again;      /* its check met the machine's limits: once more, alone */
	const char *shown;  /* not parsed by this run: its trace's path, or "" */
	char *noted;    /* what its parse said, to say again (check_one) */
};

/* What each shard runs. */
struct job {
	ta_analysis_fn fn;
	void *ctx;
	const struct ta_query *q;
	const char *peers;  /* every shard's collectives, or NULL */
	int same_notes;     /* notes are about all ranks: said once */
	const char *what;   /* for the progress line */
};

/* Shard done of n on a terminal (ta_progress_work). */
static void progress(const struct job *j, size_t done, size_t n)
{
	if (isatty(2) && !ta_quiet)
		ta_progress_work(j->what, done, n);
}

static int by_rank(const void *a, const void *b)
{
	const struct shard *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int attach_peers(sqlite3 *db, const char *peers)
{
	sqlite3_stmt *st = NULL;
	int ok;

	if (!peers)
		return 1;
	ok = sqlite3_prepare_v2(db, "ATTACH ? AS peers", -1, &st, NULL) == SQLITE_OK &&
	     sqlite3_bind_text(st, 1, peers, -1, SQLITE_STATIC) == SQLITE_OK &&
	     sqlite3_step(st) == SQLITE_DONE;
	sqlite3_finalize(st);
	return ok;
}

/* One shard's table, in this process. */
static int run_one(const char *path, const struct job *j, struct ta_table **t)
{
	struct ta_error err = { 0, "", 0 };
	sqlite3 *db = NULL;
	int ok = ta_db_open(path, &db, &err) == 0 && attach_peers(db, j->peers) &&
		 j->fn(db, j->q, j->ctx, t, &err) == 0;

	sqlite3_close(db);
	if (!ok) {
		ta_table_free(*t);
		*t = NULL;
	}
	return ok;
}

/* Starts children for the next shards while fewer than jobs - 1 run: a
 * child writes its table to out[i] and its stderr to errs[i]. */
static int launch(const struct shard *s, size_t n, const struct job *j,
		  FILE **out, FILE **errs, pid_t *pid, void **child, size_t *next,
		  size_t *running, int jobs)
{
	while (*next < n && *running < (size_t)jobs - 1) {
		size_t i = (*next)++;

		out[i] = tmpfile();
		errs[i] = tmpfile();
		if (!out[i] || !errs[i] || (pid[i] = ta_cleanup_fork(&child[i])) < 0)
			return 0;
		if (pid[i] == 0) {
			struct ta_table *t = NULL;
			int r;

			dup2(fileno(errs[i]), 2);
			r = run_one(s[i].path, j, &t);
			if (r)
				ta_table_write_wire(out[i], t);
			fflush(NULL);
			_exit(r && !ferror(out[i]) ? 0 : 1);
		}
		(*running)++;
	}
	return 1;
}

/* Shard i's table onto all, and what its child said; its files closed. */
static int take(FILE **out, FILE **errs, const int *status, size_t i,
		struct ta_table *all, int same_notes)
{
	int ok = status[i] == 1 && all;

	if (ok) {
		rewind(out[i]);
		ok = ta_table_read_wire(out[i], all, same_notes);
	}
	if (ok)
		ta_stderr_replay(errs[i]);
	fclose(out[i]);
	fclose(errs[i]);
	out[i] = errs[i] = NULL;
	return ok;
}

/* Every shard's table, rank 0's here and the others in up to -j child
 * processes (each its own SQLite connection and model), appended in rank
 * order. Without -j 2 or more: one after another, here. */
static int run_all(const struct ta_cli *cli, const struct job *j,
		   const struct shard *s, size_t n, struct ta_table **all)
{
	int jobs = ta_jobs(&cli->ingest);
	FILE **out, **errs;
	pid_t *pid;
	void **child;  /* stopped on a signal until waited for */
	int *status, ok;
	size_t i, next = 1, running = 0, appended = 1;

	progress(j, 0, n);   /* the clock starts: shown after a second */
	if (jobs < 2 || n < 2) {
		ok = run_one(s[0].path, j, all);
		for (i = 1; ok && i < n; i++) {
			struct ta_table *t = NULL;

			progress(j, i, n);
			ok = run_one(s[i].path, j, &t) && ta_table_append(*all, t, j->same_notes);
			ta_table_free(t);
		}
		progress(j, n, n);
		return ok;
	}
	out = ta_xcalloc(n, sizeof(*out));
	errs = ta_xcalloc(n, sizeof(*errs));
	pid = ta_xcalloc(n, sizeof(*pid));
	child = ta_xcalloc(n, sizeof(*child));
	status = ta_xcalloc(n, sizeof(*status));
	fflush(NULL);
	ok = launch(s, n, j, out, errs, pid, child, &next, &running, jobs);
	/* rank 0 here while the others run */
	ok = run_one(s[0].path, j, all) && ok;
	while (running) {
		int st;
		pid_t p = wait(&st);

		if (p < 0)
			break;
		for (i = 1; i < n; i++)
			if (pid[i] == p) {
				status[i] = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 1 : -1;
				ta_cleanup_drop(child[i]);
			}
		running--;
		/* tables in rank order as they come, their files closed: a
		 * thousand shards must not hold two thousand files open */
		while (ok && appended < next && status[appended] != 0)
			ok = take(out, errs, status, appended++, *all, j->same_notes);
		progress(j, appended, n);
		if (ok)
			ok = launch(s, n, j, out, errs, pid, child, &next, &running, jobs);
	}
	while (ok && appended < n)
		ok = status[appended] != 0 &&
		     take(out, errs, status, appended++, *all, j->same_notes);
	for (i = 1; i < n; i++) {
		if (out[i])
			fclose(out[i]);
		if (errs[i])
			fclose(errs[i]);
	}
	for (i = 1; i < n; i++)  /* any left when wait failed */
		ta_cleanup_drop(child[i]);
	free(out);
	free(errs);
	free(pid);
	free(child);
	free(status);
	progress(j, n, n);
	return ok;
}

/* DIR/coll-RANK.db: one shard's collectives, gathered into DIR/peers.db. */
static void coll_part(char *path, size_t len, const char *dir, int64_t rank)
{
	snprintf(path, len, "%s/coll-%lld.db", dir, (long long)rank);
}

/* Phase one of a cross-rank command: the shard's collectives into its
 * coll_part; the table says nothing. */
static int export_coll(sqlite3 *db, const struct ta_query *q, void *ctx,
		       struct ta_table **t, struct ta_error *err)
{
	static const struct ta_col none[] = { { "rank", TA_COL_INT, TA_UNIT_NONE, 1 } };
	char path[PATH_MAX];
	int64_t rank;

	if (ta_db_get_int(db, "SELECT rank FROM files", -1, &rank, err) < 0)
		return -1;
	coll_part(path, sizeof(path), ctx, rank);
	if (ta_model_export_coll(db, q, path, err) < 0)
		return -1;
	*t = ta_table_new("collectives", none, 1);
	return 0;
}

/* What a shard's part holds (ta_model_export_coll): its collectives, its
 * traits, its earliest time. */
static const char *const part_tables[] = { "coll", "traits", "clock" };

/* Whether shard s keeps a part q may read (ta_model_keep): then it is
 * read from there, not made by a process of its own. */
static int has_part(const struct shard *s, const struct ta_query *q)
{
	struct ta_error err = { 0, "", 0 };
	sqlite3 *db = NULL, *none = NULL;
	int ok;

	if (ta_db_open(s->path, &db, &err) < 0)
		return 0;
	/* into no database: only whether it would be read */
	ok = sqlite3_open(":memory:", &none) == SQLITE_OK &&
	     ta_model_read_part(db, q, none, &err) == 1;
	sqlite3_close(none);
	sqlite3_close(db);
	return ok;
}

/* Shard i's part into peers: kept in the shard, or exported to DIR. */
static int copy_part(const struct shard *s, int kept, const struct ta_query *q,
		     const char *dir, sqlite3 *peers, struct ta_error *err)
{
	char path[PATH_MAX];
	sqlite3 *part = NULL;
	size_t t;
	int ok;

	if (kept) {
		ok = ta_db_open(s->path, &part, err) == 0 &&
		     ta_model_read_part(part, q, peers, err) == 1;
		sqlite3_close(part);
		return ok;
	}
	coll_part(path, sizeof(path), dir, s->rank);
	ok = sqlite3_open_v2(path, &part, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
	for (t = 0; ok && t < sizeof(part_tables) / sizeof(*part_tables); t++) {
		char sql[64];

		snprintf(sql, sizeof(sql), "SELECT * FROM %s", part_tables[t]);
		ok = ta_db_copy_rows(part, sql, peers, part_tables[t], err) == 0;
	}
	sqlite3_close(part);
	unlink(path);
	return ok;
}

/* Every shard's collectives, in rank order, into DIR/peers.db: each
 * shard's kept part, or else exported by a process of its own. */
static int gather_coll(const struct ta_cli *cli, const struct ta_query *q,
		       const struct shard *s, size_t n, const char *dir)
{
	struct job j = { export_coll, (void *)dir, q, NULL, 1, "collectives" };
	struct ta_table *none = NULL;
	struct ta_error err = { 0, "", 0 };
	struct shard *made = ta_xcalloc(n + 1, sizeof(*made));
	int *kept = ta_xcalloc(n + 1, sizeof(*kept));
	char path[PATH_MAX];
	sqlite3 *peers = NULL;
	size_t i, nmade = 0;
	int ok = 1;

	for (i = 0; i < n; i++)
		if (!(kept[i] = has_part(&s[i], q)))
			made[nmade++] = s[i];
	if (nmade)
		ok = run_all(cli, &j, made, nmade, &none);
	ta_table_free(none);
	snprintf(path, sizeof(path), "%s/peers.db", dir);
	ok = ok && sqlite3_open_v2(path, &peers, SQLITE_OPEN_READWRITE |
				   SQLITE_OPEN_CREATE, NULL) == SQLITE_OK &&
	     ta_db_exec(peers, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF",
			&err) == 0;
	for (i = 0; ok && i < n; i++)
		ok = copy_part(&s[i], kept[i], q, dir, peers, &err);
	/* matched here once, not again in every shard (a cost per shard
	 * that grows with the ranks) */
	ok = ok && ta_peers_save(peers, &err) == 0;
	sqlite3_close(peers);
	free(made);
	free(kept);
	return ok;
}

/* A private directory for the gathered collectives, removed by done_coll
 * (or by a signal, with what is in it). */
static char *start_coll(const struct shard *s, size_t n)
{
	char dir[PATH_MAX - 64], path[PATH_MAX];
	void *made;
	size_t i;

	snprintf(dir, sizeof(dir), "%s/traceanalyze.peers.XXXXXX", ta_tmpdir());
	if (!ta_cleanup_mkdtemp(dir, &made))
		return NULL;
	for (i = 0; i < n; i++) {
		coll_part(path, sizeof(path), dir, s[i].rank);
		ta_cleanup_path(path);
	}
	snprintf(path, sizeof(path), "%s/peers.db", dir);
	ta_cleanup_path(path);
	return ta_xstrdup(dir);
}

static void done_coll(char *dir, const struct shard *s, size_t n)
{
	char path[PATH_MAX];
	size_t i;

	if (!dir)
		return;
	for (i = 0; i < n; i++) {  /* a failed run leaves parts */
		coll_part(path, sizeof(path), dir, s[i].rank);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/peers.db", dir);
	unlink(path);
	rmdir(dir);
	ta_cleanup_drop_under(dir);
	free(dir);
}

struct ta_shards {
	const struct ta_cli *cli;
	struct ta_query q;
	struct shard *s;
	size_t n;
	char **paths, *tmpdir;
	char **again;         /* ta_input_shards's, for shard.shown */
	struct ta_buf said;   /* parsing's warnings, said if the shards serve */
	char *coll_dir;       /* every shard's collectives, once gathered */
	char peers[PATH_MAX];
	int failed;           /* gathering failed: the merged way */
};

/* Shards checked by threads, one at a time each (a given shard is read
 * whole by SQLite's quick_check: serially, 16 shards of 200 MB took the
 * parent 8 s before any child started). */
struct check_work {
	struct shard *s;
	size_t n;
	int given, memo;     /* the user's shards; checks remembered */
	atomic_size_t next;
	atomic_int bad;
};

/* What the shard's parse said of its trace (kept as 'noted:N'), said
 * again, with the trace's path as given now where there is one. */
static char *kept_notes(sqlite3 *db, const char *shown)
{
	sqlite3_stmt *st = NULL;
	struct ta_buf b = { 0 };

	if (ta_quiet || sqlite3_prepare_v2(db, "SELECT value ->> 0, value ->> 1"
					   " FROM info WHERE key GLOB 'noted:*' AND"
					   " json_valid(value) ORDER BY rowid", -1,
					   &st, NULL) != SQLITE_OK)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(st, 0);
		char p[PATH_MAX], what[1024];

		ta_buf_addf(&b, "traceanalyze: warning: '%s': %s\n",
			    ta_no_controls(p, sizeof(p), shown[0] ? shown : path),
			    ta_no_controls(what, sizeof(what), (const char *)
					   sqlite3_column_text(st, 1)));
	}
	sqlite3_finalize(st);
	return b.s;
}

static int check_one(struct shard *s, int given, int memo)
{
	sqlite3 *db = NULL;
	struct ta_error err = { 0, "", 0 };
	int ok = ta_db_open(s->path, &db, &err) == 0 &&
		 (!given || ta_db_validate(db, s->path, 1, memo, &err) == 0) &&
		 ta_db_get_int(db, "SELECT rank FROM files", -1, &s->rank, &err) == 0 &&
		 ta_db_int(db, "SELECT count(*) FROM files WHERE truncated OR bad_times",
			   0) == 0;

	free(s->noted);
	s->noted = ok && s->shown ? kept_notes(db, s->shown) : NULL;
	sqlite3_close(db);
	/* out of file descriptors or memory with the other checks open: not
	 * the shard's fault (40 shards under ulimit -n 48 went the merged way) */
	s->again = !ok && err.code == TA_EXIT_SYSTEM;
	return ok;
}

static void *check_some(void *arg)
{
	struct check_work *w = arg;
	size_t i;

	while (!atomic_load(&w->bad) && (i = atomic_fetch_add(&w->next, 1)) < w->n)
		if (!check_one(&w->s[i], w->given, w->memo) && !w->s[i].again)
			atomic_store(&w->bad, 1);
	return NULL;
}

static int check_all(struct shard *s, size_t n, int given, int memo, int jobs)
{
	struct check_work w = { s, n, given, memo, 0, 0 };
	pthread_t tid[64];
	size_t nt = (size_t)(jobs < 1 ? 1 : jobs), i, started = 0;

	if (nt > n)
		nt = n;
	if (nt > sizeof(tid) / sizeof(*tid))
		nt = sizeof(tid) / sizeof(*tid);
	for (i = 1; i < nt; i++)   /* no thread: this one checks them all */
		if (pthread_create(&tid[started], NULL, check_some, &w) == 0)
			started++;
	check_some(&w);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < n && !atomic_load(&w.bad); i++)
		if (s[i].again && !check_one(&s[i], given, memo))
			atomic_store(&w.bad, 1);
	return !atomic_load(&w.bad);
}

struct ta_shards *ta_shards_open(const struct ta_cli *cli)
{
	struct ta_shards *sh;
	struct ta_error why = { 0, "", 0 };   /* the merged way says it again */
	struct ta_buf said = { 0 };
	char **paths = NULL, *tmpdir = NULL, **again = NULL;
	size_t n, i;
	int ok = 1, given = 0;

	if (!cli->cmd || cli->nargs != 1 || !ta_rules(&cli->query)->on_shards ||
	    cli->query.nranks ||
	    (n = ta_input_shards(cli->args[0], &cli->ingest, &paths, &tmpdir, &given,
				 &again, &said, &why)) == 0) {
		ta_buf_free(&said);
		return NULL;
	}
	sh = ta_xcalloc(1, sizeof(*sh));
	sh->cli = cli;
	sh->q = cli->query;
	sh->q.sink = NULL;
	sh->s = ta_xcalloc(n, sizeof(*sh->s));
	sh->n = n;
	sh->paths = paths;
	sh->tmpdir = tmpdir;
	sh->said = said;
	sh->again = again;
	for (i = 0; i < n; i++) {
		sh->s[i].path = paths[i];
		sh->s[i].shown = again ? again[i] : NULL;
	}
	ok = check_all(sh->s, n, given, !cli->ingest.no_cache, ta_jobs(&cli->ingest));
	if (ok)
		ta_qsort(sh->s, n, sizeof(*sh->s), by_rank);
	for (i = 1; ok && i < n; i++)
		ok = sh->s[i].rank != sh->s[i - 1].rank;  /* the merged way names it */
	if (!ok) {
		ta_shards_close(sh, 0);
		return NULL;
	}
	/* said in rank order, after parsing's, if the shards serve */
	for (i = 0; i < n; i++)
		if (sh->s[i].noted)
			ta_buf_adds(&sh->said, sh->s[i].noted);
	return sh;
}

/* The rule's analysis on shards s[0..n-1]. */
static int run_rule(struct ta_shards *sh, const struct ta_shard_rule *rule,
		    ta_analysis_fn fn, void *ctx, const struct shard *s, size_t n,
		    struct ta_table **out)
{
	struct job j = { rule->fn ? rule->fn : fn, ctx, &sh->q, NULL,
			 rule->same_notes, sh->cli->cmd ? sh->cli->cmd->name : "shards" };
	struct ta_table *all = NULL;
	int ok = !sh->failed;

	*out = NULL;
	if (ok && rule->peers && !sh->coll_dir) {
		ok = (sh->coll_dir = start_coll(sh->s, sh->n)) != NULL &&
		     gather_coll(sh->cli, &sh->q, sh->s, sh->n, sh->coll_dir);
		snprintf(sh->peers, sizeof(sh->peers), "%s/peers.db",
			 sh->coll_dir ? sh->coll_dir : "");
		sh->failed = !ok;
	}
	if (rule->peers)
		j.peers = sh->peers;
	ok = ok && n && run_all(sh->cli, &j, s, n, &all);
	if (ok && rule->join)
		all = rule->join(all, ctx);
	if (!ok) {
		ta_table_free(all);
		return 0;
	}
	*out = all;
	return 1;
}

int ta_shards_run(struct ta_shards *sh, const struct ta_shard_rule *rule,
		  ta_analysis_fn fn, void *ctx, struct ta_table **out)
{
	return run_rule(sh, rule, fn, ctx, sh->s, sh->n, out);
}

int ta_shards_run_ranks(struct ta_shards *sh, const struct ta_shard_rule *rule,
			ta_analysis_fn fn, void *ctx, const int64_t *ranks,
			size_t n, struct ta_table **out)
{
	struct shard *some = ta_xcalloc(n + 1, sizeof(*some));
	size_t i, k = 0;
	int ok;

	*out = NULL;
	for (i = 0; i < sh->n && k < n; i++)   /* both in rank order */
		if (sh->s[i].rank == ranks[k])
			some[k++] = sh->s[i];
	ok = k == n && run_rule(sh, rule, fn, ctx, some, n, out);
	free(some);
	return ok;
}

void ta_shards_close(struct ta_shards *sh, int used)
{
	size_t i;

	if (!sh)
		return;
	done_coll(sh->coll_dir, sh->s, sh->n);
	ta_input_shards_free(sh->paths, sh->n, sh->tmpdir);
	if (used)
		ta_stderr_bytes(sh->said.s, sh->said.len);
	ta_buf_free(&sh->said);
	for (i = 0; i < sh->n; i++)
		free(sh->s[i].noted);
	ta_input_again_free(sh->again, sh->n);
	free(sh->s);
	free(sh);
}
