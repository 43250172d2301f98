/* HTA's critical path graph of one rank (critical-path --hta-compat):
 * HTA 0.6.1's CPGraph (hta/analyzers/critical_path_analysis.py), its
 * rules and their order, so that its node and edge counts, the path
 * networkx finds through it and the path's edge weights come out the
 * same. The rules are in the man page (CRITICAL PATH, HTA). */
#ifndef TA_CPGRAPH_H
#define TA_CPGRAPH_H

#include "ta.h"

#include <sqlite3.h>

enum cp_edge_type {
	CP_OPERATOR,            /* an op's or kernel's time, or inside an op */
	CP_DEPENDENCY,          /* between top-level ops; runtime lock order */
	CP_LAUNCH_DELAY,        /* launch call start -> kernel start */
	CP_KERNEL_DELAY,        /* kernel end -> next kernel start, one stream */
	CP_SYNC,                /* kernel end -> sync call end, GPU -> GPU */
	CP_NTYPES
};

#define CP_NO_EVENT INT64_MIN

struct cp_by_idx {
	int64_t idx;
	long row;
};

struct cp_row {                 /* one of HTA's rows of the rank */
	int64_t idx, ts, dur, stream, corr, ic, wait_stream, wait_corr;
	int64_t pid, tid, name, cat;  /* name, cat: names.name_id or -1 */
	unsigned fl;            /* F_* of cpgraph.c */
	int gpu, clip;          /* §3 GPU event; in the clipped table */
	int ids;                /* pid and tid are integers */
	long start, end;        /* its nodes, -1 if none */
	long parent;            /* call stack: parent row, -1 for the root */
	long child, last_child, sib;
};

struct cp_node {
	int64_t ts;
	long row;
	int is_start;
	long out, in;           /* first edge out of and into it */
	long out_last, in_last;
	int in_graph;           /* has an edge: networkx knows it */
};

struct cp_edge {
	long u, v;
	enum cp_edge_type type;
	int64_t w;              /* ns, as HTA's CPEdge.weight */
	int64_t attr;           /* the event it is attributed to, CP_NO_EVENT */
	long next_out, next_in;
};

struct cp_graph {
	int64_t rank;
	struct cp_row *rows;    /* HTA's order */
	size_t nrows;
	struct cp_by_idx *ix;   /* rows by event index */
	struct cp_node *nodes;
	size_t nnodes;
	long *graph_nodes;      /* those with an edge, in networkx's order */
	size_t ngraph;
	struct cp_edge *edges;
	size_t nedges, cap;
	long *hash;             /* (u, v) -> edge, open addressing */
	size_t hcap;
	long *path;             /* node ids of the longest path */
	size_t npath;
	int64_t win_ts, win_end;  /* the annotation instances' window */
};

/* Builds rank's graph for annotation instances [first, last] (annotation
 * "": the whole trace) from the model's hta_trace view, and finds its
 * longest path as networkx's dag_longest_path does. Exit codes: 2 for an
 * annotation that is not there, 3 for a graph HTA would call invalid. */
int cp_graph_build(sqlite3 *db, int64_t rank, const char *annotation,
		   long first, long last, struct cp_graph *g,
		   struct ta_error *err);
void cp_graph_free(struct cp_graph *g);

/* The row of an event, -1 if the rank has no such row. */
long cp_graph_row(const struct cp_graph *g, int64_t idx);

/* Whether an event is a communication kernel (HTA's is_comm_kernel). */
int cp_is_comm(const char *name);

#endif
