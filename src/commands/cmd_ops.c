/* traceanalyze ops: the profiler's key_averages table from a trace. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"
#include "ta_db.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_SORT = 1, OPT_TOP, OPT_GROUP, OPT_KERNELS, OPT_STEP };

static const struct ta_opt opts[] = {
	{ "sort", 1, OPT_SORT, "COL", "self_device_us (default), device_us, self_cpu_us, cpu_us, calls" },
	{ "top", 1, OPT_TOP, "N", "the first N rows per rank (default: all)" },
	{ "group-by", 1, OPT_GROUP, "HOW", "shape: by input shapes; stack:N: by the innermost N Python frames" },
	{ "kernels", 0, OPT_KERNELS, NULL, "add a row per GPU kernel name" },
	{ "step", 1, OPT_STEP, "N", "only ProfilerStep#N" },
	{ NULL, 0, 0, NULL, NULL }
};

static int parse_sort(const char *s, enum ta_ops_sort *sort)
{
	static const char *const names[] = { "self_device_us", "device_us",
		"self_cpu_us", "cpu_us", "calls" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			*sort = (enum ta_ops_sort)i;
			return 0;
		}
	return -1;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_ops_opts *o = ctx;
	long v;

	switch (key) {
	case OPT_SORT:
		return parse_sort(arg, &o->sort);
	case OPT_TOP:
		if (ta_cli_parse_count(arg, 100000000, &v) < 0)
			return -1;
		o->top = (int)v;
		return 0;
	case OPT_GROUP:
		if (strcmp(arg, "shape") == 0) {
			o->group_shape = 1;
			return 0;
		}
		if (strncmp(arg, "stack:", 6) || ta_cli_parse_count(arg + 6, 1000, &v) < 0 || !v)
			return -1;
		o->stack_depth = (int)v;
		return 0;
	case OPT_KERNELS:
		o->kernels = 1;
		return 0;
	case OPT_STEP:
		if (ta_cli_parse_count(arg, 1000000000, &v) < 0)
			return -1;
		o->step = v;
		return 0;
	}
	return -1;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
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
	struct ta_ops_opts o = { TA_OPS_SORT_SELF_DEVICE, 0, 0, 0, 0, -1 };
	const struct ta_cmd_info info = {
		"ops", "[options] PATH",
		"The profiler's key_averages table, rebuilt from the trace: per rank "
		"and operator\n(CPU op, record_function range, runtime call), with the "
		"profiler's percentages;\nwith --group-by, an input_shapes or a stack "
		"column too. GPU time reaches an\nop through the launches inside it.",
		opts, on_opt, &o, present,
		run
	};

	return ta_cli_main(argc, argv, &info, run, &o, after_parse);
}

const struct ta_command ta_command_ops = {
	"ops", cmd_ops, "the profiler's key_averages table, per rank",
	TA_SPREAD_PER_RANK, NULL, 1, TA_COMPAT_REFUSED, NULL
};
