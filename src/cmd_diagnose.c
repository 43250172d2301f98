/* traceanalyze diagnose: per step, what bounds it and what to fix. */
#include "cli.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>

enum { OPT_FINDINGS = 1, OPT_BUSY, OPT_GAP, OPT_SMALL };

static const struct ta_opt opts[] = {
	{ "findings", 0, OPT_FINDINGS, NULL, "each cause with its cost: rank,step,kind,cost_us,count,where,advice" },
	{ "busy-pct", 1, OPT_BUSY, "P", "compute-bound when the GPU is busy at least P% of the step (90)" },
	{ "host-gap-us", 1, OPT_GAP, "US", "idle holes this long are host time; shorter ones launch overhead (50)" },
	{ "small-kernel-us", 1, OPT_SMALL, "US", "kernels shorter than this are small (10)" },
	{ NULL, 0, 0, NULL, NULL }
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_diagnose_opts *o = ctx;
	char *end;

	switch (key) {
	case OPT_FINDINGS:
		o->findings = 1;
		return 0;
	case OPT_BUSY:
		o->busy_pct = strtod(arg, &end);
		return end != arg && !*end && o->busy_pct >= 0 && o->busy_pct <= 100 ? 0 : -1;
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
	if (q->hta_compat) {
		ta_error_set(err, TA_EXIT_USAGE, "diagnose has no HTA counterpart: "
			     "--hta-compat does not apply");
		return -1;
	}
	return ta_diagnose_run(db, q, ctx, out, err);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	((struct ta_diagnose_opts *)ctx)->for_people = cli->format == TA_FMT_TEXT;
	/* what the model will need: build its index while loading */
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
}

int cmd_diagnose(int argc, char **argv)
{
	struct ta_diagnose_opts o = { 0, 90, 50000, 10000, 0 };
	const struct ta_cmd_info info = {
		"diagnose", "[options] PATH",
		"Per rank and ProfilerStep, what bounds the step: compute-bound, "
		"launch-bound,\nhost-stalled, communication-bound or copy-bound, with "
		"the main cause and its\ncost: rank,step,step_us,gpu_busy_pct,verdict,"
		"main_cause,cause_us. --findings\nlists every cause with its cost, "
		"where it is and the usual fix.",
		opts, on_opt, &o
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}
