/* traceanalyze memory: peak, growth and who allocated it, from the
 * trace's [memory] events. */
#include "cli.h"
#include "commands.h"
#include "ta_people.h"

#include <stdlib.h>
#include <string.h>

struct mem_cmd {
	struct ta_memory_opts o;
	int findings;
	struct ta_table *found;   /* text: said before the steps */
	const char *trace;        /* --trace: the run's profiler trace */
	struct ta_ingest_opts ingest;
};

enum { OPT_BY = 1 };

/* --by: the sites table, named by what */
static int on_opt(void *ctx, int key, const char *arg)
{
	struct mem_cmd *c = ctx;

	if (key != OPT_BY)
		return -1;
	c->o.by_site = 1;
	c->o.by = strcmp(arg, "op") == 0 ? TA_MEM_BY_OP :
		  strcmp(arg, "annotation") == 0 ? TA_MEM_BY_ANNOTATION :
		  strcmp(arg, "stack") == 0 ? TA_MEM_BY_STACK : (enum ta_mem_by)-1;
	return (int)c->o.by < 0 ? -1 : 0;
}

#define O struct mem_cmd
static const struct ta_opt opts[] = {
	TA_CALL("by", "op|annotation|stack", OPT_BY, "per site instead, named by the innermost CPU op, record_function range or Python frame over each allocation: rank,device,where,allocs,bytes,live_at_peak_bytes,never_freed_bytes,frees,freed_bytes,total_bytes,increase_bytes"),
	TA_FLAG("series", O, o.series, "the allocated and reserved bytes over time instead: rank,device,ts,allocated_bytes,reserved_bytes"),
	TA_US("bucket-us", "US", O, o.bucket_ns, 0.001, "with --series: the highest in each bucket of US"),
	TA_COUNT("bucket-events", "N", O, o.bucket_events, 1, 9e18, "with --series on an allocator snapshot: the highest of each N events (the axis of PyTorch's memory_viz)"),
	TA_FLAG("leaks", O, o.leaks, "an allocator snapshot: allocations never freed whose site allocated two or more times: device,where,allocs,bytes,bytes_each"),
	TA_STRING("trace", "PATH", O, trace, "an allocator snapshot: the profiler trace of the same run (file, directory or database; --ranks picks among its ranks): peak_step and peak_op say which ProfilerStep#N and which CPU op held the peak"),
	TA_FLAG("findings", O, findings, "what is worth saying instead: rank,device,kind,bytes,where (memory_growth, memory_peak, memory_fragmentation)"),
	TA_OPT_END
};
#undef O

/* --trace: the snapshot's peak placed in the trace of the same run.
 * Returns 1, or 0 with err set. */
static int place_peak(struct mem_cmd *c, const struct ta_query *q, struct ta_table *t,
		      struct ta_error *err)
{
	sqlite3 *trace = NULL;
	int ok;

	if (t->ncols < 2 || strcmp(t->cols[1].name, "baseline_bytes") != 0) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace goes with an allocator snapshot's "
			     "summary (no --by, --leaks or --series)");
		return 0;
	}
	ok = ta_input_open(c->trace, &c->ingest, &trace, err) == 0 &&
	     ta_snapshot_place(trace, q, t, err) == 0;
	sqlite3_close(trace);
	return ok;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct mem_cmd *c = ctx;
	struct ta_table *t, *f;

	if (q->mode == TA_MODE_TB) {   /* the plugin's Memory view */
		if (c->o.series && !c->o.by_site && !c->o.bucket_ns && !c->o.bucket_events &&
		    !c->o.leaks && !c->trace && !c->findings)
			return ta_memory_curve_tb_run(db, q, out, err);
		if (c->o.by_site && c->o.by == TA_MEM_BY_OP && !c->o.series && !c->o.leaks &&
		    !c->trace && !c->findings)
			return ta_memory_tb_run(db, q, out, err);
		ta_error_set(err, TA_EXIT_USAGE, "--tb-compat: the plugin's Memory view is "
			     "memory --by op (its statistics) or memory --series (its curve)");
		return -1;
	}
	if ((c->o.bucket_ns || c->o.bucket_events) && !c->o.series) {
		ta_error_set(err, TA_EXIT_USAGE, "--bucket-us and --bucket-events go with --series");
		return -1;
	}
	if (ta_memory_run(db, q, &c->o, &t, &f, err) < 0)
		return -1;
	if (c->trace && !place_peak(c, q, t, err)) {
		ta_table_free(t);
		ta_table_free(f);
		return -1;
	}
	*out = ta_cli_pick(t, f, c->findings, &c->found);
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct mem_cmd *c = ctx;

	if (c->found && !c->o.series)
		ta_people_memory(t, c->found);
	if (t->ncols > 1 && strcmp(t->cols[1].name, "baseline_bytes") == 0)
		ta_people_snapshot(t);
}

