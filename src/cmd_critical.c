/* traceanalyze critical-path: what each step was really waiting on. */
#include "cli.h"
#include "commands.h"
#include "ta_db.h"
#include "ta_people.h"
#include "ta_report.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_STEP = 1, OPT_TOP, OPT_WHAT_IF, OPT_TRACE };

static const struct ta_opt opts[] = {
	{ "step", 1, OPT_STEP, "N", "only ProfilerStep#N (default: every kept step)" },
	{ "top", 1, OPT_TOP, "N", "the N ops, kernels and ranges with the most path time, per step: rank,step,kind,name,path_us,count" },
	{ "trace", 1, OPT_TRACE, "OUT", "write the rank's trace again with the path marked (args.critical, flows), for Perfetto; .gz: gzipped" },
	{ "what-if", 1, OPT_WHAT_IF, "KIND:GLOB=F", "predicted_us if the matching items took F times as long, e.g. 'kernel:*gemm*=0.5', 'cpu:data_loading=0'" },
	{ NULL, 0, 0, NULL, NULL }
};

struct cp_cmd {
	struct ta_critical_opts o;
	char what[512];          /* --what-if, split in place */
	const char *trace;       /* --trace OUT */
	int top;                 /* --top given: the items table instead */
	struct ta_table *items;  /* text: the first item of each step, for prose */
};

/* "kernel:*gemm*=0.5": kind, glob, factor. */
static int what_if(struct cp_cmd *c, const char *arg)
{
	static const char *const kinds[] = { "kernel", "cpu", "launch", "sync",
		"gap", NULL };
	char *colon, *eq, *end;
	size_t i;

	snprintf(c->what, sizeof(c->what), "%s", arg);
	colon = strchr(c->what, ':');
	eq = strrchr(c->what, '=');
	if (!colon || !eq || eq < colon)
		return -1;
	*colon = *eq = '\0';
	for (i = 0; kinds[i] && strcmp(kinds[i], c->what) != 0; i++)
		;
	c->o.what_factor = strtod(eq + 1, &end);
	if (!kinds[i] || *end || end == eq + 1 || !(c->o.what_factor >= 0))
		return -1;
	c->o.what_kind = c->what;
	c->o.what_glob = colon + 1;
	return 0;
}

static int on_opt(void *ctx, int key, const char *arg)
{
	struct cp_cmd *c = ctx;
	char *end;
	long long n;

	if (key == OPT_WHAT_IF)
		return what_if(c, arg);
	if (key == OPT_TRACE) {
		c->trace = arg;
		return 0;
	}
	n = strtoll(arg, &end, 10);
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

/* --trace rewrites one rank's file: the one --ranks names, or the only
 * one. */
static int trace_source(sqlite3 *db, const struct ta_query *q, int64_t *rank,
			char *path, size_t len, struct ta_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc, n = 0;

	if (q->ranks && q->nranks != 1) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace writes one rank's trace: "
			     "give one rank (--ranks N)");
		return -1;
	}
	if (ta_db_prepare(db, "SELECT rank, path FROM files ORDER BY rank", &st, err) < 0)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (!q->ranks || sqlite3_column_int64(st, 0) == q->ranks[0]) {
			*rank = sqlite3_column_int64(st, 0);
			snprintf(path, len, "%s", (const char *)sqlite3_column_text(st, 1));
			n++;
		}
	sqlite3_finalize(st);
	if (ta_db_done(db, rc, err) < 0)
		return -1;
	if (n != 1) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace writes one rank's trace: "
			     "give one rank (--ranks N)");
		return -1;
	}
	if (strcmp(path, "-") == 0) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace reads the trace again: "
			     "give a file, not standard input");
		return -1;
	}
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
	struct ta_path_nodes nodes = { 0, NULL, 0, 0 };
	char src[4096] = "";

	if (!c->top)
		o.top = 50; /* for the text's sentences */
	if (c->trace && trace_source(db, q, &nodes.rank, src, sizeof(src), err) < 0)
		return -1;
	if (c->trace)
		o.nodes = &nodes;
	if (ta_critical_run(db, q, &o, &path, &items, err) < 0) {
		free(nodes.v);
		return -1;
	}
	if (c->trace && ta_report_overlay(src, &nodes, c->trace, err) < 0) {
		free(nodes.v);
		ta_table_free(path);
		ta_table_free(items);
		return -1;
	}
	free(nodes.v);
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
	struct cp_cmd c = { { -1, 0, NULL, NULL, 1, NULL }, "", NULL, 0, NULL };
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
