/* Parse every trace file into one database, one rank per file. */
#include "db_writer.h"
#include "ta_cache.h"
#include "ta_cleanup.h"
#include "ta_db.h"
#include "ta_files.h"
#include "ta_ingest.h"
#include "ta_parse.h"
#include "ta_zvfs.h"
#include "parse_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One file's progress through the pool. */
struct job {
	const char *path;
	int64_t size, read;     /* compressed bytes: total, read so far */
	int64_t mtime_ns;
	int done;               /* finished, well or not */
	int has_rank;           /* parsed, and rank is its final rank */
	int64_t rank;
	int unnamed;            /* rank 0 for want of one in the file */
	struct ta_buf notes;    /* warnings, printed in file order */
};

/* Files are taken in order by up to `workers` threads; each parses its
 * file into its own feed of the one writer. */
struct pool {
	pthread_mutex_t lock;   /* everything below but the constants */
	char *const *files;
	size_t n, next, reported;
	const struct ta_ingest_opts *o;
	struct ta_db_writer *w;
	int threaded_gz;        /* decompress on a thread of each parser */
	int lanes;              /* threads that parse one (large) file */
	struct job *jobs;
	size_t nseen;
	int64_t events, raw_done, raw_total;
	atomic_int stop;        /* a file failed: the others stop early */
	size_t err_file;        /* the failed file with the lowest index */
	struct ta_error err;
};

struct ingest_ctx {
	struct pool *pool;
	struct ta_db_feed *feed;
	size_t i;
	int failed;
};

static void note(struct job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(struct job *j, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	char safe[1024];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one line, whatever a file's name holds (the notes are split on
	 * newlines when said) */
	ta_buf_addf(&j->notes, "%s\n", ta_no_controls(safe, sizeof(safe), line));
}

/* A warning about the file said now, and kept in the database so that
 * every later read says it again, in this order (damage has its columns
 * in files instead, said first). */
static void note_kept(struct ta_db_writer *w, struct job *j, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note_kept(struct ta_db_writer *w, struct job *j, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	note(j, "'%s': %s", j->path, what);
	ta_db_writer_noted(w, j->path, what);
}

static void sink_progress(void *ctx, int64_t raw)
{
	struct ingest_ctx *c = ctx;
	struct pool *p = c->pool;
	struct job *j = &p->jobs[c->i];

	pthread_mutex_lock(&p->lock);
	p->raw_done += raw - j->read;
	j->read = raw;
	p->o->progress(j->path, p->raw_done, p->raw_total, c->i, p->n);
	pthread_mutex_unlock(&p->lock);
}

static int sink_event(void *ctx, const struct ta_event *ev)
{
	struct ingest_ctx *c = ctx;

	if (ta_db_feed_event(c->feed, ev) < 0)
		c->failed = 1;
	return c->failed || atomic_load_explicit(&c->pool->stop,
						 memory_order_relaxed);
}

static int sink_meta(void *ctx, const char *key, const char *json, size_t len)
{
	struct ingest_ctx *c = ctx;

	if (ta_db_feed_meta(c->feed, key, json, len) < 0)
		c->failed = 1;
	return c->failed;
}

static int64_t final_rank(struct pool *p, struct job *j,
			  const struct ta_parse_result *res)
{
	int64_t r;

	if (res->have_rank)
		return res->rank;
	r = ta_rank_from_filename(j->path);
	if (r >= 0)
		return r;
	if (res->bad_rank[0])   /* helper-66: said "no distributedInfo.rank" */
		note_kept(p->w, j, "distributedInfo.rank %s is not a rank (a whole "
			  "number from 0) and the file name has none%s; using rank 0",
			  res->bad_rank, r == -2 ? " (its number is too large)" : "");
	else
		note_kept(p->w, j, "no distributedInfo.rank and no rank in the file "
			  "name%s; using rank 0", r == -2 ? " (its number is too large)" : "");
	j->unnamed = 1;
	return 0;
}

static int check_damage(struct job *j, const struct ta_parse_result *res,
			const struct ta_ingest_opts *o, struct ta_error *err)
{
	if (!res->truncated)
		return 0;
	if (o->strict) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s at byte %lld", j->path,
			     res->damage, (long long)res->damage_offset);
		return -1;
	}
	note(j, "'%s': %s at byte %lld; analysing the %lld events before it",
	     j->path, res->damage, (long long)res->damage_offset,
	     (long long)res->objects);
	return 0;
}

