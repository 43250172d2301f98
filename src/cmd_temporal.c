/* traceanalyze temporal: idle / compute / non-compute time per rank. */
#include "cli.h"
#include "commands.h"

static int no_opts(void *ctx, int key, const char *arg)
{
	(void)ctx, (void)key, (void)arg;
	return -1;
}

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
		"anything else\n(communication, memory copies). CSV columns: "
		"rank,idle_us,compute_us,\nnon_compute_us,kernel_us,idle_pct,"
		"compute_pct,non_compute_pct.",
		NULL, no_opts, NULL
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0)
		rc = ta_cli_run(&cli, run, NULL);
	else
		rc = rc > 0 ? 0 : 2;
	ta_cli_free(&cli);
	return rc;
}
