/* The executor: the one place that decides how a command's tables are
 * computed from its PATH. Either on shards (a directory of them, or of
 * traces with -j 2 or more: each file its own database, cached per file
 * or temporary), each rank analysed in its own process by the section's
 * shard rule and the parts joined; or on "the merged way": one database of
 * every rank, the cached one or a temporary one (parse/input.c decides
 * which, by the cache's state). A section that cannot run on shards (no
 * rule for it, a shard that fails) runs on the merged database, opened
 * when first needed. */
#ifndef TA_EXEC_PLAN_H
#define TA_EXEC_PLAN_H

#include "commands/cli.h"
#include "ta_report.h"

#include <pthread.h>

struct ta_plan {
	const struct ta_cli *cli;
	const struct ta_shard_rule *rule;  /* the command's; NULL: merged */
	struct ta_shards *sh;              /* open shards, or NULL */
	int shards_used;                   /* a section ran on them */
	sqlite3 *db;                       /* the merged database, once open */
	int retried;                       /* a damaged cache was rebuilt */
	int beside;                        /* a ta_plan_beside thread's plan */
};

/* The rule a command's rows follow on shards: what its options chose
 * (cli->shard_rule), else its declared spread's; NULL: the merged way. */
const struct ta_shard_rule *ta_plan_rule(const struct ta_cli *cli);

/* Opens what cli's one PATH is read as: its shards when the command's rule
 * allows them, else nothing yet (the merged database opens with the first
 * section). An exit code (errors said). */
int ta_plan_open(struct ta_plan *p, const struct ta_cli *cli);

/* One section: fn (with ctx) over the plan, on shards by rule (NULL: the
 * plan's), else on the merged database with q (NULL: cli's query); a
 * table in *out. On the merged database a damaged cached one is built
 * again and the section run once more, unless rows already went out
 * (stream: what a streaming section writes to, or NULL). 0, or -1 with
 * err set. */
int ta_plan_run(struct ta_plan *p, const struct ta_shard_rule *rule,
		ta_analysis_fn fn, void *ctx, const struct ta_query *q,
		const struct ta_stream *stream, struct ta_table **out,
		struct ta_error *err);

/* The merged database (opened if it was not): for what only it answers
 * (report's page). NULL with err set. */
sqlite3 *ta_plan_db(struct ta_plan *p, struct ta_error *err);

/* Sections beside the caller's: run(p', ctx) in a thread with a plan p'
 * of its own, on a second connection to p's merged database, while the
 * caller runs others on p (report --html: diagnose and the roofline beside
 * the rest, on two cores). Only where p reads one merged database that
 * is open, from a file, and -j allows two; else nothing starts and run
 * runs in ta_plan_join. run sets only what its ctx names (the caller
 * touches none of it before the join) and may run twice: it frees what a
 * first try left. p' neither rebuilds a damaged database nor shows
 * progress: a run that fails there is run again here, as without it. */
struct ta_plan_beside {
	struct ta_plan plan;
	int (*run)(struct ta_plan *p, void *ctx, struct ta_error *err);
	void *ctx;
	struct ta_error err;
	pthread_t thread;
	int started, rc;
	int retried;            /* p's when it started */
};

void ta_plan_beside(struct ta_plan *p, struct ta_plan_beside *b,
		    int (*run)(struct ta_plan *p, void *ctx, struct ta_error *err),
		    void *ctx);
/* Waits for b's thread; then, unless it succeeded, run on p. 0, or -1
 * with err set. */
int ta_plan_join(struct ta_plan *p, struct ta_plan_beside *b, struct ta_error *err);
/* Stops b's thread (sqlite3_interrupt) and waits for it, leaving its
 * result (the caller failed). */
void ta_plan_abandon(struct ta_plan_beside *b);

/* Closes shards and database; parsing's warnings said if shards served. */
void ta_plan_close(struct ta_plan *p);

#endif
