/* traceanalyze steps: the profiler steps, and which ones are analysed. */
#include "cli.h"
#include "commands.h"

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_steps_run(db, q, out, err);
}

int cmd_steps(int argc, char **argv)
{
	const struct ta_cmd_info info = {
		"steps", "[options] PATH",
		"Per rank, each ProfilerStep#N: its range on the host (cpu_start_us, "
		"cpu_us), the\nwindow the other commands measure it by (window_start_us, "
		"window_us: from\nthe end of the previous step's window to the later "
		"of its host end and the end\nof the GPU work it launched, see "
		"ANALYSIS WINDOW) and whether it was kept\n(the last step is not; "
		"--hta-compat: HTA's step filter).",
		NULL, ta_cli_no_opts, NULL, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, NULL, NULL);
}
