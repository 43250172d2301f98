/* traceanalyze overlap: communication hidden under computation. */
#include "cli.h"
#include "commands.h"

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return ta_overlap_run(db, q, out, err);
}

int cmd_overlap(int argc, char **argv)
{
	static const struct ta_cmd_info info = {
		"overlap", "[options] PATH",
		"Per rank, the share of communication (NCCL) kernel time during which "
		"a\ncomputation kernel also ran (overlap_pct is empty for a rank "
		"without\ncommunication), and what communication cost: exposed_us, "
		"the time computation\nwaited for it or ran slower beside it "
		"(slowed_us), wait_us of it a late peer.",
		NULL, ta_cli_no_opts, NULL, NULL,
		run
	};

	return ta_cli_main(argc, argv, &info, run, NULL, NULL);
}
