/* The TensorBoard plugin's operator tree (event_parser.py's
 * NodeParserMixin, op_tree.py, node.py; kineto 790be856), for the
 * operator and kernel views of --tb-compat: one rank's operators and
 * kernels as the plugin's ModuleAggregator lists them, in its order. */
#ifndef TB_OPTREE_H
#define TB_OPTREE_H

#include <sqlite3.h>
#include <stdint.h>

#include "ta.h"
#include "ta_analyses.h"

/* An operator node (node.py's is_operator_node), times in µs. */
struct tb_op {
	const char *name, *shape;       /* shape: str(Input Dims), "[]" if none */
	double dur, device, self_host, self_device, tc_self, tc_total;
	int tc_eligible;
};

/* A kernel the trees reach, with the operator that launched it. */
struct tb_kernel {
	const char *name, *op;          /* op: "CallTreeRoot" for stale ones */
	const char *grid, *block;       /* as written; NULL: Python's None */
	int64_t regs, smem;             /* 0 when absent, as "x or '0'" */
	int64_t device;                 /* args.device, if has_device */
	int has_device;
	double dur, bpsm, occ;          /* bpsm, occ: 0 when absent */
	int tc_used, op_tc_eligible;
};

struct tb_forest {
	struct tb_op *ops;
	size_t nops;
	struct tb_kernel *kernels;
	size_t nkernels;
	int has_kernel;      /* a kernel not a collective's (has_kernel) */
	int show_gpu;        /* that, or a copy or set */
	int has_bpsm, has_occ;   /* gpu_metrics_parser's two column flags */
	int modules;         /* nn.Module nodes */
	int regrouped;       /* backward ops regrouped under modules */
	/* tensor_cores_parser.py, over the operators' own calls: per GPU
	 * (args.device), tensor-core and all kernel time, in walk order;
	 * the self kernel time of the bottom-most eligible nodes and of all
	 * operators (the recommendation's ratio) */
	struct tb_gpu_tc { int64_t device; double tc, total; } *gpu_tc;
	size_t ngpu_tc;
	int ops_have_kernel;
	double bottom_eligible_us, ops_kernel_us;
	/* module_op.py's _aggregate_modules: the nn.Module nodes the trees
	 * reach through steps, modules and operators, by name and module id */
	struct tb_module_stats {
		const char *name;
		int64_t module_id, occurrences, operators;
		double host, self_host, device, self_device;
	} *mods;
	size_t nmods;
	/* memory_parser.py (tb_forest_build_memory): per device ("CPU",
	 * "GPU0"; sorted) and operator name (sorted), the six metrics
	 * (self increase, self allocation size and count, then the same with
	 * the children's) and the calls; has_memory: any [memory] record */
	struct tb_mem_op {
		char dev[32];
		const char *name;
		int64_t v[6], calls;
	} *mem;
	size_t nmem;
	int has_memory;
	int mem_saturated;   /* a sum stopped at INT64_MAX/MIN */
	struct tb_strings *strings;
};

/* Builds rank's trees from the model's trace_x (ta_model_prepare done). */
int tb_forest_build(sqlite3 *db, int64_t rank, struct tb_forest *f, struct ta_error *err);
/* The same, and the Memory view's statistics (f->mem). */
int tb_forest_build_memory(sqlite3 *db, int64_t rank, struct tb_forest *f,
			   struct ta_error *err);
void tb_forest_free(struct tb_forest *f);

/* One rank's rows of a --tb-compat view, into t. */
typedef int (*tb_rank_fn)(sqlite3 *db, struct ta_table *t, int64_t rank, void *ctx,
			  struct ta_error *err);
/* The model prepared, fn for each selected rank in order; t is the
 * result (*out), or freed on an error. */
int tb_each_rank(sqlite3 *db, const struct ta_query *q, struct ta_table *t, tb_rank_fn fn,
		 void *ctx, struct ta_table **out, struct ta_error *err);

/* Python's round(x, 2): the exact value rounded, half to even. */
double tb_round2(double x);
/* tensor_core.py's TC_Allowlist and TC_OP_Allowlist. */
int tb_tc_kernel(const char *name);
int tb_tc_op(const char *name);

#endif
