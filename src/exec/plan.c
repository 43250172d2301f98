/* The executor (plan.h): shards or the merged database, decided here. */
#include "exec/plan.h"
#include "exec/progress.h"
#include "commands/commands.h"
#include "ta_db.h"
#include "ta_ingest.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

const struct ta_shard_rule *ta_plan_rule(const struct ta_cli *cli)
{
	const struct ta_command *c = cli->cmd ? ta_command_find(cli->cmd->name) : NULL;

	if (cli->shard_rule || !c)
		return cli->shard_rule;
	return c->rule ? c->rule : c->spread == TA_SPREAD_PER_RANK ?
	       &ta_shard_per_rank : c->spread == TA_SPREAD_PEERS ?
	       &ta_shard_with_peers : NULL;
}

int ta_plan_open(struct ta_plan *p, const struct ta_cli *cli)
{
	memset(p, 0, sizeof(*p));
	p->cli = cli;
	if (cli->nargs != 1) {
		fprintf(stderr, "traceanalyze: expected one PATH, got %d\n", cli->nargs);
		return TA_EXIT_USAGE;
	}
	p->rule = ta_plan_rule(cli);
	if (p->rule)
		p->sh = ta_shards_open(cli);
	return TA_EXIT_OK;
}

/* A gate on a truncated trace could pass on the part that is missing:
 * an error unless --allow-truncated. */
static int refuse_truncated(const struct ta_cli *cli, sqlite3 *db,
			    struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (cli->allow_truncated || (!cli->ngates && !cli->baseline))
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT path, COALESCE(damage, 'damaged')"
			       " FROM files WHERE truncated LIMIT 1", -1, &st,
			       NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		char shown[PATH_MAX];

		ta_error_set(err, TA_EXIT_INPUT, "'%s': %s; a gate on a truncated "
			     "trace is an error (--allow-truncated to gate what was "
			     "read)", ta_db_given_path(db, (const char *)
			     sqlite3_column_text(st, 0), shown, sizeof(shown)),
			     (const char *)sqlite3_column_text(st, 1));
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc;
}

sqlite3 *ta_plan_db(struct ta_plan *p, struct ta_error *err)
{
	if (p->db)
		return p->db;
	if (ta_input_open(p->cli->args[0], &p->cli->ingest, &p->db, err) < 0 ||
	    refuse_truncated(p->cli, p->db, err) < 0) {
		sqlite3_close(p->db);
		p->db = NULL;
	}
	return p->db;
}

/* After a section failed (err) on db: a damaged cached database is
 * removed and 1 returned, the first time (built again on the next open);
 * else err names the file (exit 3). */
static int damaged(struct ta_plan *p, int may_retry, struct ta_error *err)
{
	int code = sqlite3_errcode(p->db) & 0xff;
	const char *path = sqlite3_db_filename(p->db, "main");
	char msg[sizeof(err->msg)];

	if (!path)
		path = "";
	/* the section's error says it, or the connection still does, or
	 * SQLite's log met a damaged page on the way */
	if (!err->damaged && !ta_db_damage_seen() && code != SQLITE_CORRUPT &&
	    code != SQLITE_NOTADB)
		return 0;
	snprintf(msg, sizeof(msg), "%s", ta_msg_unnamed(err->msg, path));
	if (may_retry && !p->retried && ta_input_is_cached(path)) {
		ta_warn("cached database '%s' is damaged (%s); rebuilding it",
			path, msg);
		unlink(path);
		p->retried = 1;
		ta_db_damage_clear();   /* the new one is not */
		return 1;
	}
	ta_error_set(err, TA_EXIT_INPUT, "'%s': damaged database (%s)", path, msg);
	if (ta_input_is_cached(path))
		unlink(path); /* the next run builds it again */
	return 0;
}

static int on_shards(struct ta_plan *p, const struct ta_shard_rule *rule,
		     ta_analysis_fn fn, void *ctx, struct ta_table **out)
{
	int ok = ta_shards_run(p->sh, rule, fn, ctx, out);

	if (ok && rule->rounds)
		ok = (*out = rule->rounds(p->sh, *out, ctx)) != NULL;
	p->shards_used |= ok;
	return ok;
}

int ta_plan_run(struct ta_plan *p, const struct ta_shard_rule *rule,
		ta_analysis_fn fn, void *ctx, const struct ta_query *q,
		const struct ta_stream *stream, struct ta_table **out,
		struct ta_error *err)
{
	struct ta_query mq = q ? *q : p->cli->query;
	int rc;

	*out = NULL;
	if (!rule)
		rule = p->rule;
	if (p->sh && rule && on_shards(p, rule, fn, ctx, out))
		return 0;
	/* one progress line: the caller's */
	mq.progress = !p->beside && isatty(2) && !ta_quiet ? ta_progress_work : NULL;
	for (;;) {
		if (!ta_plan_db(p, err))
			return -1;
		rc = fn(p->db, &mq, ctx, out, err);
		if (rc == 0)
			return 0;
		ta_table_free(*out);
		*out = NULL;
		if (p->beside || !damaged(p, !(stream && stream->out), err))
			return -1;
		sqlite3_close(p->db);
		p->db = NULL;
	}
}

static void *beside_main(void *arg)
{
	struct ta_plan_beside *b = arg;

	b->rc = b->run(&b->plan, b->ctx, &b->err);
	return NULL;
}

void ta_plan_beside(struct ta_plan *p, struct ta_plan_beside *b,
		    int (*run)(struct ta_plan *p, void *ctx, struct ta_error *err),
		    void *ctx)
{
	const char *path = p->db ? sqlite3_db_filename(p->db, "main") : NULL;

	memset(b, 0, sizeof(*b));
	b->run = run;
	b->ctx = ctx;
	/* on shards each rank has its process already; an unlinked
	 * temporary database has no name to open again (ta_db_open fails) */
	if (p->sh || !path || !path[0] || ta_jobs(&p->cli->ingest) < 2 ||
	    ta_db_open(path, &b->plan.db, &b->err) < 0)
		return;
	b->plan.cli = p->cli;
	b->plan.beside = 1;
	b->retried = p->retried;
	if (pthread_create(&b->thread, NULL, beside_main, b) != 0) {
		sqlite3_close(b->plan.db);
		b->plan.db = NULL;
		return;
	}
	b->started = 1;
}

static void wait_beside(struct ta_plan_beside *b)
{
	if (!b->started)
		return;
	pthread_join(b->thread, NULL);
	sqlite3_close(b->plan.db);
	b->plan.db = NULL;
	b->started = 0;
}

void ta_plan_abandon(struct ta_plan_beside *b)
{
	/* its statements stop at their next step: the error is said now,
	 * not after the thread's work */
	if (b->started)
		sqlite3_interrupt(b->plan.db);
	wait_beside(b);
}

int ta_plan_join(struct ta_plan *p, struct ta_plan_beside *b, struct ta_error *err)
{
	int started = b->started;

	wait_beside(b);
	/* what it read is the database's unless the caller rebuilt a
	 * damaged one meanwhile: then once more, on the new one */
	if (started && b->rc == 0 && b->retried == p->retried)
		return 0;
	return b->run(p, b->ctx, err);
}

void ta_plan_close(struct ta_plan *p)
{
	ta_shards_close(p->sh, p->shards_used);
	p->sh = NULL;
	sqlite3_close(p->db);
	p->db = NULL;
}
