/* Analyses: options in, a result table out. They read only the database. */
#ifndef TA_ANALYSES_H
#define TA_ANALYSES_H

#include <sqlite3.h>

#include "ta_model.h"
#include "ta_table.h"

/* What every analysis is asked. */
struct ta_query {
	enum ta_mode mode;       /* whose rules (ta_model.h); 0: ours */
	const int64_t *ranks;    /* NULL: every rank */
	size_t nranks;
	int window_span;         /* --window span: first to last GPU work */
	/* where a table of final rows (a row per kernel, per point) may send
	 * them as they come; NULL: keep them all */
	const struct ta_row_sink *sink;
	/* told after each unit of long work (a rank): a terminal shows it;
	 * NULL: nobody asked */
	void (*progress)(const char *what, size_t done, size_t total);
};

/* Kernel class (TA_KIND_*, ta_model.h) of a GPU activity by name and
 * category. */
int ta_classify(const char *name, const char *cat, int by_name);

int ta_temporal_run(sqlite3 *db, const struct ta_query *q,
		    struct ta_table **out, struct ta_error *err);

struct ta_kernels_opts {
	int by_type;             /* time per kernel type and overlap label */
	int top;                 /* names kept per rank and type (10) */
	double duration_ratio;   /* share of time the kept names cover (0.8) */
	int include_memory;      /* analyse MEMORY kernels too (1) */
};
extern const struct ta_kernels_opts ta_kernels_defaults;

/* kernels --sequences: the kernel sequences ops launch again and again. */
struct ta_sequences_opts {
	const char *op;          /* roots whose names hold this; NULL: every op */
	int min_len;             /* kernels a root launched at least (3) */
	int top;                 /* rows kept (5; 0: all); HTA: all */
};
extern const struct ta_sequences_opts ta_sequences_defaults;

int ta_sequences_run(sqlite3 *db, const struct ta_query *q,
		     const struct ta_sequences_opts *o, struct ta_table **out,
		     struct ta_error *err);
/* On shards: a shard's every pattern, sums in ns (pattern,count,gpu_ns,
 * cpu_ns,gap_ns); then the table ta_sequences_run gives from all of them
 * appended (parts freed). Not for --hta-compat (rank 0 alone). */
int ta_sequences_parts(sqlite3 *db, const struct ta_query *q,
		       const struct ta_sequences_opts *o, struct ta_table **out,
		       struct ta_error *err);
struct ta_table *ta_sequences_join(struct ta_table *parts,
				   const struct ta_sequences_opts *o);

int ta_kernels_run(sqlite3 *db, const struct ta_query *q,
		   const struct ta_kernels_opts *o, struct ta_table **out,
		   struct ta_error *err);
/* --by type tables of one rank each (shards), one after another: the
 * table over all of them, as one run over every rank gives it (without
 * --hta-compat). Frees t. */
struct ta_table *ta_kernels_types_join(struct ta_table *t, void *ctx);

/* kernels --by op: per rank, kernel and the CPU op that launched it
 * (kernels_op.c). */
int ta_kernels_by_op_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err);
/* overlap --by step: per rank and kept step, computation, overlapping,
 * communication alone and other time (overlap_steps.c). */
int ta_overlap_steps_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err);
int ta_overlap_run(sqlite3 *db, const struct ta_query *q,
		   struct ta_table **out, struct ta_error *err);

struct ta_idle_opts {
	int64_t kernel_wait_ns;   /* gaps shorter than this are kernel wait */
	const int64_t *streams;   /* NULL: every stream */
	size_t nstreams;
	int stats;                /* per-interval statistics instead */
};
extern const struct ta_idle_opts ta_idle_defaults;

int ta_idle_run(sqlite3 *db, const struct ta_query *q,
		const struct ta_idle_opts *o, struct ta_table **out,
		struct ta_error *err);

struct ta_launch_opts {
	int summary;              /* per-rank counts and shares instead */
	int by_op;                /* per ATen op instead (launch_ops.c) */
	int64_t runtime_cutoff_ns;      /* 50 µs */
	int64_t launch_delay_cutoff_ns; /* 100 µs */
};
extern const struct ta_launch_opts ta_launch_defaults;

int ta_launch_run(sqlite3 *db, const struct ta_query *q,
		  const struct ta_launch_opts *o, struct ta_table **out,
		  struct ta_error *err);

