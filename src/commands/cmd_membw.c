/* traceanalyze membw: memory bandwidth per copy kind. */
#include "cli.h"
#include "commands.h"

static const struct ta_opt opts[] = {
	TA_FLAG("series", struct ta_membw_opts, series, "the time series: rank,name,ts_us,gbps"),
	TA_OPT_END
};

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_membw_run(db, q, ctx, out, err);
}

/* On shards: per rank; --series gives times from the job's start, which
 * every shard's part gathered says (ta_model_min_ts). */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	const struct ta_membw_opts *o = ctx;

	cli->shard_rule = o->series ? &ta_shard_with_peers : &ta_shard_per_rank;
}

static int cmd_membw(int argc, char **argv)
{
	struct ta_membw_opts o = ta_membw_defaults;
	const struct ta_cmd_info info = {
		"membw", "[options] PATH",
		"Memory bandwidth (GB/s) per copy kind (Memcpy HtoD, DtoH, DtoD, "
		"Memset, ...):\nthe sum of the bandwidths of the copies in flight, at "
		"each start and end;\nstatistics over those points, or with --series "
		"the points themselves.",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_membw = {
	"membw", cmd_membw, "memory bandwidth per copy kind",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
