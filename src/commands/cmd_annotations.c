/* traceanalyze annotations: time per record_function range. */
#include "cli.h"
#include "commands.h"

#define O struct ta_annotations_opts
static const struct ta_opt opts[] = {
	TA_FLAG("gpu", O, gpu, "the GPU-side ranges (gpu_user_annotation)"),
	TA_FLAG("kernels", O, kernels, "each kernel with its innermost GPU range"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_annotations_run(db, q, ctx, out, err);
}

/* On shards: per rank; --kernels gives times from the job's start, which
 * every shard's part gathered says (ta_model_min_ts). */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	const struct ta_annotations_opts *o = ctx;

	cli->shard_rule = o->kernels ? &ta_shard_with_peers : &ta_shard_per_rank;
}

static int cmd_annotations(int argc, char **argv)
{
	struct ta_annotations_opts o = ta_annotations_defaults;
	const struct ta_cmd_info info = {
		"annotations", "[options] PATH",
		"Time per user annotation (record_function ranges, ProfilerStep#N) per rank\n"
		"and name; --gpu: the GPU-side ranges; --kernels: each kernel with its\n"
		"innermost GPU range.",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_annotations = {
	"annotations", cmd_annotations, "time per record_function annotation",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
