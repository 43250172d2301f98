/* traceanalyze critical-path: what each step was really waiting on. */
#include "cli.h"
#include "commands.h"
#include "ta_db.h"
#include "ta_files.h"
#include "ta_people.h"
#include "ta_report.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cp_cmd {
	struct ta_critical_opts o;
	char what[512];          /* --what-if, split in place */
	const char *trace;       /* --trace OUT */
	int top;                 /* --top given: the items table instead */
	int graph;               /* --graph */
	struct ta_table *items;  /* text: the first item of each step, for prose */
	struct ta_shard_critical sc;       /* on shards: the walks, the rounds */
	int verbose;                       /* -v: say how many rounds */
	int trace_over_input;              /* --trace OUT names an input */
	int trace_and_table_on_stdout;     /* --trace - without -o FILE */
};

/* "kernel:*gemm*=0.5": kind, glob, factor. */
static int what_if(struct cp_cmd *c, const char *arg)
{
	static const char *const kinds[] = { "kernel", "cpu", "launch", "sync",
		"gap", NULL };
	char *colon, *eq, *end;
	size_t i;

	if (strlen(arg) >= sizeof(c->what))
		return -1; /* cut short, its factor would change */
	snprintf(c->what, sizeof(c->what), "%s", arg);
	colon = strchr(c->what, ':');
	eq = strrchr(c->what, '=');
	if (!colon || !eq || eq < colon)
		return -1;
	*colon = *eq = '\0';
	/* one KIND:GLOB=F: 'cpu:a=0,b=0' is not two (its glob was "a=0,b") */
	if (strchr(colon + 1, '='))
		return -1;
	for (i = 0; kinds[i] && strcmp(kinds[i], c->what) != 0; i++)
		;
	c->o.what_factor = ta_strtod(eq + 1, &end);
	if (!kinds[i] || *end || end == eq + 1 || !(c->o.what_factor >= 0) ||
	    !isfinite(c->o.what_factor) || c->o.what_factor > 1e6)
		return -1;
	c->o.what_kind = c->what;
	c->o.what_glob = colon + 1;
	return 0;
}

enum { OPT_TOP = 1, OPT_WHAT_IF, OPT_INSTANCE };

static int on_opt(void *ctx, int key, const char *arg)
{
	struct cp_cmd *c = ctx;
	char *end;
	long n;

	switch (key) {
	case OPT_WHAT_IF:
		return what_if(c, arg);
	case OPT_INSTANCE:
		if (!isdigit((unsigned char)arg[0]))   /* no sign, no space */
			return -1;
		errno = 0;
		c->o.instance_first = strtol(arg, &end, 10);
		c->o.instance_last = c->o.instance_first;
		if (end != arg && *end == '-' && isdigit((unsigned char)end[1]))
			c->o.instance_last = strtol(arg = end + 1, &end, 10);
		return *end || end == arg || errno == ERANGE || c->o.instance_first < 0 ||
		       c->o.instance_last < c->o.instance_first ? -1 : 0;
	case OPT_TOP:
		if (ta_cli_parse_count(arg, LONG_MAX, &n) < 0)
			return -1;
		c->o.top = (size_t)n;
		c->top = 1;
		return 0;
	}
	return -1;
}

#define O struct cp_cmd
static const struct ta_opt opts[] = {
	TA_COUNT("step", "N", O, o.step, 0, 9e18, "only ProfilerStep#N (default: every kept step)"),
	TA_CALL("top", "N", OPT_TOP, "the N ops, kernels and ranges with the most path time, per step: rank,step,kind,name,path_us,count"),
	TA_STRING("trace", "OUT", O, trace, "write the rank's trace again with the path marked (args.critical, flows), for Perfetto; .gz: gzipped"),
	TA_CALL("what-if", "KIND:GLOB=F", OPT_WHAT_IF, "predicted_us if the matching items took F times as long, e.g. 'kernel:*gemm*=0.5', 'cpu:data_loading=0'"),
	TA_STRING("annotation", "TEXT", O, o.annotation, "with --hta-compat: the instances of the annotations whose names hold TEXT (default ProfilerStep; \"\": the whole trace)"),
	TA_CALL("instance", "K[-L]", OPT_INSTANCE, "with --hta-compat: the Kth (to Lth) of them, from 0 (default 0)"),
	TA_FLAG("graph", O, graph, "with --hta-compat: the graph's and the path's sizes by edge type instead: rank,item,in_graph,on_path,path_us"),
	TA_OPT_END
};
#undef O

