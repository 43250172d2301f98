/* traceanalyze annotations: time per record_function range. */
#include "cli.h"
#include "commands.h"

enum { OPT_GPU = 1, OPT_KERNELS };

static const struct ta_opt opts[] = {
	{ "gpu", 0, OPT_GPU, NULL, "the GPU-side ranges (gpu_user_annotation)" },
	{ "kernels", 0, OPT_KERNELS, NULL, "each kernel with its innermost GPU range" },
	{ NULL, 0, 0, NULL, NULL }
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_annotations_opts *o = ctx;

	(void)arg;
	if (key == OPT_GPU)
		o->gpu = 1;
	else if (key == OPT_KERNELS)
		o->kernels = 1;
	else
		return -1;
	return 0;
}

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
	struct ta_annotations_opts o = { 0, 0, 1000, 0.8 };
	const struct ta_cmd_info info = {
		"annotations", "[options] PATH",
		"Time per user annotation (record_function ranges, ProfilerStep#N) per rank\n"
		"and name; --gpu: the GPU-side ranges; --kernels: each kernel with its\n"
		"innermost GPU range.",
		opts, on_opt, &o, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_annotations = {
	"annotations", cmd_annotations, "time per record_function annotation",
	TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES, NULL
};
