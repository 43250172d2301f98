/* optree_tb.c's parts, shared with backward_tb.c (the plugin's backward
 * regrouping): the events of one rank as devices, runtime calls and
 * nodes, by index. */
#ifndef TB_OPTREE_INT_H
#define TB_OPTREE_INT_H

#include "optree_tb.h"
#include "tb_map.h"

#include <stddef.h>
#include <stdint.h>

enum type { T_NONE, T_OPERATOR, T_RUNTIME, T_KERNEL, T_MEMCPY, T_MEMSET, T_PYTHON,
	    T_PYFUNC, T_MODULE, T_UA, T_STEP };
enum kind { K_OPERATOR, K_STEP, K_MODULE, K_DATALOADER, K_OPTIMIZER, K_ROOT, K_BACKWARD };

/* A growable list of indexes. */
struct idx { size_t *v, n, cap; };

void tb_push(struct idx *l, size_t i);

struct dev {
	double ts, end;
	size_t pos;          /* event order */
	int64_t ext;
	int kernel;
	struct tb_kernel k;  /* k.op set by the runtime's fill_stats */
	int bpsm_set, occ_set;
};

struct rt {
	double ts, end;
	int timed;           /* the dummy has no times */
	size_t pos;
	struct idx devs;
	double dev_dur, tc_dur;
};

struct node {
	enum kind kind;
	enum type type;
	const char *name, *shape;
	double ts, end;
	int64_t ts_ns;       /* the start exactly: the flows' key */
	int64_t module_id;   /* nn.Module nodes: "Python module id" */
	size_t pos;
	int64_t ext;         /* TB_KEY_NONE: absent */
	struct idx kids, rts;
	double device, self_host, self_device, tc_self, tc_total;
	int tc_eligible;
};

struct state {
	struct dev *d;
	size_t nd, dcap;
	struct rt *r;
	size_t nr, rcap;
	struct node *o;
	size_t no, ocap;
	struct ta_intern *strings;
	struct ta_intern *keys;   /* External ids that are not integers */
	/* threads in order of their first node: id, nodes, ext-0 calls */
	int64_t *tids;
	struct idx *tid_nodes, *tid_zero;
	size_t ntid, tcap;
	struct tb_map tid_at;
};

/* A fwdbwd flow: the forward op's start, the backward op's (ns). */
struct tb_flow { int64_t fwd, bwd; };

/* op_tree.py's build_tree after _build_tree: where the rank has nn.Module
 * nodes and flows, the backward ops leave their parents and hang under
 * "MODULE.backward" nodes in the main thread's tree (backward_tb.c).
 * roots: a root per thread, in order; main_root: the last thread with a
 * ProfilerStep's, or -1. Returns whether the trees changed. */
int tb_regroup_backward(struct state *s, const struct idx *roots, long main_root,
			const struct tb_flow *flows, size_t nflows);


/* A [memory] record (trace.py's MemoryEvent), µs. */
struct tb_mem_rec {
	int64_t tid;         /* tid_key's key */
	double ts;
	char dev[32];        /* MemoryRecord.device_name; "": none */
	int64_t bytes;       /* "Bytes", 0 when absent */
};

/* device_name from a row's "Device Type" (column type_col) and "Device
 * Id" (id_col), into b: "CPU", "GPU<id>" as Python formats the id; 0 when
 * the type is not DeviceType's CPU (0) or CUDA (1): no device. */
int tb_mem_dev(sqlite3_stmt *st, int type_col, int id_col, char *b, size_t n);

/* memory_parser.py's find_memory_nodes and get_memory_statistics over the
 * built trees (roots: one per thread, as s->tids; childless roots are no
 * tree when dropped): f->mem (memory_tb.c). */
void tb_memory_stats(struct state *s, const struct idx *roots, int dropped,
		     const struct tb_mem_rec *r, size_t n, struct tb_forest *f);

typedef int (*tb_cmp)(const void *, const void *, void *);
/* (start, -end), then event order: Python's stable sort */
int tb_dev_order(const void *x, const void *y, void *ctx);
int tb_node_order(const void *x, const void *y, void *ctx);
/* runtime calls: (start, -end), the dummy (no times) last */
int tb_rt_order(const void *x, const void *y, void *ctx);
void tb_sort_idx(struct state *s, struct idx *l, tb_cmp cmp);
size_t tb_new_node(struct state *s);
/* node.py's is_operator_node */
int tb_is_operator(const struct node *n);

#endif