/* counters: CUPTI counter values per kernel, with its ops. */
int ta_counters_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		    struct ta_error *err);

/* steps: per rank, each ProfilerStep's host range, its window and
 * whether it is kept. */
int ta_steps_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		 struct ta_error *err);

/* launch --by-op: per rank, ATen op and the kernels it launched, the
 * count and the mean delays op -> first launch -> its kernel. */
int ta_launch_ops_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err);
/* --by-op tables of one rank each (shards), one after another, in the
 * order one run over every rank gives. */
struct ta_table *ta_launch_ops_join(struct ta_table *t, void *ctx);

struct ta_queue_opts {
	int series;               /* the time series instead */
	int64_t blocked_at;       /* > 0: time with the queue at or above it */
};
extern const struct ta_queue_opts ta_queue_defaults;

int ta_queue_run(sqlite3 *db, const struct ta_query *q,
		 const struct ta_queue_opts *o, struct ta_table **out,
		 struct ta_error *err);

struct ta_membw_opts {
	int series;
};
extern const struct ta_membw_opts ta_membw_defaults;

int ta_membw_run(sqlite3 *db, const struct ta_query *q,
		 const struct ta_membw_opts *o, struct ta_table **out,
		 struct ta_error *err);

struct ta_annotations_opts {
	int gpu;                  /* gpu_user_annotation ranges */
	int kernels;              /* map each kernel to its innermost GPU range */
	int top;                  /* 1000 */
	double duration_ratio;    /* 0.8 */
};
extern const struct ta_annotations_opts ta_annotations_defaults;

int ta_annotations_run(sqlite3 *db, const struct ta_query *q,
		       const struct ta_annotations_opts *o,
		       struct ta_table **out, struct ta_error *err);

enum ta_ops_sort {
	TA_OPS_SORT_SELF_DEVICE, TA_OPS_SORT_DEVICE, TA_OPS_SORT_SELF_CPU,
	TA_OPS_SORT_CPU, TA_OPS_SORT_CALLS, TA_OPS_SORT_SELF_CPU_MEM,
	TA_OPS_SORT_CPU_MEM, TA_OPS_SORT_SELF_DEVICE_MEM, TA_OPS_SORT_DEVICE_MEM
};

struct ta_ops_opts {
	enum ta_ops_sort sort;
	int top;              /* rows per rank; 0: all */
	int group_shape;      /* split by recorded input shapes */
	int stack_depth;      /* > 0: split by the innermost N Python frames */
	int kernels;          /* add one row per GPU kernel name */
	int64_t step;         /* >= 0: only ProfilerStep#step */
};
extern const struct ta_ops_opts ta_ops_defaults;

int ta_ops_run(sqlite3 *db, const struct ta_query *q, const struct ta_ops_opts *o,
	       struct ta_table **out, struct ta_error *err);

struct ta_diagnose_opts {
	double busy_pct;         /* compute-bound at or above (90) */
	int64_t host_gap_ns;     /* idle holes this long are host time (50 µs) */
	int64_t small_kernel_ns; /* "small" kernels (10 µs) */
	int path;                /* confirm each verdict with the critical path */
	int findings;            /* memory's and the roofline's findings too (1);
				  * 0: the verdicts are all the caller reads */
};
extern const struct ta_diagnose_opts ta_diagnose_defaults;

/* Two tables: the verdict per step (out) and every finding with its cost
 * (findings). */
struct ta_stragglers_opts {
	double late_pct;   /* a straggler holds the others back this % of its step (10) */
	/* the rows shown (--ranks; NULL: every rank): a rank's lateness is
	 * what the others lost, so every rank is diagnosed whatever it says */
	const int64_t *ranks;
	size_t nranks;
};
extern const struct ta_stragglers_opts ta_stragglers_defaults;

/* Per rank and step: collectives matched across ranks, how long this
 * rank waited for the last to arrive and the others for it (in its
 * collectives, and in step time lost), and whether it is the step's
 * straggler. */
int ta_stragglers_run(sqlite3 *db, const struct ta_query *q,
		      const struct ta_stragglers_opts *o, struct ta_table **out,
		      struct ta_error *err);
/* A stragglers table put together from runs on one rank each (ctx: its
 * ta_stragglers_opts): each rank's late_us from the others' waits for it,
 * the stragglers, and each late peer's own cause, as one run over every
 * rank does. */
