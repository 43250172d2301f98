/* traceanalyze temporal: idle / compute / non-compute time per rank. */
#include "cli.h"
#include "commands.h"

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_temporal_run(db, q, out, err);
}

int cmd_temporal(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"temporal", "[options] PATH",
		"Temporal breakdown per rank: of the span from the first to the last "
		"GPU activity,\nthe time the GPU was idle, computing, or busy with "
		"anything else\n(communication, memory copies).",
		NULL, ta_cli_no_opts, NULL, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, NULL, NULL);
}
