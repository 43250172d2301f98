/* traceanalyze overlap: communication hidden under computation, per rank
 * (analyses/gpu/overlap.c) or per step (overlap_steps.c; with
 * --tb-compat, the plugin's Distributed view's chart, compat/tb). */
#include "cli.h"
#include "commands.h"

struct overlap_opts { int by; };
enum { BY_RANK, BY_STEP };

static const struct ta_opt opts[] = {
	TA_CHOICE("by", "WHAT", struct overlap_opts, by, "rank|step",
		  "rank (default): per rank; step: per rank and kept step, computation alone, "
		  "overlapping, communication alone and other time; with --tb-compat, "
		  "the plugin's Computation/Communication chart"),
	TA_OPT_END
};

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	const struct overlap_opts *o = ctx;

	if (q->mode == TA_MODE_TB) {
		if (o->by != BY_STEP) {
			ta_error_set(err, TA_EXIT_USAGE, "--tb-compat: the plugin's chart is "
				     "per step: overlap --by step --tb-compat");
			return -1;
		}
		return ta_distributed_tb_run(db, q, TA_DIST_TB_OVERLAP, out, err);
	}
	if (o->by == BY_STEP && q->mode == TA_MODE_HTA) {
		ta_error_set(err, TA_EXIT_USAGE, "--hta-compat: HTA's overlap is per rank: "
			     "leave --by step out");
		return -1;
	}
	return o->by == BY_STEP ? ta_overlap_steps_run(db, q, out, err) :
	       ta_overlap_run(db, q, out, err);
}

/* On shards: per step, each rank alone; per rank, with the peers'
 * collectives (what a late peer cost); the plugin's view matches every
 * rank's ops with the others': the merged way. */
static void after_parse(void *ctx, struct ta_cli *cli)
{
	const struct overlap_opts *o = ctx;

	cli->shard_rule = cli->query.mode == TA_MODE_TB ? NULL :
			  o->by == BY_STEP ? &ta_shard_per_rank : &ta_shard_with_peers;
}

static int cmd_overlap(int argc, char **argv)
{
	struct overlap_opts o = { BY_RANK };
	const struct ta_cmd_info info = {
		"overlap", "[options] PATH",
		"Per rank, the share of communication (NCCL) kernel time during which "
		"a\ncomputation kernel also ran (overlap_pct is empty for a rank "
		"without\ncommunication), and what communication cost: exposed_us, "
		"the time computation\nwaited for it or ran slower beside it "
		"(slowed_us), wait_us of it a late peer.\n--by step: per rank and "
		"kept step, the step's time as computation alone,\noverlapping, "
		"communication alone (no computation beside it: not its whole\ncost, "
		"which exposed_us is) and other; they add up to step_us.",
		opts, NULL, &o, NULL,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_overlap = {
	"overlap", cmd_overlap, "communication hidden under computation",
	TA_SPREAD_BY_OPTIONS, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_RULES, [TA_MODE_TB] = TA_COMPAT_OWN }, NULL
};