struct ta_table *ta_stragglers_join(struct ta_table *t, void *ctx);

/* The events of one rank on its critical paths (--trace). */
struct ta_path_node {
	int64_t step, idx, ts;      /* idx: the event's place in traceEvents */
	int64_t pid, tid;
	int ids;                    /* pid and tid are integers (else unknown) */
};

struct ta_path_nodes {
	int64_t rank;               /* whose */
	struct ta_path_node *v;     /* walked from each step's end back */
	size_t n, cap;
};

struct ta_host;

struct ta_critical_opts {
	int64_t step;      /* only this ProfilerStep; -1: every kept step */
	size_t top;        /* the N items with the most path time, per step */
	/* --what-if: items of this kind ("kernel", "cpu", "launch", "sync",
	 * "gap"; NULL: none) whose name matches the glob take factor times
	 * their time: predicted_us, to first order */
	const char *what_kind, *what_glob;
	double what_factor;
	struct ta_path_nodes *nodes;  /* collect rank nodes->rank's path, or NULL */
	/* --hta-compat: HTA's path for these instances of the annotation */
	const char *annotation;
	long instance_first, instance_last;
	/* a rank's syncs loaded already (diagnose's last rank), or NULL */
	const struct ta_host *host;
};
extern const struct ta_critical_opts ta_critical_defaults;

/* What a path consists of: its table's columns (cpu_us...) without _us;
 * the first TA_PATH_PARTS add up to path_us, then on_peers (of the path,
 * the time on other ranks' work: not a part). */
extern const char *const ta_critical_parts[];
#define TA_PATH_PARTS 8
#define TA_PATH_COLS 9

/* Per rank and step, the critical path's length by what lies on it (out),
 * and the items on it with the most time (top). */
int ta_critical_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_critical_opts *o, struct ta_table **out,
		    struct ta_table **top, struct ta_error *err);

/* Matches the collectives in db's table coll (every shard's, gathered)
 * and writes the result beside it, so that each shard reads its part of
 * it instead of matching every rank's collectives again (peers.c). */
int ta_peers_save(sqlite3 *db, struct ta_error *err);

/* The critical path on shards, which hold a rank each: a path walked on
 * one shard stops where a collective waited for a late member in another
 * shard, and goes on in that shard in the next round.
 * ta_critical_pieces walks the shard's own steps (req NULL) or goes on
 * with the paths that came to its rank (req: those for other ranks are
 * passed over), giving the pieces' rows; ta_critical_exits says where the
 * pieces of one round go on (-1 if a path would come back where it has
 * been: no progress); ta_critical_join adds up the pieces of every round
 * (in order) into ta_critical_run's tables, the same rows. */
struct ta_critical_request {
	int64_t home, walk;      /* whose path: its rank, and which of its walks */
	int64_t start_job;       /* the step's start, on the job's clock */
	int64_t rank, ts;        /* where it goes on: the late member's kernel */
};

int ta_critical_pieces(sqlite3 *db, const struct ta_query *q,
		       const struct ta_critical_opts *o,
		       const struct ta_critical_request *req, size_t nreq,
		       struct ta_table **out, struct ta_error *err);
long ta_critical_exits(const struct ta_table *pieces, struct ta_intern *seen,
		       struct ta_critical_request **req);
int ta_critical_join(struct ta_table *const *rounds, size_t n,
		     const struct ta_critical_opts *o, struct ta_table **out,
		     struct ta_table **top, struct ta_error *err);

/* --hta-compat: per rank, HTA's critical path of one annotation instance
 * by what bounds it (out, HTA's summary()), and the sizes of its graph and
 * path (graph). */
int ta_critical_hta_run(sqlite3 *db, const struct ta_query *q,
			const struct ta_critical_opts *o, struct ta_table **out,
			struct ta_table **graph, struct ta_error *err);

/* diff BASE TEST: what changed between two runs, per name. */
enum ta_diff_kind { TA_DIFF_CPU = 1, TA_DIFF_GPU = 2, TA_DIFF_ALL = 3 };

struct ta_diff_side {
	const int64_t *ranks;    /* NULL: every rank (HTA: its first) */
	size_t nranks;
	int64_t step_lo, step_hi;  /* ProfilerStep#N range; -1: every kept
				    * step (HTA: its first) */
};