/* Records the file's rank; two files of one rank are an error, named in
 * file order whichever finished first. */
static int claim_rank(struct pool *p, size_t i, int64_t rank,
		      struct ta_error *err)
{
	size_t k;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	for (k = 0; k < p->n && rc == 0; k++)
		if (k != i && p->jobs[k].has_rank && p->jobs[k].rank == rank) {
			size_t a = k < i ? k : i, b = k < i ? i : k;

			/* neither names a rank: most often one process's
			 * profiler cycles (a repeating schedule written by
			 * export_chrome_trace), as the torch docs show */
			ta_error_set(err, TA_EXIT_INPUT,
				     "'%s' and '%s' are both rank %lld%s",
				     p->files[a], p->files[b], (long long)rank,
				     p->jobs[k].unnamed && p->jobs[i].unnamed ?
				     " (neither names its rank: give one file at a time "
				     "for one process's profiling cycles, or name each "
				     "rank's file rank-N)" :
				     /* rank-0.cycle1 and rank-0.cycle2 (helper-54) */
				     " (one worker's profiling cycles? give one file at a "
				     "time, or keep the names tensorboard_trace_handler "
				     "writes, WORKER.SPAN.pt.trace.json, and choose one with "
				     "--span)");
			rc = -1;
		}
	if (rc == 0) {
		p->jobs[i].has_rank = 1;
		p->jobs[i].rank = rank;
		p->nseen++;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* Lanes: a large file parsed by two threads when cores are spare (two
 * threads are enough: the SQLite thread is then the slowest one). */
#define LANES 2
int64_t ta_split_min = (int64_t)8 << 20;

static void *lane_cut(void *ctx)
{
	return ta_db_feed_cut(((struct ingest_ctx *)ctx)->feed);
}

static void lane_release(void *piece, int64_t base, int rows)
{
	ta_db_piece_release(piece, base, rows);
}

static void lane_drop(void *piece)
{
	ta_db_piece_drop(piece);
}

static void lane_room(void *ctx)
{
	struct ingest_ctx *c = ctx;

	if (ta_db_feed_room(c->feed) < 0)
		c->failed = 1;
}

/* A new feed for file i, under the rank its name suggests until the end. */
static struct ta_db_feed *new_feed(struct pool *p, size_t i)
{
	struct job *j = &p->jobs[i];
	int64_t guess = ta_rank_from_filename(j->path);

	return ta_db_feed_new(p->w, j->path, j->size, j->mtime_ns,
			      guess < 0 ? 0 : guess);
}

/* ta_parse_file on lanes: a feed each, taken into c's at the end. */
static int parse_lanes(struct pool *p, struct ingest_ctx *c, int n,
		       struct ta_parse_result *res, struct ta_error *err)
{
	struct job *j = &p->jobs[c->i];
	struct ingest_ctx ctx[LANES];
	struct ta_lane lanes[LANES];
	int l, rc;

	for (l = 0; l < n; l++) {
		ctx[l] = *c;
		if (l > 0)
			ctx[l].feed = new_feed(p, c->i);
		ta_db_feed_hold(ctx[l].feed);
		lanes[l] = (struct ta_lane){
			{ &ctx[l], sink_event, sink_meta,
			  p->o->progress ? sink_progress : NULL },
			lane_cut, lane_release, lane_drop, lane_room
		};
	}
	rc = ta_parse_file_lanes(j->path, lanes, n, res, err);
	for (l = 1; l < n; l++) {
		struct ta_error e = { 0 };

		if (ta_db_feed_absorb(c->feed, ctx[l].feed, &e) < 0)
			ctx[l].failed = 1;
		ctx[0].failed |= ctx[l].failed;
	}
	c->failed = ctx[0].failed;
	return rc;
}

/* Parses file i into c's feed: on lanes when it is large and cores are
 * spare, else in sequence. */
static int parse_into(struct pool *p, struct ingest_ctx *c,
		      const struct ta_sink *sink, struct ta_parse_result *res,
		      struct ta_error *err)
{
	struct job *j = &p->jobs[c->i];
	int rc;

	if (p->lanes < 2 || j->size < ta_split_min)
		return ta_parse_file(j->path, p->threaded_gz, sink, res, err);
	rc = parse_lanes(p, c, p->lanes, res, err);
	/* a database that failed is said by the caller, from c->failed */
	if (rc != TA_PARSE_AGAIN || c->failed)
		return rc == TA_PARSE_AGAIN ? 0 : rc;
	/* an element longer than the lanes look ahead: start over */
	if (ta_db_feed_discard(c->feed, err) < 0) {
		c->feed = NULL;
		c->failed = 1;
		return -1;
	}
	c->feed = new_feed(p, c->i);
	return ta_parse_file(j->path, p->threaded_gz, sink, res, err);
}

static atomic_size_t skipped_inputs;

size_t ta_input_skipped(void)
{
	return atomic_load(&skipped_inputs);
}

void ta_input_add_skipped(size_t n)
{
	atomic_fetch_add(&skipped_inputs, n);
}

/* Leaves file j out, said now and kept in the database for later reads. */
static int skip(struct pool *p, struct job *j, struct ta_db_feed *feed, struct ta_error *err)
{
	note(j, "%s; skipped", err->msg);
	ta_db_writer_skipped(p->w, err->msg);
	ta_input_add_skipped(1);
	return ta_db_feed_discard(feed, err) < 0 ? -1 : 1;
}

/* Parses file i into a feed. 1: skipped (not a trace), -1: error. */
static int ingest_one(struct pool *p, size_t i, struct ta_error *err)
{
	struct job *j = &p->jobs[i];
	struct ingest_ctx c = { p, NULL, i, 0 };
	struct ta_sink sink = { &c, sink_event, sink_meta,
				p->o->progress ? sink_progress : NULL };
	struct ta_parse_result res;
	int64_t rank, renumbered;
	int parsed;

	c.feed = new_feed(p, i);
	parsed = parse_into(p, &c, &sink, &res, err);
	/* the database failed (a full disk): said first, whatever the parse
	 * said on being stopped */
	if (c.failed) {
		ta_db_feed_failure(c.feed, err);
		goto fail;
	}
	if (parsed < 0 && atomic_load(&p->stop)) {
		err->msg[0] = '\0'; /* cut short: another file failed */
		goto fail;
	}
	if (parsed < 0) {
		/* a system error (too many open files, I/O) is never a file
		 * to leave out: that rank would be missing from the answer */
		if (p->n == 1 || err->code == TA_EXIT_SYSTEM)
			goto fail;
		return skip(p, j, c.feed, err);
	}
	if (atomic_load(&p->stop))
		goto fail;
	if (res.truncated && res.objects == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': damaged before its first "
			     "event: %s at byte %lld", j->path, res.damage,
			     (long long)res.damage_offset);
		if (p->n == 1)
			goto fail;
		return skip(p, j, c.feed, err);
	}
	if (check_damage(j, &res, p->o, err) < 0)
		goto fail;
	/* a trace of no event ({"traceEvents": []}, a profiler that stopped
	 * at once), or of none with a time (metadata alone), measured
	 * nothing: a rank of zeros would pass every gate */
	if ((res.activity == 0 || !res.have_ts) && !res.truncated) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s", j->path, !res.objects ?
			     "no trace events" : !res.activity ? "no trace event but "
			     "metadata and the profiler's span" :
			     "no trace event has a time (ts)");
		if (p->n == 1)
			goto fail;
		return skip(p, j, c.feed, err);
	}
	if (res.bad_steps)
		note_kept(p->w, j, "%lld ProfilerStep#N ranges with a negative "
			  "duration or an N that is not a whole number from 0 to "
			  "2^62 are not steps", (long long)res.bad_steps);
	if (res.extra_event_arrays)
		note_kept(p->w, j, "%lld more traceEvents keys after the first; "
			  "only the first is read", (long long)res.extra_event_arrays);
	if (res.long_strings)
		note_kept(p->w, j, "%lld strings longer than %zu MB skipped (taken "
			  "as empty), the first near byte %lld",
			  (long long)res.long_strings, ta_token_max >> 20,
			  (long long)res.long_string_offset);
	if (res.bad_times)
		note_kept(p->w, j, "%lld events have a ts or dur that is not a usable "
			  "number (a string, a ts past the year 2116 or a dur over 13 "
			  "days); they have no time", (long long)res.bad_times);
	rank = final_rank(p, j, &res);
	if (claim_rank(p, i, rank, err) < 0)
		goto fail;
	pthread_mutex_lock(&p->lock);
	p->events += res.events;
	pthread_mutex_unlock(&p->lock);
	if (ta_db_feed_end(c.feed, rank, &res, &renumbered, err) < 0)
		return -1;
	if (renumbered)
		note_kept(p->w, j, "%lld ProfilerStep#N ranges repeat a step number "
			  "seen before (copies of a trace end to end?): numbered on "
			  "from the largest, in time order", (long long)renumbered);
	return 0;
