/* traceanalyze diagnose: per step, what bounds it and what to fix. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>

/* The options, and the findings kept for the text summary. */
struct diag_cmd {
	struct ta_diagnose_opts o;
	int findings;            /* the findings table instead of verdicts */
	struct ta_table *found;  /* text mode: summarised after the verdicts */
	int want_findings;       /* on shards: gather them (text, --findings) */
};

#define O struct diag_cmd
static const struct ta_opt opts[] = {
	TA_FLAG("findings", O, findings, "each cause with its cost: rank,step,kind,cost_us,count,where,advice"),
	TA_REAL("busy-pct", "P", O, o.busy_pct, 0, 100, "compute-bound when the GPU is busy at least P% of the step (90)"),
	TA_US("host-gap-us", "US", O, o.host_gap_ns, 0, "idle holes this long are host time; shorter ones launch overhead (50)"),
	TA_US("small-kernel-us", "US", O, o.small_kernel_ns, 0, "kernels shorter than this are small (10)"),
	TA_CLEAR("no-path", O, o.path, "leave out the critical path's second opinion (path_bound, path_pct, verdict_path_pct): about 2.5x faster"),
	TA_OPT_END
};
#undef O

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
	cli->shard_rule = &on_shards;
}

static int cmd_diagnose(int argc, char **argv)
{
	struct diag_cmd o = { ta_diagnose_defaults, 0, NULL, 0 };
	const struct ta_cmd_info info = {
		"diagnose", "[options] PATH",
		"Per rank and ProfilerStep, what bounds the step: compute-bound, "
		"launch-bound,\nhost-stalled, communication-bound or copy-bound, with "
		"the main cause and its\ncost. --findings lists every cause with its "
		"cost, where it is and the usual\nfix.",
		opts, NULL, &o, present,
		run, { NULL }
	};

	int rc = ta_cli_main(argc, argv, &info, run, &o, after_parse);

	ta_table_free(o.found);
	return rc;
}

const struct ta_command ta_command_diagnose = {
	"diagnose", cmd_diagnose, "per step: what bounds it, and what to fix",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_REFUSED }, NULL
};
