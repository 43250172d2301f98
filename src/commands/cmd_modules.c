/* traceanalyze modules: the nn.Module tree, ours (analyses/host/modules.c)
 * or, with --tb-compat, the plugin's Module view (compat/tb/modules_tb.c). */
#include "ta_command.h"
#include "ta_analyses.h"

static int run(sqlite3 *db, const struct ta_query *q, void *ctx,
	       struct ta_table **out, struct ta_error *err)
{
	(void)ctx;
	return q->mode == TA_MODE_TB ? ta_modules_tb_run(db, q, out, err) :
	       ta_modules_run(db, q, out, err);
}

static const struct ta_cmd_info info = {
	"modules", "[options] PATH",
	"The nn.Module tree (profiled with with_stack=True): per rank and\n"
	"module path, over the kept steps, calls, host time (self: less the child\n"
	"modules), device time of the launches inside (self: not inside a child\n"
	"module), and the backward ops the fwdbwd flows lead to from the module's\n"
	"forward ops: their host time and device time. --tb-compat: the\n"
	"TensorBoard plugin's Module view.",
	NULL, NULL, NULL, NULL,
	run, { NULL }
};

const struct ta_command ta_command_modules = {
	"modules", NULL, "the nn.Module tree: forward and backward time per module",
	TA_SPREAD_PER_RANK, NULL, 1,
	{ [TA_MODE_HTA] = TA_COMPAT_REFUSED, [TA_MODE_TB] = TA_COMPAT_OWN }, &info
};