fail:
	ta_db_feed_free(c.feed);
	return -1;
}

/* Warnings come out in file order, as each file and those before it are
 * done (under p->lock). */
static void report_notes(struct pool *p)
{
	while (p->reported < p->n && p->jobs[p->reported].done)
		ta_warn_lines(&p->jobs[p->reported++].notes);
}

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		struct ta_error err = { 0 };
		size_t i;
		int rc;

		pthread_mutex_lock(&p->lock);
		if (p->next == p->n || atomic_load(&p->stop)) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		rc = ingest_one(p, i, &err);
		pthread_mutex_lock(&p->lock);
		p->jobs[i].done = 1;
		p->raw_done += p->jobs[i].size - p->jobs[i].read;
		if (rc < 0 && err.msg[0] && i < p->err_file) {
			p->err_file = i;
			p->err = err;
		}
		if (rc < 0)
			atomic_store(&p->stop, 1);
		report_notes(p);
		pthread_mutex_unlock(&p->lock);
	}
}

/* Files read at once, whatever -j says: every file's rows go through the
 * one SQLite thread, which two or three parsers already keep busy, so
 * more would only hold batches (about 9 MB a file) waiting for it. */
#define MAX_IN_FLIGHT 8

/* Threads that parse: one per file up to the cores given; with cores to
 * spare, each file also decompresses on a thread of its own. */
