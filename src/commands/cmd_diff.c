/* traceanalyze diff BASE TEST: what changed between two runs. */
#include "cli.h"
#include "commands.h"
#include "ta_people.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diff_cmd {
	struct ta_diff_opts o;
	int64_t *base_ranks, *test_ranks;
	int steps;               /* --steps */
	sqlite3 *base;           /* BASE's database */
	struct ta_table *side;   /* text: the steps table, for the summary */
	char **gates;            /* --max-increase as gates */
	size_t ngates;
};

static int parse_steps(const char *arg, struct ta_diff_side *s)
{
	char *end;

	if (!isdigit((unsigned char)arg[0]))  /* no sign, no space */
		return -1;
	errno = 0;
	s->step_lo = strtoll(arg, &end, 10);
	s->step_hi = s->step_lo;
	if (end != arg && *end == '-' && isdigit((unsigned char)end[1]))
		s->step_hi = strtoll(arg = end + 1, &end, 10);
	return *end || end == arg || errno == ERANGE || s->step_lo < 0 ||
	       s->step_hi < s->step_lo ? -1 : 0;
}

enum { OPT_KIND = 1, OPT_BASE_RANKS, OPT_TEST_RANKS, OPT_BASE_STEPS,
       OPT_TEST_STEPS };

static int on_opt(void *ctx, int key, const char *arg)
{
	struct diff_cmd *c = ctx;
	struct ta_diff_opts *o = &c->o;

	switch (key) {
	case OPT_KIND:
		o->kinds = strcmp(arg, "cpu") == 0 ? TA_DIFF_CPU :
			   strcmp(arg, "gpu") == 0 ? TA_DIFF_GPU :
			   strcmp(arg, "all") == 0 ? TA_DIFF_ALL : 0;
		return o->kinds ? 0 : -1;
	case OPT_BASE_RANKS:
		free(c->base_ranks);
		c->base_ranks = NULL;
		return ta_cli_parse_ranks(arg, &c->base_ranks, &o->base.nranks);
	case OPT_TEST_RANKS:
		free(c->test_ranks);
		c->test_ranks = NULL;
		return ta_cli_parse_ranks(arg, &c->test_ranks, &o->test.nranks);
	case OPT_BASE_STEPS:
		return parse_steps(arg, &o->base);
	case OPT_TEST_STEPS:
		return parse_steps(arg, &o->test);
	}
	return -1;
}

