/* traceanalyze diagnose: per step, what bounds it and what to fix. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>

enum { OPT_FINDINGS = 1, OPT_BUSY, OPT_GAP, OPT_SMALL, OPT_NO_PATH };

static const struct ta_opt opts[] = {
	{ "findings", 0, OPT_FINDINGS, NULL, "each cause with its cost: rank,step,kind,cost_us,count,where,advice" },
	{ "busy-pct", 1, OPT_BUSY, "P", "compute-bound when the GPU is busy at least P% of the step (90)" },
	{ "host-gap-us", 1, OPT_GAP, "US", "idle holes this long are host time; shorter ones launch overhead (50)" },
	{ "small-kernel-us", 1, OPT_SMALL, "US", "kernels shorter than this are small (10)" },
	{ "no-path", 0, OPT_NO_PATH, NULL, "leave out the critical path's second opinion (path_bound, path_pct, verdict_path_pct): about 2.5x faster" },
	{ NULL, 0, 0, NULL, NULL }
};

/* The options, and the findings kept for the text summary. */
struct diag_cmd {
	struct ta_diagnose_opts o;
	int findings;            /* the findings table instead of verdicts */
	struct ta_table *found;  /* text mode: summarised after the verdicts */
	int want_findings;       /* on shards: gather them (text, --findings) */
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct diag_cmd *c = ctx;
	struct ta_diagnose_opts *o = &c->o;

	switch (key) {
	case OPT_FINDINGS:
		c->findings = 1;
		return 0;
	case OPT_NO_PATH:
		o->path = 0;
		return 0;
	case OPT_BUSY:
		return ta_cli_parse_real(arg, 0, 100, &o->busy_pct);
	case OPT_GAP:
		return ta_cli_parse_us(arg, &o->host_gap_ns);
	case OPT_SMALL:
		return ta_cli_parse_us(arg, &o->small_kernel_ns);
	}
	return -1;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct diag_cmd *c = ctx;
	struct ta_table *verdicts, *found;

	if (c->findings)
		c->o.path = 0; /* the findings table does not show it */
	if (ta_diagnose_run(db, q, &c->o, &verdicts, &found, err) < 0)
		return -1;
	*out = ta_cli_pick(verdicts, found, c->findings, &c->found);
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct diag_cmd *c = ctx;

	if (!c->findings && c->found)
		ta_people_diagnose(t, c->found);
}

/* On shards (or traces with -j 2 or more), shard by shard: each
 * shard's verdicts, from its events and every rank's collectives, and for
 * text and --findings its findings with them (one run, two tables); with
 * the path, the critical path walked over the shards (shard_critical.c)
 * confirms them. Then what only all rows tell: each late peer's own
 * cause, and memory's findings last (ta_diagnose_join). */
static int shard_tables(sqlite3 *db, const struct ta_query *q, void *ctx,
			struct ta_table **out, struct ta_error *err)
{
	const struct diag_cmd *c = ctx;
	struct ta_diagnose_opts o = c->o;
	struct ta_table *found = NULL;

	o.path = 0;
	if (ta_diagnose_run(db, q, &o, out, &found, err) < 0)
		return -1;
	if (c->want_findings)
		(*out)->also = found;
	else
		ta_table_free(found);
	return 0;
}

static struct ta_table *join(struct ta_shards *sh, struct ta_table *t, void *ctx)
{
	struct diag_cmd *c = ctx;
	struct ta_shard_critical sc = { ta_diagnose_path_opts, NULL, 0, 0 };
	struct ta_table *path = NULL, *items = NULL, *found = t->also;
	int ok = 1;

	t->also = NULL;
	if (c->o.path && !c->findings) {
		ok = ta_shards_critical(sh, &sc, &path, &items);
		if (ok)
			ta_diagnose_confirm(t, path);
		ta_table_free(path);
		ta_table_free(items);
	}
	if (!ok) {
		ta_table_free(t);
		ta_table_free(found);
		return NULL;
	}
	ta_diagnose_join(t, found);
	return ta_cli_pick(t, found, c->findings, &c->found);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	static const struct ta_shard_rule on_shards = { 1, 0, NULL, shard_tables,
							join };
	struct diag_cmd *c = ctx;

	/* what the model will need: build its index while loading */
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
	/* the findings: for --findings, and for the text's summary */
	c->want_findings = c->findings || cli->format == TA_FMT_TEXT;
	if (!cli->query.hta_compat)
		cli->shard_rule = &on_shards;
}

static int cmd_diagnose(int argc, char **argv)
{
	struct diag_cmd o = { { 90, 50000, 10000, 1 }, 0, NULL, 0 };
	const struct ta_cmd_info info = {
		"diagnose", "[options] PATH",
		"Per rank and ProfilerStep, what bounds the step: compute-bound, "
		"launch-bound,\nhost-stalled, communication-bound or copy-bound, with "
		"the main cause and its\ncost. --findings lists every cause with its "
		"cost, where it is and the usual\nfix.",
		opts, on_opt, &o, present,
		run
	};

	int rc = ta_cli_main(argc, argv, &info, run, &o, after_parse);

	ta_table_free(o.found);
	return rc;
}

const struct ta_command ta_command_diagnose = {
	"diagnose", cmd_diagnose, "per step: what bounds it, and what to fix",
	TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_REFUSED, NULL
};