static void run_pool(struct pool *p, int jobs)
{
	size_t workers = (size_t)jobs < p->n ? (size_t)jobs : p->n, k;
	size_t started = 0;
	pthread_t *t;

	if (workers > MAX_IN_FLIGHT)
		workers = MAX_IN_FLIGHT;
	t = ta_xcalloc(workers, sizeof(*t));
	p->threaded_gz = (size_t)jobs > workers;
	p->lanes = jobs > 1 ? jobs / (int)workers : 1; /* a threaded writer */
	if (p->lanes > LANES)
		p->lanes = LANES;
	for (k = 1; k < workers; k++)
		if (pthread_create(&t[k], NULL, worker, p) == 0)
			started = k;
		else
			break;
	worker(p);
	for (k = 1; k <= started; k++)
		pthread_join(t[k], NULL);
	free(t);
}

/* Leftovers of killed writers of this output: OUT.tmp.* beside it. */
static void clean_beside(const char *out)
{
	char *dir = ta_xstrdup(out), *slash = strrchr(dir, '/'), *prefix;

	if (slash) {
		*slash = '\0';
		prefix = ta_xmalloc(strlen(slash + 1) + 8);
		sprintf(prefix, "%s.tmp.", slash + 1);
		ta_temp_clean(*dir ? dir : "/", prefix, "");
	} else {
		prefix = ta_xmalloc(strlen(out) + 8);
		sprintf(prefix, "%s.tmp.", out);
		ta_temp_clean(".", prefix, "");
	}
	free(prefix);
	free(dir);
}

int ta_jobs(const struct ta_ingest_opts *o)
{
	return o->jobs > 0 ? o->jobs : ta_cores();
}

/* A cache entry is put in place only where none is: a process reading
 * the one there may add to it (dev_rows), through its name, and a rename
 * over it would send that write, and its journal, to another file. The
 * same traces give the same rows: a build that comes second is dropped.
 * -1: no hard links here; the caller renames. */
static int place_entry(const char *tmp, const char *out)
{
	if (link(tmp, out) < 0 && errno != EEXIST)
		return -1;
	unlink(tmp);
	return 0;
}

/* A cache entry written plain at *tmp, packed into a temp file of its own
 * that takes tmp's place (its name, descriptor and removal on a signal):
 * a third of the size for a tenth of a second per 100 MB (#37). */