struct ta_diff_opts {
	struct ta_diff_side base, test;
	int by_short;            /* names without templates and arguments */
	enum ta_diff_kind kinds;
	double noise_pct;        /* a change below this % of the base ... */
	double noise_us;         /* ... or below this, per step, ... */
	double noise_step_pct;   /* ... or below this % of BASE's step */
	int lists;               /* --hta-compat: ops_diff's lists instead */
};

/* Per name: its count and time per step on each side, and the change
 * (out); per rank: the steps of each side side by side (steps). base is
 * the database of BASE, db the one of TEST. */
int ta_diff_run(sqlite3 *base, sqlite3 *db, const struct ta_query *q,
		const struct ta_diff_opts *o, struct ta_table **out,
		struct ta_table **steps, struct ta_error *err);
/* Collectives per rank, process group and name: calls, bytes, kernel
 * time, the wait for the last member and the transfer (comms.c). */
/* modules: the nn.Module tree per rank (analyses/host/modules.c) */
int ta_modules_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		   struct ta_error *err);
int ta_comms_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		 struct ta_error *err);
/* overview --tb-compat: the plugin's step-time breakdown per rank and step
 * (compat/tb/overview_tb.c). */
int ta_overview_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		       struct ta_error *err);
/* overview --tb-compat --summary: the plugin's GPU Summary per rank and
 * GPU, long form (compat/tb/gpu_metrics_tb.c). */
int ta_gpu_metrics_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			  struct ta_error *err);
/* --tb-compat: the TensorBoard plugin's Kernel view, number for number
 * (compat/tb/kernels_tb.c). */
int ta_kernels_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err);
/* ops --tb-compat: the plugin's Operator view, by name or (by_shape) by
 * name and input shape (compat/tb/ops_tb.c) */
int ta_ops_tb_run(sqlite3 *db, const struct ta_query *q, int by_shape,
		  struct ta_table **out, struct ta_error *err);
/* modules --tb-compat: its Module view, long form (compat/tb/modules_tb.c) */
int ta_modules_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		      struct ta_error *err);
/* kernels --by op --tb-compat: its Kernel view's "Kernel + Op" table */
int ta_kernels_op_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			 struct ta_error *err);
/* The error of a memory view over traces without [memory] events
 * (exit 3, the files named); returns -1. */
int ta_memory_none(sqlite3 *db, struct ta_error *err);
/* --tb-compat: the plugin's Memory view (compat/tb/memory_tb.c): its
 * statistics per device and operator (memory --by op), its curve
 * (memory --series). */
int ta_memory_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
		     struct ta_error *err);
int ta_memory_curve_tb_run(sqlite3 *db, const struct ta_query *q, struct ta_table **out,
			   struct ta_error *err);
/* --tb-compat: the plugin's Distributed view, every selected rank at once
 * (compat/tb/distributed_tb.c): its overlap chart per rank and step
 * (overlap --by step), its wait chart (comms --by step), its
 * communication ops table (comms). */
enum ta_dist_tb { TA_DIST_TB_OVERLAP, TA_DIST_TB_WAIT, TA_DIST_TB_OPS };
int ta_distributed_tb_run(sqlite3 *db, const struct ta_query *q, enum ta_dist_tb view,
			  struct ta_table **out, struct ta_error *err);
/* --hta-compat: HTA's compare_traces (its names table, or with o->lists its
 * ops_diff lists) on the first rank of each side (compat/hta/diff_hta.c). */
int ta_diff_hta_run(sqlite3 *base, sqlite3 *db, const struct ta_diff_opts *o,
		    struct ta_table **out, struct ta_error *err);

/* HTA's shorten_name: template and argument lists and the return type
 * removed; copies and memsets as they are. */
void ta_short_name(const char *name, struct ta_buf *out);

/* memory: the allocator's [memory] events (memory.c). */
enum ta_mem_by { TA_MEM_BY_OP, TA_MEM_BY_ANNOTATION, TA_MEM_BY_STACK };

struct ta_memory_opts {
	int by_site;             /* the sites table instead of the steps */
	enum ta_mem_by by;       /* what names a site */
	int series;              /* the allocated bytes over time instead */
	int64_t bucket_ns;       /* series: the highest per bucket; 0: each event */
	int leaks;               /* snapshots: allocations never freed, by site */
	int64_t bucket_events;   /* snapshots' series: the highest of each run of
				  * this many events (memory_viz's axis) */
};
extern const struct ta_memory_opts ta_memory_defaults;

