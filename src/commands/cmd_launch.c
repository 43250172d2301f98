/* traceanalyze launch: launch statistics per launched GPU activity. */
#include "cli.h"
#include "commands.h"

#define O struct ta_launch_opts
static const struct ta_opt opts[] = {
	TA_FLAG("summary", O, summary, "per rank: short kernels and outliers, with percentiles"),
	TA_FLAG("by-op", O, by_op, "per ATen op and the kernels it launched: rank,op,kernels,count,op_to_launch_us,launch_to_kernel_us"),
	TA_US("runtime-cutoff", "US", O, runtime_cutoff_ns, 0, "launch calls longer than US are runtime outliers (50)"),
	TA_US("launch-delay-cutoff", "US", O, launch_delay_cutoff_ns, 0, "delays longer than US are delay outliers (100)"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	const struct ta_launch_opts *o = ctx;

	if (o->by_op && o->summary) {
		ta_error_set(err, TA_EXIT_USAGE, "--by-op and --summary are two tables: "
			     "give one");
		return -1;
	}
	return o->by_op ? ta_launch_ops_run(db, q, out, err) : ta_launch_run(db, q, ctx, out, err);
}

/* On shards: per rank; --by-op too (a launch's op is on its own rank;
 * only --hta-compat, which goes the merged way, counts ranks before), its
 * rows sorted again over all ranks. */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	static const struct ta_shard_rule by_op = { 0, 0, ta_launch_ops_join, NULL, NULL };
	const struct ta_launch_opts *o = ctx;

	cli->shard_rule = o->by_op ? &by_op : &ta_shard_per_rank;
}

static int cmd_launch(int argc, char **argv)
{
	struct ta_launch_opts o = ta_launch_defaults;
	const struct ta_cmd_info info = {
		"launch", "[options] PATH",
		"Per launched GPU activity: the launch call's CPU time, the GPU time, "
		"and the\ndelay from the end of the call to the start on the GPU (nth: "
		"which kernel of\na CUDA graph launch, from 0). With --summary, per rank: "
		"short kernels\n(cpu_us <= runtime cutoff and gpu_us < cpu_us), runtime "
		"outliers and\nlaunch-delay outliers, with medians and 95th percentiles.",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_launch = {
	"launch", cmd_launch, "launch statistics: CPU time, GPU time, launch delay",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
