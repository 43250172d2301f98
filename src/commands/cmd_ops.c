/* traceanalyze ops: the profiler's key_averages table from a trace. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_GROUP = 1 };

/* --group-by shape or stack:N */
static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_ops_opts *o = ctx;
	long v;

	if (key != OPT_GROUP)
		return -1;
	if (strcmp(arg, "shape") == 0) {
		o->group_shape = 1;
		return 0;
	}
	if (strncmp(arg, "stack:", 6) || ta_cli_parse_count(arg + 6, 1000, &v) < 0 || !v)
		return -1;
	o->stack_depth = (int)v;
	return 0;
}

#define O struct ta_ops_opts
static const struct ta_opt opts[] = {
	TA_CHOICE("sort", "COL", O, sort,
		  "self_device_us=self_cuda_time_total=self_device_time_total"
		  "|device_us=cuda_time_total=device_time_total"
		  "|self_cpu_us=self_cpu_time_total|cpu_us=cpu_time_total|calls=count"
		  "|self_cpu_mem_bytes=self_cpu_memory_usage|cpu_mem_bytes=cpu_memory_usage"
		  "|self_device_mem_bytes=self_cuda_memory_usage=self_device_memory_usage"
		  "|device_mem_bytes=cuda_memory_usage=device_memory_usage",
		  "self_device_us (default), device_us, self_cpu_us, cpu_us, calls, and with [memory] events (profile_memory=True) self_cpu_mem_bytes, cpu_mem_bytes, self_device_mem_bytes, device_mem_bytes; or torch's key_averages() names (self_cuda_time_total, cuda_time_total, self_cpu_time_total, cpu_time_total, count, self_cuda_memory_usage, cuda_memory_usage, self_cpu_memory_usage, cpu_memory_usage, device_ variants)"),
	TA_COUNT("top", "N", O, top, 0, 100000000, "the first N rows per rank (default: all)"),
	TA_CALL("group-by", "HOW", OPT_GROUP, "shape: by input shapes; stack:N: by the innermost N Python frames"),
	TA_FLAG("kernels", O, kernels, "add a row per GPU kernel name (NAME (kernel) where a CPU op has its name)"),
	TA_COUNT("step", "N", O, step, 0, 1000000000, "only ProfilerStep#N"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	const struct ta_ops_opts *o = ctx;

	if (q->mode == TA_MODE_TB) {
		/* the plugin's Operator view has its own order and columns */
		if (o->sort != ta_ops_defaults.sort || o->top || o->stack_depth ||
		    o->kernels || o->step >= 0) {
			ta_error_set(err, TA_EXIT_USAGE, "ops --tb-compat is the TensorBoard "
				     "plugin's Operator view: --sort, --top, --group-by stack:N, "
				     "--kernels and --step are not its; leave them out");
			return -1;
		}
		return ta_ops_tb_run(db, q, o->group_shape, out, err);
	}
	return ta_ops_run(db, q, ctx, out, err);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	(void)ctx;
	/* it reads every thread in order: build that index while loading a
	 * database that is kept (for one run, sorting once costs less) */
	if (!cli->ingest.no_cache)
		cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_THREAD);
}

static void present(struct ta_table *t, void *ctx)
{
	(void)ctx;
	ta_people_ops(t);
}

static int cmd_ops(int argc, char **argv)
{
	struct ta_ops_opts o = ta_ops_defaults;
	const struct ta_cmd_info info = {
		"ops", "[options] PATH",
		"The profiler's key_averages table, rebuilt from the trace: per rank "
		"and operator\n(CPU op, record_function range, runtime call), with the "
		"profiler's percentages;\nwith --group-by, an input_shapes or a stack "
		"column too. GPU time reaches an\nop through the launches inside it.",
		opts, on_opt, &o, present,
		run, { NULL }
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_ops = {
	"ops", cmd_ops, "the profiler's key_averages table, per rank",
	TA_SPREAD_PER_RANK, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_REFUSED, [TA_MODE_TB] = TA_COMPAT_OWN }, NULL
};
