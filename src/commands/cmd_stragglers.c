/* traceanalyze stragglers: which rank holds the others back, by how much,
 * and why. */
#include "cli.h"
#include "commands.h"
#include "ta_people.h"

static const struct ta_opt opts[] = {
	TA_REAL("late-pct", "P", struct ta_stragglers_opts, late_pct, 0, 100, "a straggler costs the others at least P% of its step (10)"),
	TA_OPT_END
};

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_stragglers_run(db, q, ctx, out, err);
}

static void present(struct ta_table *t, void *ctx)
{
	(void)ctx;
	ta_people_stragglers(t);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	struct ta_stragglers_opts *o = ctx;

	/* the rows shown: every rank is diagnosed (late is the others' loss) */
	o->ranks = cli->query.ranks;
	o->nranks = cli->query.nranks;
	/* it runs diagnose: build its index while loading */
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
}

static int cmd_stragglers(int argc, char **argv)
{
	struct ta_stragglers_opts o = ta_stragglers_defaults;
	const struct ta_cmd_info info = {
		"stragglers", "[options] PATH",
		"Per rank and step, the collectives matched across ranks: how long its\n"
		"collective kernels waited for the last member (coll_wait_us) and how far\n"
		"behind the first it arrived (arrival_us), hidden under other work or not;\n"
		"the step time it lost waiting for a late peer (wait_us, diagnose's\n"
		"wait_for_peer), the peer it lost the most to (waited_for) and how much\n"
		"(waited_for_us); the most any rank lost waiting for it (late_us); the\n"
		"share it came last to; whether it is the step's\n"
		"straggler (the largest late_us, at least --late-pct of its step); and its\n"
		"own main cause (diagnose's). Every rank is diagnosed; --ranks picks the\n"
		"rows shown.",
		opts, NULL, &o, present,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_stragglers = {
	"stragglers", cmd_stragglers, "across ranks: who the others wait for, how long, and why",
	TA_SPREAD_JOINED, &ta_shard_stragglers, 1, { [TA_MODE_HTA] = TA_COMPAT_REFUSED }, NULL
};
