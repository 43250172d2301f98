/* Parse every trace file into one database, one rank per file. */
#include "ta_db.h"
#include "ta_ingest.h"
#include "ta_parse.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ingest_ctx {
	struct ta_db_writer *w;
	int failed;
	const struct ta_ingest_opts *o;
	const char *path;
	int64_t size;
	size_t i, n;
};

static void sink_progress(void *ctx, int64_t raw)
{
	struct ingest_ctx *c = ctx;

	c->o->progress(c->path, raw, c->size, c->i, c->n);
}

static int sink_event(void *ctx, const struct ta_event *ev)
{
	struct ingest_ctx *c = ctx;

	if (ta_db_writer_event(c->w, ev) < 0)
		c->failed = 1;
	return c->failed;
}

static int sink_meta(void *ctx, const char *key, const char *json, size_t len)
{
	struct ingest_ctx *c = ctx;

	if (ta_db_writer_meta(c->w, key, json, len) < 0)
		c->failed = 1;
	return c->failed;
}

struct seen_rank {
	int64_t rank;
	const char *path;
};

static int64_t final_rank(const char *path, const struct ta_parse_result *res)
{
	int64_t r;

	if (res->have_rank)
		return res->rank;
	r = ta_rank_from_filename(path);
	if (r >= 0)
		return r;
	ta_warn("'%s': no distributedInfo.rank and no rank in the file name; "
		"using rank 0", path);
	return 0;
}

static int check_damage(const char *path, const struct ta_parse_result *res,
			const struct ta_ingest_opts *o, struct ta_error *err)
{
	if (!res->truncated)
		return 0;
	if (o->strict) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s at byte %lld", path,
			     res->damage, (long long)res->damage_offset);
		return -1;
	}
	ta_warn("'%s': %s at byte %lld; analysing the %lld events before it",
		path, res->damage, (long long)res->damage_offset,
		(long long)res->objects);
	return 0;
}

/* Parses one file into the writer. 1: skipped (not a trace), -1: error. */
static int ingest_one(struct ta_db_writer *w, const char *path, size_t nfiles,
		      const struct ta_ingest_opts *o, struct seen_rank *seen,
		      size_t *nseen, int64_t *events, struct ta_error *err)
{
	struct ingest_ctx c = { w, 0, o, path, 0, *nseen, nfiles };
	struct ta_sink sink = { &c, sink_event, sink_meta,
				o->progress ? sink_progress : NULL };
	struct ta_parse_result res;
	struct stat sb;
	int64_t rank, guess;
	size_t i;

	if (stat(path, &sb) < 0)
		memset(&sb, 0, sizeof(sb));
	c.size = (int64_t)sb.st_size;
	guess = ta_rank_from_filename(path);
	if (ta_db_writer_begin_file(w, path, (int64_t)sb.st_size,
				    (int64_t)sb.st_mtim.tv_sec * 1000000000 +
					    sb.st_mtim.tv_nsec,
				    guess < 0 ? 0 : guess, err) < 0)
		return -1;
	if (ta_parse_file(path, &sink, &res, err) < 0) {
		if (c.failed || nfiles == 1)
			return -1;
		ta_warn("%s; skipped", err->msg);
		return ta_db_writer_discard_file(w, err) < 0 ? -1 : 1;
	}
	if (c.failed) {
		ta_error_set(err, TA_EXIT_SYSTEM, "'%s': cannot write database",
			     path);
		return -1;
	}
	if (res.truncated && res.objects == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': damaged before its first "
			     "event: %s at byte %lld", path, res.damage,
			     (long long)res.damage_offset);
		if (nfiles == 1)
			return -1;
		ta_warn("%s; skipped", err->msg);
		return ta_db_writer_discard_file(w, err) < 0 ? -1 : 1;
	}
	if (check_damage(path, &res, o, err) < 0)
		return -1;
	if (res.bad_times)
		ta_warn("'%s': %lld events have a ts or dur that is not a usable "
			"number (a string, or beyond int64 ns); they have no time",
			path, (long long)res.bad_times);
	rank = final_rank(path, &res);
	for (i = 0; i < *nseen; i++)
		if (seen[i].rank == rank) {
			ta_error_set(err, TA_EXIT_INPUT,
				     "'%s' and '%s' are both rank %lld",
				     seen[i].path, path, (long long)rank);
			return -1;
		}
	seen[*nseen].rank = rank;
	seen[(*nseen)++].path = path;
	*events += res.events;
	return ta_db_writer_end_file(w, rank, &res, err);
}

/* An interrupted ingestion removes its unfinished database. */
static char *volatile pending_tmp;

static void on_signal(int sig)
{
	if (pending_tmp)
		unlink(pending_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void guard(char *tmp)
{
	pending_tmp = tmp;
	signal(SIGINT, tmp ? on_signal : SIG_DFL);
	signal(SIGTERM, tmp ? on_signal : SIG_DFL);
	signal(SIGHUP, tmp ? on_signal : SIG_DFL);
}

int ta_ingest(char *const *files, size_t n, const char *out,
	      const struct ta_ingest_opts *o, struct ta_error *err)
{
	struct ta_db_writer *w;
	struct seen_rank *seen = ta_xcalloc(n, sizeof(*seen));
	size_t i, nseen = 0;
	int64_t events = 0;
	char *tmp = ta_xmalloc(strlen(out) + 32);
	int rc = 0;

	sprintf(tmp, "%s.tmp.%ld", out, (long)getpid());
	unlink(tmp);
	guard(tmp);
	w = ta_db_writer_new(tmp, err);
	if (!w)
		rc = -1;
	for (i = 0; rc == 0 && i < n; i++)
		if (ingest_one(w, files[i], n, o, seen, &nseen, &events, err) < 0)
			rc = -1;
	if (rc == 0 && nseen == 0) {
		ta_error_set(err, TA_EXIT_INPUT, "no readable trace among %zu files",
			     n);
		rc = -1;
	}
	if (rc == 0) {
		rc = ta_db_writer_finish(w, err);
		w = NULL;
	}
	if (o->progress)
		o->progress(NULL, -1, events, nseen, n);
	ta_db_writer_abort(w);
	if (rc == 0 && rename(tmp, out) < 0) {
		ta_error_set(err, TA_EXIT_SYSTEM, "cannot rename '%s' to '%s'",
			     tmp, out);
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	guard(NULL);
	free(tmp);
	free(seen);
	return rc;
}
