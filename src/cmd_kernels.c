/* traceanalyze kernels: GPU time per kernel, or per kernel type. */
#include "cli.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>

enum { OPT_BY = 1, OPT_TOP, OPT_RATIO, OPT_NO_MEMORY };

static const struct ta_opt opts[] = {
	{ "by", 1, OPT_BY, "WHAT", "kernel (default): per kernel name; type: per kernel type" },
	{ "top", 1, OPT_TOP, "N", "keep N names per rank and type, the rest in 'others' (10; 0: every name)" },
	{ "duration-ratio", 1, OPT_RATIO, "R", "names past this share of time go to 'others' (0.8)" },
	{ "no-memory", 0, OPT_NO_MEMORY, NULL, "leave memory copies and sets out" },
	{ NULL, 0, 0, NULL, NULL }
};

static int on_opt(void *ctx, int key, const char *arg)
{
	struct ta_kernels_opts *o = ctx;

	switch (key) {
	case OPT_BY:
		if (strcmp(arg, "type") && strcmp(arg, "kernel"))
			return -1;
		o->by_type = strcmp(arg, "type") == 0;
		return 0;
	case OPT_TOP: {
		long n;

		if (ta_cli_parse_count(arg, 100000000, &n) < 0)
			return -1;
		o->top = (int)n;
		return 0;
	}
	case OPT_RATIO:
		return ta_cli_parse_real(arg, 0, 1, &o->duration_ratio);
	case OPT_NO_MEMORY:
		o->include_memory = 0;
		return 0;
	}
	return -1;
}

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_kernels_run(db, q, ctx, out, err);
}

int cmd_kernels(int argc, char **argv)
{
	struct ta_kernels_opts o = { 0, 10, 0.8, 1 };
	const struct ta_cmd_info info = {
		"kernels", "[options] PATH",
		"GPU kernel breakdown per kernel name (per rank and type COMPUTATION,\n"
		"COMMUNICATION, MEMORY). With --by type, over all selected ranks, with "
		"overlaps\nas their own labels (\"COMPUTATION overlapping "
		"COMMUNICATION\").",
		opts, on_opt, &o, NULL,
		run
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0)
		rc = ta_cli_run(&cli, run, &o);
	else
		rc = rc > 0 ? 0 : 2;
	ta_cli_free(&cli);
	return rc;
}
