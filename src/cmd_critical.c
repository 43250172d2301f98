/* traceanalyze critical-path: what each step was really waiting on. */
#include "cli.h"
#include "commands.h"
#include "ta_people.h"

#include <stdlib.h>

enum { OPT_STEP = 1, OPT_TOP };

static const struct ta_opt opts[] = {
	{ "step", 1, OPT_STEP, "N", "only ProfilerStep#N (default: every kept step)" },
	{ "top", 1, OPT_TOP, "N", "the N ops, kernels and ranges with the most path time, per step: rank,step,kind,name,path_us,count" },
	{ NULL, 0, 0, NULL, NULL }
};

struct cp_cmd {
	struct ta_critical_opts o;
	int top;                 /* --top given: the items table instead */
	struct ta_table *items;  /* text: the first item of each step, for prose */
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct cp_cmd *c = ctx;
	char *end;
	long long n = strtoll(arg, &end, 10);

	if (*end || end == arg || n < 0)
		return -1;
	if (key == OPT_STEP)
		c->o.step = n;
	else if (key == OPT_TOP)
		c->o.top = (size_t)n, c->top = 1;
	else
		return -1;
	return 0;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct cp_cmd *c = ctx;
	struct ta_critical_opts o = c->o;
	struct ta_table *path, *items;

	if (q->hta_compat) {
		ta_error_set(err, TA_EXIT_USAGE, "critical-path: --hta-compat is "
			     "not supported yet");
		return -1;
	}
	if (!c->top)
		o.top = 50; /* for the text's sentences */
	if (ta_critical_run(db, q, &o, &path, &items, err) < 0)
		return -1;
	ta_table_free(c->items);
	c->items = NULL;
	if (c->top) {
		ta_table_free(path);
		*out = items;
	} else {
		*out = path;
		c->items = items;
	}
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct cp_cmd *c = ctx;

	if (!c->top && c->items)
		ta_people_critical(t, c->items);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	(void)ctx;
	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
}

int cmd_critical(int argc, char **argv)
{
	struct cp_cmd c = { { -1, 0 }, 0, NULL };
	const struct ta_cmd_info info = {
		"critical-path", "[options] PATH",
		"Per rank and step, the critical path: the chain of work the step's "
		"end waited\nfor, walked back along the dependency satisfied last "
		"(kernels on a stream,\nlaunches, cross-stream waits, host syncs, "
		"collectives' last members), and\nwhat it consists of: "
		"rank,step,path_us,cpu_us,launch_us,kernel_compute_us,\n"
		"kernel_comm_us,kernel_memory_us,gap_us,sync_us,peer_wait_us.",
		opts, on_opt, &c, present,
		run
	};
	int rc = ta_cli_main(argc, argv, &info, run, &c, after_parse);

	ta_table_free(c.items);
	return rc;
}