static int pack_entry(const char *out, char **tmp, int *fd, void **doomed,
		      int jobs, struct ta_error *err)
{
	char *packed = NULL;
	void *gone;
	int pfd = ta_temp_create(out, &packed, &gone, err);

	if (pfd < 0)
		return -1;
	if (ta_zvfs_pack(*tmp, packed, jobs, err) < 0) {
		unlink(packed);
		ta_cleanup_drop(gone);
		close(pfd);
		free(packed);
		return -1;
	}
	unlink(*tmp);
	ta_cleanup_drop(*doomed);
	close(*fd);
	free(*tmp);
	*tmp = packed;
	*fd = pfd;
	*doomed = gone;
	return 0;
}

/* info.cache_entry of a cache entry: its file's name and a number of this
 * build of it, so that a command adding to the entry writes into the file
 * it read (the same name, not a copy given by path) and not a newer build
 * of it that another process renamed over the name meanwhile. */
static void entry_mark(const char *out, char *mark, size_t len)
{
	const char *base = strrchr(out, '/');
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(mark, len, "%s %lld.%09ld.%ld", base ? base + 1 : out,
		 (long long)ts.tv_sec, ts.tv_nsec, (long)getpid());
}

int ta_ingest(char *const *files, size_t n, const char *out,
	      const struct ta_ingest_opts *o, struct ta_error *err)
{
	char mark[320];
	struct pool p = { .files = files, .n = n, .o = o, .err_file = (size_t)-1 };
	int jobs = ta_jobs(o);
	char *tmp = NULL;
	void *doomed;
	size_t i;
	int rc = 0, fd;

	pthread_mutex_init(&p.lock, NULL);
	p.jobs = ta_xcalloc(n, sizeof(*p.jobs));
	for (i = 0; i < n; i++) {
		struct stat sb;

		if (stat(files[i], &sb) < 0)
			memset(&sb, 0, sizeof(sb));
		p.jobs[i].path = files[i];
		p.jobs[i].size = (int64_t)sb.st_size;
		p.jobs[i].mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
				     sb.st_mtim.tv_nsec;
		p.raw_total += p.jobs[i].size;
	}
	clean_beside(out);
	/* an interrupted ingestion removes its unfinished database */
	fd = ta_temp_create(out, &tmp, &doomed, err);
	if (fd < 0) {
		free(p.jobs);
		pthread_mutex_destroy(&p.lock);
		return -1;
	}
	if (o->cache_entry)
		entry_mark(out, mark, sizeof(mark));
	p.w = ta_db_writer_new(tmp, jobs > 1, o->lazy_indexes,
			       o->cache_entry ? mark : NULL, err);
	if (p.w) {
		run_pool(&p, jobs);
		if (p.err_file != (size_t)-1) {
			*err = p.err;
			rc = -1;
		}
	} else {
		rc = -1;
	}
	if (rc == 0 && p.nseen == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "no readable trace among %zu files",
			     n);
		rc = -1;
	}
	if (rc == 0) {
		rc = ta_db_writer_finish(p.w, err);
		p.w = NULL;
	}
	if (o->progress)
		o->progress(NULL, -1, p.events, p.nseen, n);
	ta_db_writer_abort(p.w);
	if (rc == 0 && o->finish)
		rc = o->finish(tmp, err);
	if (rc == 0 && o->cache_entry && o->entry_finish)
		rc = o->entry_finish(tmp, err);
	if (rc == 0 && o->cache_entry && ta_cache_packs())
		rc = pack_entry(out, &tmp, &fd, &doomed, jobs, err);
	if (rc == 0 && o->cache_entry && place_entry(tmp, out) == 0) {
		/* in place, or another process's build of it already was */
	} else if (rc == 0 && rename(tmp, out) < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot rename '%s' to '%s'",
			     tmp, out);
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	else if (o->note_written)  /* a shard's check when it holds one file */
		ta_cache_note_written(out, fd, p.nseen == 1);
	ta_cleanup_drop(doomed);
	close(fd);
	free(tmp);
	for (i = 0; i < n; i++)
		ta_buf_free(&p.jobs[i].notes);
	free(p.jobs);
	pthread_mutex_destroy(&p.lock);
	return rc;
}