/* Per rank, device and kept step: allocated bytes at start, end and peak
 * (out; or by site, or over time), and the findings: growth, peak,
 * fragmentation (findings). */
int ta_memory_run(sqlite3 *db, const struct ta_query *q,
		  const struct ta_memory_opts *o, struct ta_table **out,
		  struct ta_table **findings, struct ta_error *err);
/* The same from an allocator snapshot (snapshot_mem.c): per device the
 * baseline, peak, activations, reserved and fragmentation (out); or the
 * blocks live at the peak by site, or the allocations never freed. */
int ta_snapshot_mem_run(sqlite3 *db, const struct ta_memory_opts *o,
			struct ta_table **out, struct ta_error *err);
/* With the profiler trace of the same run (snapshot_place.c): fills the
 * summary's peak_step and peak_op from the step and CPU op running at
 * each device's peak. */
int ta_snapshot_place(sqlite3 *trace, const struct ta_query *q, struct ta_table *sum,
		      struct ta_error *err);

int ta_diagnose_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_diagnose_opts *o, struct ta_table **out,
		    struct ta_table **findings, struct ta_error *err);
/* The verdicts' second opinion: each step's row of the critical path
 * (ta_critical_run's first table, walked with these options) fills its
 * path_bound, path_pct and verdict_path_pct. */
extern const struct ta_critical_opts ta_diagnose_path_opts;
/* Diagnose run shard by shard, put together: the verdicts and findings
 * of every rank, in rank order; names each late peer's own cause, in the
 * findings (may be NULL) and the verdicts, and puts memory's findings
 * last, as one run over every rank does. */
void ta_diagnose_join(struct ta_table *verdicts, struct ta_table *findings);
void ta_diagnose_confirm(struct ta_table *verdicts, const struct ta_table *path);
/* The findings summed over the kept steps (findings_summary.c): a row per
 * rank, kind and where, keyed by them alone (a rerun of the job has the
 * same keys: a baseline's), with the steps it was found in. Frees
 * findings. */
struct ta_table *ta_findings_summary(struct ta_table *findings);
/* "wait_for_peer: rank P" in column cause_col becomes "wait_for_peer:
 * rank P (P's own cause)", from P's row of the same step in t. */
void ta_name_late_peers(struct ta_table *t, size_t rank_col, size_t step_col,
			size_t cause_col);


/* roofline (roofline.c): per op (and shape), per step (MFU) or per
 * kernel; the table's also: a summary per rank (MFU, peaks, families). */
enum ta_roof_by { TA_ROOF_BY_OP, TA_ROOF_BY_STEP, TA_ROOF_BY_KERNEL };
struct ta_roofline_opts {
	enum ta_roof_by by;
	int shapes;                      /* --group-by shape */
	double peak_tflops, peak_gbps;   /* 0: the device's */
};
extern const struct ta_roofline_opts ta_roofline_defaults;
int ta_roofline_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_roofline_opts *o, struct ta_table **out,
		    struct ta_error *err);
/* diff's ops whose efficiency changed (diff_roof.c) */
int ta_diff_roofline(sqlite3 *base, sqlite3 *db, const struct ta_query *q,
		     struct ta_table **out, struct ta_error *err);
/* diagnose's low_efficiency findings, appended to its findings table;
 * beside: how much of each rank's kernels ran beside collectives
 * (advice.h) */
struct ta_traits;
struct ta_beside;
int ta_roofline_findings(sqlite3 *db, const struct ta_query *q, struct ta_table *f,
			 const struct ta_traits *run, const struct ta_beside *beside,
			 struct ta_error *err);

/* overview: the TensorBoard plugin's step-time breakdown per rank and
 * kept step (out), with per rank the average step and the GPU summary
 * (out->also; --summary: that table alone). */
struct ta_overview_opts {
	int summary;
};
extern const struct ta_overview_opts ta_overview_defaults;
int ta_overview_run(sqlite3 *db, const struct ta_query *q,
		    const struct ta_overview_opts *o, struct ta_table **out,
		    struct ta_error *err);

#endif