#define O struct diff_cmd
static const struct ta_opt opts[] = {
	TA_CHOICE("by", "name|short", O, o.by_short, "name|short", "names as written, or without templates and arguments (HTA's short names)"),
	TA_CALL("kind", "cpu|gpu|all", OPT_KIND, "CPU ops, ranges and Python frames; GPU work; or both (all)"),
	TA_CALL("base-ranks", "LIST", OPT_BASE_RANKS, "BASE's ranks (default --ranks, or every rank)"),
	TA_CALL("test-ranks", "LIST", OPT_TEST_RANKS, "TEST's ranks (default --ranks, or every rank)"),
	TA_CALL("base-steps", "N[-M]", OPT_BASE_STEPS, "BASE's ProfilerStep#N to #M (default every kept step)"),
	TA_CALL("test-steps", "N[-M]", OPT_TEST_STEPS, "TEST's steps (default every kept step)"),
	TA_FLAG("steps", O, steps, "per rank, the steps side by side instead: rank,base_steps,test_steps,base_step_us,test_step_us,diff_step_us,diff_step_pct,base_busy_pct,test_busy_pct,base_idle_us,test_idle_us,base_verdict,test_verdict,base_host_wait_pct,test_host_wait_pct"),
	TA_FLAG("lists", O, o.lists, "with --hta-compat: HTA's ops_diff lists instead: change,name"),
	TA_REAL("noise-pct", "P", O, o.noise_pct, 0, 1e9, "a change in a name's time is noise below P% of its time in BASE (10)"),
	TA_REAL("noise-step-pct", "P", O, o.noise_step_pct, 0, 1e9, "... or below P% of BASE's step (10)"),
	TA_REAL("noise-us", "US", O, o.noise_us, 0, 1e15, "... or below US a step (100)"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	struct diff_cmd *c = ctx;
	struct ta_diff_opts o = c->o;
	struct ta_table *names, *steps;

	/* --ranks for a side not named on its own; HTA: the first rank */
	o.base.ranks = c->base_ranks ? c->base_ranks : q->ranks;
	o.test.ranks = c->test_ranks ? c->test_ranks : q->ranks;
	if (!c->base_ranks)
		o.base.nranks = q->nranks;
	if (!c->test_ranks)
		o.test.nranks = q->nranks;
	if (q->mode == TA_MODE_HTA) /* HTA's own algorithm: its names table only */
		return ta_diff_hta_run(c->base ? c->base : db, db, &o, out, err);
	if (ta_diff_run(c->base ? c->base : db, db, q, &o, &names, &steps, err) < 0)
		return -1;
	ta_table_free(c->side);
	c->side = NULL;
	if (c->steps) {
		ta_table_free(names);
		*out = steps;
	} else {
		*out = names;
		c->side = steps;
	}
	return 0;
}

static void present(struct ta_table *t, void *ctx)
{
	struct diff_cmd *c = ctx;

	if (c->side)
		ta_people_diff(t, c->side);
}

/* --max-increase COL=LIMIT[%][,min=M] on diff's own columns: TEST against
 * BASE, no --baseline file: diff_COL (or its _pct) as a --fail-if gate. */
static int increases_as_gates(struct diff_cmd *c, struct ta_cli *cli)
{
	size_t i;

	for (i = 0; i < cli->nincreases; i++) {
		const struct ta_increase *inc = &cli->increases[i];
		char stem[64], expr[256];
		size_t len = strlen(inc->column);

		snprintf(stem, sizeof(stem), "%s", inc->column);
		if (len > 3 && strcmp(inc->column + len - 3, "_us") == 0)
			stem[len - 3] = '\0';
		else if (strcmp(inc->column, "us") == 0)
			stem[0] = '\0';
		if (inc->relative)
			snprintf(expr, sizeof(expr), "diff%s%s_pct > %.17g", *stem ? "_" : "",
				 stem, inc->limit);
		else
			snprintf(expr, sizeof(expr), "diff_%s > %.17g", inc->column,
				 inc->limit);
		if (inc->min > 0)
			snprintf(expr + strlen(expr), sizeof(expr) - strlen(expr),
				 " && diff_%s >= %.17g", inc->column, inc->min);
		c->gates = ta_xrealloc(c->gates, (c->ngates + 1) * sizeof(*c->gates));
		c->gates[c->ngates++] = ta_xstrdup(expr);
		cli->gates = ta_xrealloc(cli->gates, (cli->ngates + 1) * sizeof(*cli->gates));
		cli->gates[cli->ngates++] = c->gates[c->ngates - 1];
	}
	cli->nincreases = 0;
	return 0;
}

static int cmd_diff(int argc, char **argv)
{
	struct diff_cmd c;
	struct ta_cli cli;
	struct ta_error err = { 0, "", 0 };
	const struct ta_cmd_info info = {
		"diff", "[options] BASE TEST",
		"What changed between two runs (each a directory, file or database): "
		"per name\n(CPU op, record_function range, Python frame, GPU kernel), "
		"its count and time\nper step on each side and the change, by its "
		"size: kind,name,base_count,\ntest_count,base_us,test_us,diff_count,"
		"diff_us,diff_pct,change,flag. Text\nleads with each rank's steps side "
		"by side and the changes beyond noise.",
		opts, on_opt, &c, present,
		run, { [TA_MODE_OWN] = "steps", [TA_MODE_HTA] = "lists" }
	};
	size_t i;
	int rc;

	memset(&c, 0, sizeof(c));
	c.o.base.step_lo = c.o.test.step_lo = -1;
	c.o.kinds = TA_DIFF_ALL;
	c.o.noise_pct = 10;
	c.o.noise_us = 100;
	c.o.noise_step_pct = 10;
	rc = ta_cli_parse(argc, argv, &info, &cli);
	if (rc != 0) {
		rc = rc > 0 ? TA_EXIT_OK : TA_EXIT_USAGE;
		goto out;
	}
	c.o.base.ranks = c.base_ranks;
	c.o.test.ranks = c.test_ranks;
	cli.ingest.lazy_indexes |= ta_model_lazy_indexes(TA_NEED_HOST);
	if (!cli.columns) {
		if (cli.nargs != 2) {
			fprintf(stderr, "traceanalyze: diff: expected BASE and TEST, "
				"got %d path%s\n", cli.nargs, cli.nargs == 1 ? "" : "s");
			rc = TA_EXIT_USAGE;
			goto out;
		}
		if (ta_input_open(cli.args[0], &cli.ingest, &c.base, &err) < 0) {
			rc = ta_cli_error(&err);
			goto out;
		}
		ta_cli_add_input(&cli, cli.args[0]); /* still an input */
		cli.args++;
		cli.nargs--;
	}
	increases_as_gates(&c, &cli);
	rc = ta_cli_run(&cli, run, &c);
out:
	sqlite3_close(c.base);
	ta_table_free(c.side);
	for (i = 0; i < c.ngates; i++)
		free(c.gates[i]);
	free(c.gates);
	free(c.base_ranks);
	free(c.test_ranks);
	ta_cli_free(&cli);
	return rc;
}

const struct ta_command ta_command_diff = {
	"diff", cmd_diff, "two runs: what changed, per name and per step",
	TA_SPREAD_MERGED, NULL, 2, { [TA_MODE_HTA] = TA_COMPAT_OWN }, NULL
};
