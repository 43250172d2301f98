/* traceanalyze queue: launch queue length per stream. */
#include "cli.h"
#include "commands.h"

#include <limits.h>
#include <stdlib.h>

#define O struct ta_queue_opts
static const struct ta_opt opts[] = {
	TA_FLAG("series", O, series, "the time series: rank,stream,ts_us,queue_length"),
	TA_COUNT("blocked-at", "N", O, blocked_at, 1, LONG_MAX, "time with the queue at or above N, per stream"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_queue_run(db, q, ctx, out, err);
}

/* On shards: per rank; --series gives times from the job's start, which
 * every shard's part gathered says (ta_model_min_ts). */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	const struct ta_queue_opts *o = ctx;

	cli->shard_rule = o->series ? &ta_shard_with_peers : &ta_shard_per_rank;
}

static int cmd_queue(int argc, char **argv)
{
	struct ta_queue_opts o = ta_queue_defaults;
	const struct ta_cmd_info info = {
		"queue", "[options] PATH",
		"Launch queue length per stream: launches issued but not yet started "
		"on the GPU\n(+1 at the launch call, -1 when the work starts); "
		"statistics over the change\npoints. --blocked-at N: the time with the "
		"queue at or above N (and its ratio\nof the rank's trace duration).",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_queue = {
	"queue", cmd_queue, "launch queue length per stream",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
