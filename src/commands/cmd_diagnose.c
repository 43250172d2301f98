/* traceanalyze diagnose: per step, what bounds it and what to fix. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>

/* Options bound to the section's fields (struct ta_diagnose_section). */
#define O struct ta_diagnose_section
static const struct ta_opt opts[] = {
	TA_FLAG("findings", O, findings, "each cause with its cost, per step: rank,step,kind,cost_us,count,where,advice,detail"),
	TA_FLAG("summary", O, summary, "with --findings: each cause summed over the kept steps, keyed by rank,kind,where (the same from run to run: for --baseline)"),
	TA_REAL("busy-pct", "P", O, o.busy_pct, 0, 100, "compute-bound when the GPU is busy at least P% of the step (90)"),
	TA_US("host-gap-us", "US", O, o.host_gap_ns, 0, "idle holes this long are host time; shorter ones launch overhead (50)"),
	TA_US("small-kernel-us", "US", O, o.small_kernel_ns, 0, "kernels shorter than this are small (10)"),
	TA_CLEAR("no-path", O, o.path, "leave out the critical path's second opinion (path_bound, path_pct, verdict_path_pct): about 2.5x faster"),
	TA_OPT_END
};
#undef O

static void present(struct ta_table *t, void *ctx)
{
	struct ta_diagnose_section *c = ctx;

	if (!c->findings && c->found)
		ta_people_diagnose(t, c->found);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	struct ta_diagnose_section *c = ctx;

	/* what the model will need: build its index while loading */
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
	/* the findings: for --findings, and for the text's summary */
	c->want_findings = c->findings || cli->format == TA_FMT_TEXT;
	/* on shards: shard_diagnose.c */
	cli->shard_rule = &ta_shard_diagnose;
}

static int cmd_diagnose(int argc, char **argv)
{
	struct ta_diagnose_section o = { ta_diagnose_defaults, 0, 0, NULL, 0 };
	const struct ta_cmd_info info = {
		"diagnose", "[options] PATH",
		"Per rank and ProfilerStep, what bounds the step: compute-bound, "
		"launch-bound,\nhost-stalled, communication-bound, copy-bound, "
		"waiting-for-peer, queued-idle\n(the GPU idle with its next work "
		"queued) or unrecorded, with the main cause\nand its cost. --findings "
		"lists every cause with its cost, where it is and the\nusual fix.",
		opts, NULL, &o, present,
		ta_diagnose_section_run, { NULL }
	};

	int rc = ta_cli_main(argc, argv, &info, ta_diagnose_section_run, &o, after_parse);

	ta_table_free(o.found);
	return rc;
}

const struct ta_command ta_command_diagnose = {
	"diagnose", cmd_diagnose, "per step: what bounds it, and what to fix",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_REFUSED }, NULL
};
