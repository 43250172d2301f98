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

	if (q->hta_compat) {
		ta_error_set(err, TA_EXIT_USAGE, "diagnose has no HTA counterpart: "
			     "--hta-compat does not apply");
		return -1;
	}
	if (c->findings)
		c->o.path = 0; /* the findings table does not show it */
	if (ta_diagnose_run(db, q, &c->o, &verdicts, &found, err) < 0)
		return -1;
	ta_table_free(c->found);
	c->found = NULL;
	if (c->findings) {
		ta_table_free(verdicts);
		*out = found;
	} else {
		*out = verdicts;
		c->found = found;
	}
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct diag_cmd *c = ctx;

	if (!c->findings && c->found)
		ta_people_diagnose(t, c->found);
}

/* The verdicts alone (CSV, JSON) without the path: a rank's rows from
 * its events and every rank's collectives; the late peers' causes are
 * named over all rows. */
static struct ta_table *join_verdicts(struct ta_table *t)
{
	ta_name_late_peers(t, 0, 1, 5);
	return t;
}

/* With the path, each shard's verdicts without it, then the critical
 * path over the shards (shard_critical.c) confirms them. */
static int verdicts_alone(sqlite3 *db, const struct ta_query *q, void *ctx,
			  struct ta_table **out, struct ta_error *err)
{
	struct diag_cmd *c = ctx;
	struct ta_diagnose_opts o = c->o;
	struct ta_table *found = NULL;

	o.path = 0;
	if (ta_diagnose_run(db, q, &o, out, &found, err) < 0)
		return -1;
	ta_table_free(found);
	return 0;
}

static struct ta_table *confirm(struct ta_shards *sh, struct ta_table *t,
				void *ctx)
{
	struct ta_shard_critical sc = { ta_diagnose_path_opts, NULL, 0, 0 };
	struct ta_table *path, *items;

	(void)ctx;
	if (!ta_shards_critical(sh, &sc, &path, &items)) {
		ta_table_free(t);
		return NULL;
	}
	ta_diagnose_confirm(t, path);
	ta_table_free(path);
	ta_table_free(items);
	return t;
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	static const struct ta_shard_rule verdicts = { 1, 0, join_verdicts, NULL, NULL };
	static const struct ta_shard_rule with_path = { 1, 0, join_verdicts,
							verdicts_alone, confirm };
	const struct diag_cmd *c = ctx;

	/* what the model will need: build its index while loading */
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
	/* on shards, the verdicts (CSV, JSON): the findings are ranked over
	 * every rank, and text shows them: those read the merged database */
	if (!c->findings && cli->format != TA_FMT_TEXT)
		cli->shard_rule = c->o.path ? &with_path : &verdicts;
}

int cmd_diagnose(int argc, char **argv)
{
	struct diag_cmd o = { { 90, 50000, 10000, 1 }, 0, NULL };
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
