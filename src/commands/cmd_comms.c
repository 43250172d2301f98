/* traceanalyze comms: the collectives per rank (analyses/ranks/comms.c);
 * with --tb-compat, the plugin's Distributed view's communication ops
 * table, or with --by step its wait chart (compat/tb/distributed_tb.c). */
#include "cli.h"
#include "commands.h"

struct comms_opts { int by; };
enum { BY_OP, BY_STEP };

static const struct ta_opt opts[] = {
	TA_CHOICE("by", "WHAT", struct comms_opts, by, "op|step",
		  "op (default): per rank and collective; step (with --tb-compat): the "
		  "plugin's Synchronizing/Communication chart, per rank and step"),
	TA_OPT_END
};

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	const struct comms_opts *o = ctx;

	if (q->mode == TA_MODE_TB)
		return ta_distributed_tb_run(db, q, o->by == BY_STEP ? TA_DIST_TB_WAIT :
					     TA_DIST_TB_OPS, out, err);
	if (o->by == BY_STEP) {
		ta_error_set(err, TA_EXIT_USAGE, "comms --by step goes with --tb-compat "
			     "(per step: stragglers gives each rank's wait_us and comm_us, "
			     "overlap --by step its communication beside computation)");
		return -1;
	}
	return ta_comms_run(db, q, out, err);
}

/* On shards: each rank's part, joined; the plugin's view matches every
 * rank's ops with the others': the merged way. */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	(void)ctx;
	cli->shard_rule = cli->query.mode == TA_MODE_TB ? NULL : &ta_shard_comms;
}

static int cmd_comms(int argc, char **argv)
{
	struct comms_opts o = { BY_OP };
	const struct ta_cmd_info info = {
		"comms", "[options] PATH",
		"Per rank, process group and collective (allreduce, _allgather_base, ...,\n"
		"as record_param_comms names them): calls, bytes in and out (elements\n"
		"times the dtype's size, as the op that issued it says), the kernels' time,\n"
		"and of that the time spent waiting for the last member to arrive (wait_us:\n"
		"matched across ranks) and the rest (transfer_us).",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_comms = {
	"comms", cmd_comms, "collectives per rank: calls, bytes, time waiting and transferring",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_TB] = TA_COMPAT_OWN }, NULL
};
