/* traceanalyze queue: launch queue length per stream. */
#include "cli.h"
#include "commands.h"

#include <limits.h>
#include <stdlib.h>

enum { OPT_SERIES = 1, OPT_BLOCKED };

static const struct ta_opt opts[] = {
	{ "series", 0, OPT_SERIES, NULL, "the time series: rank,stream,ts_us,queue_length" },
	{ "blocked-at", 1, OPT_BLOCKED, "N", "time with the queue at or above N, per stream" },
	{ NULL, 0, 0, NULL, NULL }
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_queue_opts *o = ctx;
	long n;

	switch (key) {
	case OPT_SERIES:
		o->series = 1;
		return 0;
	case OPT_BLOCKED:
		if (ta_cli_parse_count(arg, LONG_MAX, &n) < 0 || n == 0)
			return -1;
		o->blocked_at = n;
		return 0;
	}
	return -1;
}

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
	struct ta_queue_opts o = { 0, 0 };
	const struct ta_cmd_info info = {
		"queue", "[options] PATH",
		"Launch queue length per stream: launches issued but not yet started "
		"on the GPU\n(+1 at the launch call, -1 when the work starts); "
		"statistics over the change\npoints. --blocked-at N: the time with the "
		"queue at or above N (and its ratio\nof the rank's trace duration).",
		opts, on_opt, &o, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_queue = {
	"queue", cmd_queue, "launch queue length per stream",
	TA_SPREAD_BY_OPTIONS, NULL, 1, TA_COMPAT_RULES, NULL
};