/* --trace rewrites one rank's file: the one --ranks names, or the only
 * one. */
static int trace_source(sqlite3 *db, const struct ta_query *q, const char *out,
			int64_t *rank, char *path, size_t len, struct ta_error *err)
{
	struct stat os;
	int out_exists = strcmp(out, "-") != 0 && stat(out, &os) == 0;
	struct ta_input_file *v;
	int64_t bytes = -1, mtime_ns = -1;
	struct stat sb;
	size_t nv, i;
	int rc, n = 0, fd;

	if (q->ranks && q->nranks != 1) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace writes one rank's trace: "
			     "give one rank (--ranks N)");
		return -1;
	}
	if (ta_model_inputs(db, &v, &nv, err) < 0)
		return -1;
	for (i = 0; i < nv; i++) {
		struct stat is;

		/* every rank's trace the database was made from is an input */
		if (out_exists && v[i].path && stat(v[i].path, &is) == 0 &&
		    ta_same_file(&is, &os)) {
			ta_error_set(err, TA_EXIT_USAGE, "'%s' is the trace of rank %lld this "
				     "database was made from; refusing to write over it", out,
				     (long long)v[i].rank);
			ta_model_inputs_free(v, nv);
			return -1;
		}
		if (!q->ranks || v[i].rank == q->ranks[0]) {
			*rank = v[i].rank;
			snprintf(path, len, "%s", v[i].path ? v[i].path : "");
			bytes = v[i].bytes;
			mtime_ns = v[i].mtime_ns;
			n++;
		}
	}
	ta_model_inputs_free(v, nv);
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
	/* the path as ingest was given it: from elsewhere, or after the
	 * file changed, it may name another trace; a FIFO would wait */
	if ((fd = ta_open_read(path, "--trace reads the trace again: ", err)) < 0)
		return -1;
	rc = fstat(fd, &sb);
	close(fd);
	if (rc < 0 || (int64_t)sb.st_size != bytes ||
	    (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec != mtime_ns) {
		ta_error_set(err, TA_EXIT_INPUT, "'%s': not the trace the database was made "
			     "from (its size or modification time differ); ingest it again, "
			     "or give the trace itself", path);
		return -1;
	}
	return 0;
}

/* The table asked for: the items with --top; else the path, with the
 * items kept for the text's sentences. */
static struct ta_table *give(struct cp_cmd *c, struct ta_table *path,
			     struct ta_table *items)
{
	return ta_cli_pick(path, items, c->top, &c->items);
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct cp_cmd *c = ctx;
	struct ta_critical_opts o = c->o;
	struct ta_table *path, *items;

	struct ta_path_nodes nodes = { 0, NULL, 0, 0 };
	char src[4096] = "";

	if (!c->top)
		o.top = 50; /* for the text's sentences */
	if (c->trace_and_table_on_stdout) {
		ta_error_set(err, TA_EXIT_USAGE, "--trace - writes the trace to "
			     "standard output: give the table a file (-o FILE)");
		return -1;
	}
	if (c->trace_over_input) {
		ta_error_set(err, TA_EXIT_USAGE, "'%s' is an input; refusing to "
			     "write over it", c->trace);
		return -1;
	}
	if (c->trace && trace_source(db, q, c->trace, &nodes.rank, src, sizeof(src), err) < 0)
		return -1;
	if (c->trace)
		o.nodes = &nodes;
	if ((q->mode == TA_MODE_HTA ? ta_critical_hta_run : ta_critical_run)(db, q, &o,
			&path, &items, err) < 0) {
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
	if (q->mode == TA_MODE_HTA) {
		ta_table_free(c->items);
		c->items = NULL;
		if (c->graph) {
			ta_table_free(path);
			*out = items;
		} else {
			ta_people_critical_hta(path, items);
			ta_table_free(items);
			*out = path;
		}
	} else
		*out = give(c, path, items);
	return 0;
}

/* On shards (ta_shard_run, shard_critical.c): each shard walks its own
 * steps, then the paths that cross into other ranks go on there, round
 * after round. */
static int pieces(sqlite3 *db, const struct ta_query *q, void *ctx,
		  struct ta_table **out, struct ta_error *err)
{
	struct cp_cmd *c = ctx;