/* On shards, text: the sentences come from every rank's findings, which
 * each shard's run hands back with its rows (a second table), gathered in
 * rank order as one run. */
static int with_findings(sqlite3 *db, const struct ta_query *q, void *ctx,
			 struct ta_table **out, struct ta_error *err)
{
	struct mem_cmd *c = ctx;
	struct ta_table *f = NULL;

	if (ta_memory_run(db, q, &c->o, out, &f, err) < 0)
		return -1;
	(*out)->also = f;
	return 0;
}

static struct ta_table *gather_findings(struct ta_shards *sh, struct ta_table *t,
					void *ctx)
{
	struct mem_cmd *c = ctx;

	(void)sh;
	ta_table_free(c->found);
	c->found = t->also;
	t->also = NULL;
	return t;
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	static const struct ta_shard_rule text = { 0, 0, NULL, with_findings,
						   gather_findings };
	struct mem_cmd *c = ctx;

	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST | TA_NEED_MEM);
	c->ingest = cli->ingest;    /* --trace's, read in run() */
	ta_cli_add_input(cli, c->trace);
	if (cli->format == TA_FMT_TEXT && !c->findings && !c->o.series &&
	    cli->query.mode != TA_MODE_TB)
		cli->shard_rule = &text;
}

static int cmd_memory(int argc, char **argv)
{
	struct mem_cmd c = { ta_memory_defaults, 0, NULL, NULL, { 0 } };
	const struct ta_cmd_info info = {
		"memory", "[options] PATH",
		"Per rank, device and kept step, from the allocator's [memory] events "
		"(profile with\nprofile_memory=True): the allocated bytes at the step's "
		"start and end, its peak\nand when, growth, allocations, frees and the "
		"peak of reserved bytes:\nrank,device,step,start_bytes,end_bytes,"
		"peak_bytes,peak_ts,growth_bytes,allocs,\nfrees,reserved_peak_bytes. "
		"PATH may also be an allocator snapshot (torch.cuda.memory.\n"
		"_dump_snapshot, gzipped or not): per device device,baseline_bytes,"
		"peak_bytes,\npeak_time_us,activations_bytes,reserved_at_peak_bytes,"
		"fragmentation_bytes,\nlargest_free_bytes, the baseline's parts parameters_bytes,"
		"gradients_bytes,\noptimizer_bytes,workspace_bytes,other_baseline_bytes, and "
		"with --trace\npeak_step,peak_op. With --tb-compat, the TensorBoard plugin's "
		"Memory view:\n--by op its statistics per operator, --series its curve.",
		opts, on_opt, &c, present,
		run, { NULL }
	};
	int rc = ta_cli_main(argc, argv, &info, run, &c, after_parse);

	ta_table_free(c.found);
	return rc;
}

const struct ta_command ta_command_memory = {
	"memory", cmd_memory, "allocated memory per step: peak, growth, and who allocated it",
	TA_SPREAD_PER_RANK, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_REFUSED, [TA_MODE_TB] = TA_COMPAT_OWN }, NULL
};
