/* traceanalyze idle: idle time per rank and stream, by cause. */
#include "cli.h"
#include "ta_people.h"
#include "commands.h"

#include <stdlib.h>
#include <string.h>

struct idle_ctx {
	struct ta_idle_opts o;
	int64_t *streams;
};

enum { OPT_STREAMS = 1 };

static int on_opt(void *ctx, int key, const char *arg)
{
	struct idle_ctx *c = ctx;

	if (key != OPT_STREAMS)
		return -1;
	free(c->streams);
	if (ta_cli_parse_ranks(arg, &c->streams, &c->o.nstreams) < 0)
		return -1;
	c->o.streams = c->streams;
	return 0;
}

#define O struct idle_ctx
static const struct ta_opt opts[] = {
	TA_CALL("streams", "LIST", OPT_STREAMS, "only these streams, e.g. 7,13"),
	TA_US("kernel-wait-us", "N", O, o.kernel_wait_ns, 0, "a gap shorter than N µs is kernel wait (30)"),
	TA_FLAG("stats", O, o.stats, "per-interval statistics instead of totals"),
	TA_OPT_END
};
#undef O

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	return ta_idle_run(db, q, &((struct idle_ctx *)ctx)->o, out, err);
}

static void present(struct ta_table *t, void *ctx)
{
	(void)ctx;
	ta_people_idle(t);
}

static int cmd_idle(int argc, char **argv)
{
	struct idle_ctx c = { ta_idle_defaults, NULL };
	const struct ta_cmd_info info = {
		"idle", "[options] PATH",
		"Idle time per rank and stream, by cause: host_wait (the kernel was "
		"launched\nonly after its stream had drained), kernel_wait (a gap "
		"shorter than\n--kernel-wait-us between kernels) or other; rows with "
		"an empty stream: the\nwhole GPU (no stream busy), which add up to "
		"temporal's idle_us; --stats:\nstatistics of the intervals.",
		opts, on_opt, &c, present,
		run, { NULL }
	};
	struct ta_cli cli;
	int rc = ta_cli_parse(argc, argv, &info, &cli);

	if (rc == 0)
		rc = ta_cli_run(&cli, run, &c);
	else
		rc = rc > 0 ? 0 : 2;
	free(c.streams);
	ta_cli_free(&cli);
	return rc;
}

const struct ta_command ta_command_idle = {
	"idle", cmd_idle, "idle time per stream: host wait, kernel wait, other",
	TA_SPREAD_PER_RANK, NULL, 1, { [TA_MODE_HTA] = TA_COMPAT_RULES }, NULL
};
