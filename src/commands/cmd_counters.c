/* traceanalyze counters: CUPTI hardware counters per kernel and op. */
#include "cli.h"
#include "commands.h"

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_counters_run(db, q, out, err);
}

int cmd_counters(int argc, char **argv)
{
	const struct ta_cmd_info info = {
		"counters", "[options] PATH",
		"The hardware counters of a trace taken in the CUPTI range profiler "
		"mode\n(cuda_profiler_range events), per kernel and counter, with the "
		"innermost and\noutermost CPU op over its launch: rank,nth,kernel,op,"
		"top_op,counter,value.",
		NULL, ta_cli_no_opts, NULL, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, NULL, NULL);
}