	return ta_shard_critical_pieces(db, q, &c->sc, out, err);
}

static struct ta_table *rounds(struct ta_shards *sh, struct ta_table *first,
			       void *ctx)
{
	struct cp_cmd *c = ctx;
	struct ta_table *path, *items;

	if (!ta_shards_critical_rounds(sh, first, &c->sc, &path, &items))
		return NULL;
	/* --step N that no shard kept: the merged way names the kept ones */
	if (c->o.step >= 0 && path->nrows == 0) {
		ta_table_free(path);
		ta_table_free(items);
		return NULL;
	}
	if (c->verbose)
		ta_note("critical path: %zu rounds over the shards", c->sc.rounds);
	return give(c, path, items);
}

/* Every shard's collectives first (a path follows late members), then
 * the pieces, then the rounds after. */
static const struct ta_shard_rule on_shards = { 1, 0, NULL, pieces, rounds };

static void present(struct ta_table *t, void *ctx)
{
	struct cp_cmd *c = ctx;

	if (!c->top && c->items && !c->graph)
		ta_people_critical(t, c->items);
}

static void after_parse(void *ctx, struct ta_cli *cli)
{
	struct cp_cmd *c = ctx;

	cli->ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
	c->verbose = cli->ingest.verbose;
	/* any trace, shard or database read is an input, not only the rank's
	 * trace --trace rewrites */
	c->trace_over_input = c->trace && ta_cli_is_input(cli, c->trace);
	/* one standard output cannot carry the trace and the table */
	c->trace_and_table_on_stdout = c->trace && strcmp(c->trace, "-") == 0 &&
		(!cli->output || strcmp(cli->output, "-") == 0);
	c->sc.o = c->o;
	if (!c->top)
		c->sc.o.top = 50;  /* for the text's sentences, as run() */
	/* --trace rewrites one file, --hta-compat draws HTA's graph of one
	 * rank: the merged way */
	if (!c->trace)
		cli->shard_rule = &on_shards;
}

static int cmd_critical(int argc, char **argv)
{
	struct cp_cmd c = { ta_critical_defaults, "", NULL, 0, 0, NULL,
			    { { 0 }, NULL, 0, 0 }, 0, 0, 0 };
	const struct ta_cmd_info info = {
		"critical-path", "[options] PATH",
		"Per rank and step, the critical path: the chain of work the step's "
		"end waited\nfor, walked back along the dependency satisfied last "
		"(kernels on a stream,\nlaunches, cross-stream waits, host syncs, "
		"collectives' last members), and\nwhat it consists of: "
		"rank,step,path_us,cpu_us,launch_us,kernel_compute_us,\n"
		"kernel_comm_us,kernel_memory_us,gap_us,sync_us,peer_wait_us (the parts),\n"
		"on_peers_us (of the path, the time on other ranks' work).\n"
		"With --hta-compat, HTA's critical path of one annotation instance "
		"per rank,\nby what bounds it (HTA's summary()): "
		"rank,bound_by,path_us,path_pct.",
		opts, on_opt, &c, present,
		run, { [TA_MODE_OWN] = "step top what-if",
		       [TA_MODE_HTA] = "annotation instance graph" }
	};
	int rc = ta_cli_main(argc, argv, &info, run, &c, after_parse);

	ta_table_free(c.items);
	return rc;
}

const struct ta_command ta_command_critical = {
	"critical-path", cmd_critical, "per step: the chain of work the step waited on, and what it is",
	TA_SPREAD_BY_OPTIONS, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_OWN }, NULL
};
