/* traceanalyze overview: the TensorBoard plugin's Overview, ours
 * (analyses/gpu/overview.c) or, with --tb-compat, the plugin's own
 * step-time breakdown (compat/tb/overview_tb.c). */
#include "ta_command.h"
#include "ta_analyses.h"
#include "ta_people.h"


#define O struct ta_overview_opts
static const struct ta_opt opts[] = {
	TA_FLAG("summary", O, summary, "per rank instead: the steps' average breakdown and the GPU "
		"summary (gpu_util_pct, sm_efficiency_pct, occupancy_pct, occupancy_unknown, "
		"tensor_core_pct, matmul_pct, cuda_graphs, compiled, loader_workers); with --tb-compat, the plugin's GPU Summary"),
	TA_OPT_END
};
#undef O

static struct ta_overview_opts options;

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	const struct ta_overview_opts *o = ctx;

	if (q->mode == TA_MODE_TB)
		return o->summary ? ta_gpu_metrics_tb_run(db, q, out, err) :
		       ta_overview_tb_run(db, q, out, err);
	return ta_overview_run(db, q, ctx, out, err);
}

static void present(struct ta_table *t, void *ctx)
{
	const struct ta_overview_opts *o = ctx;

	/* --tb-compat's tables (the breakdown; the GPU Summary, long form):
	 * as they are */
	if ((!t->also && !o->summary) || ta_table_col(t, "title") >= 0)
		return;
	ta_people_overview(t, o->summary ? t : t->also, o->summary ? t->also : NULL);
}

static const struct ta_cmd_info info = {
	"overview", "[options] PATH",
	"The TensorBoard profiler plugin's Overview, right on today's traces: per rank\n"
	"and kept step, the step's time split so that each moment counts once, in the\n"
	"first of kernel, memcpy, memset, communication (the collectives' kernels),\n"
	"runtime (runtime and driver calls), dataloader, cpu_exec (other CPU ops and\n"
	"ranges) that runs then, else other. --summary: per rank, the average step\n"
	"and the GPU summary over the kept steps. Text adds what to do about it.",
	opts, NULL, &options, present,
	run, { NULL }
};

const struct ta_command ta_command_overview = {
	"overview", NULL, "the TensorBoard plugin's overview: step time by category, GPU summary",
	TA_SPREAD_PER_RANK, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_REFUSED, [TA_MODE_TB] = TA_COMPAT_OWN }, &info
};
