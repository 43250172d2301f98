/* The model of a trace: what every analysis reads, built once per run in
 * one place. Analyses never read the tables the parser writes (events) or
 * HTA's rows (hrows); they read these TEMP tables and views of their
 * connection, each with its default rules and its HTA (--hta-compat)
 * rules, both here only (src/model/). Times are ns.
 *
 *   sel_ranks (rank)                  the ranks asked for
 *   dev (rank, idx, name, ts, dur,    GPU work in each rank's analysis
 *     stream, correlation, gbps,      window (HTA: its rows and step
 *     kind, idle_kernel, launch_ts,   filter); kind: TA_KIND_*; launch_ts:
 *     ord, pid, tid)                  the launching call's start, or NULL
 *   dev_win (as dev, sort_ts)         dev clipped to each rank's span: what
 *                                     per-rank breakdowns measure (HTA: dev);
 *                                     ORDER BY sort_ts: ts's order, no sort
 *   win (rank, last_start)            default: where a rank's window ends
 *   step_win (rank, step, ts,         each kept step's window (window.c)
 *     end_ts)
 *   span (rank, ts, end_ts)           each rank's analysis window: its
 *                                     steps' windows, else first to last
 *                                     GPU work
 *   gpu (rank, idx, name, cat, ts,    every GPU activity of the selected
 *     dur, stream, correlation,       ranks, no window (dur >= 0);
 *     pid, tid, blocks_per_sm,        Kineto's blocks per SM and est.
 *     occupancy, shared_mem)          achieved occupancy % of kernels
 *   steps (rank, step, name, ts,      each rank's ProfilerStep#N ranges
 *     dur, end_ts)
 *   step_host (rank, step, ts,        the kept steps' ranges on the host
 *     end_ts)                         (TA_NEED_DEV)
 *   ranges (rank, ts, dur, name)      every other record_function range
 *   calls (rank, idx, name, ts, dur,  runtime and driver calls
 *     correlation, pid, tid)
 *   launch (rank, correlation, idx,   the call(s) counted as a launch of a
 *     ts, dur, name, tid)             correlation's GPU work (§9.7)
 *   enqueue (rank, stream, ts, sign)  launch queue change points (§9.8)
 *   host (rank, idx, pid, tid, ts,    CPU ops, Python frames and
 *     dur, role, name, cat,           record_function ranges, by time
 *     input_dims)                     (TA_NEED_HOST)
 *   host_thread (rank, pid, tid, ts,  the same and runtime calls, by
 *     dur, role, name, cat,           thread, parents first (TA_NEED_THREAD)
 *     correlation, idx, input_dims)
 *   cpu_ann, gpu_ann_win (rank,      record_function ranges, and their
 *     name, dur)                      GPU copies, in the analysis window
 *   gpu_ann (rank, idx, pid, tid,     GPU annotation ranges
 *     ts, dur, name)
 *   rank_span (rank, first_ts,        each rank's earliest and latest
 *     last_ts)                        start, over every row
 *   hta_trace (rank, idx, cat, name,  --hta-compat only: HTA's rows as
 *     pid, tid, ts, dur, stream,      its critical path reads them (cat,
 *     correlation, is_gpu, partner,   name: name ids); partner: §4's CPU partner
 *     wait_on_stream, wait_corr,      of GPU rows; order by part, idx
 *     part)
 *   mem (rank, idx, pid, tid, ts,     the allocator's [memory] events:
 *     dev_type, dev, addr, bytes,     bytes < 0 for a free; allocated,
 *     allocated, reserved)            reserved: its totals after it
 *   counter_ranges (rank, idx,        CUPTI range profiler events (one a
 *     name, ts)                       kernel), and their counters
 *   counter_vals (rank, idx, key,
 *     value)
 *   gpu_device (rank, id, name,       the deviceProperties entry of the GPU
 *     cc_major, cc_minor, sms,        a rank's GPU work ran on (its first
 *     mem_bytes)                      kernel's device; one entry: that one)
 *   device_props (rank, pos, name,    every deviceProperties entry, by its
 *     mem_bytes, cc_major, cc_minor)  place in the list
 *   rank_clock (rank, base_ns)        ts + base_ns = Unix time in ns, the
 *                                     allocator recorder's clock
 *   snapshot_segments, _blocks,       an allocator snapshot's tables
 *     _events                         (schema: snap_*)
 *   trace_x (rank, idx, cat, name,    every complete ("X") event of the
 *     ts, dur, external_id,           selected ranks as written, cat and
 *     correlation, tid, input_dims,   name as text: for --tb-compat, whose
 *     grid, block, registers,         algorithms read them all
 *     shared_mem, blocks_per_sm,
 *     occupancy, device, python_id,
 *     python_parent_id,
 *     python_module_id)
 *   trace_flow (rank, idx, ph, id,    their fwdbwd flows: "s" at a forward
 *     ts)                             op, "f" at its backward op
 *   coll (rank, idx, pg, pg_size,     every rank's collective kernels with
 *     name, in_nelems, out_nelems,    the op that issued them, and their
 *     dtype, step, seq, issue_ts,     place in their group's step
 *     ts, end_ts, stream)             (TA_NEED_COLL; coll.c)
 */
#ifndef TA_MODEL_H
#define TA_MODEL_H

#include <sqlite3.h>

#include "ta_db.h"

/* Kernel classes (hta-semantics §8), bits so overlaps can be labelled. */
#define TA_KIND_COMPUTE 1
#define TA_KIND_COMM 2
#define TA_KIND_MEMORY 4
#define TA_KIND_OTHER 8

/* Kineto's host categories, as SQL for their id in label: analyses name
 * them by these, never by Kineto's strings (tests/layers.sh). */
#define TA_CAT_ID(kineto) "(SELECT name_id FROM label WHERE name = '" kineto "')"
#define TA_CAT_CPU_OP TA_CAT_ID("cpu_op")
#define TA_CAT_RUNTIME TA_CAT_ID("cuda_runtime")
#define TA_CAT_USER_ANN TA_CAT_ID("user_annotation")
#define TA_CAT_PYTHON TA_CAT_ID("python_function")
#define TA_CAT_MEMCPY TA_CAT_ID("gpu_memcpy")
#define TA_CAT_MEMSET TA_CAT_ID("gpu_memset")

/* What an analysis needs beyond the views, which always exist. */
enum ta_need {
	TA_NEED_DEV = 1 << 0,     /* dev and win (HTA: hrows) */
	TA_NEED_HOST = 1 << 1,    /* host, indexed by time */
	TA_NEED_THREAD = 1 << 2,  /* host_thread, indexed by thread */
	TA_NEED_QUEUE = 1 << 3,   /* enqueue (HTA: its launch rows, kept) */
	TA_NEED_COLL = 1 << 4,    /* coll: every rank's collectives (coll.c) */
	TA_NEED_MEM = 1 << 5,     /* mem, indexed by time */
	TA_NEED_FLOW = 1 << 6,    /* trace_flow, indexed by flow */
	/* it measures GPU activity: a selected rank that launched GPU work
	 * and recorded none (profiled without ProfilerActivity.CUDA) is an
	 * error, not a GPU idle all along (HTA's rules: as HTA, no check) */
	TA_NEED_GPU = 1 << 7,
};

/* What the query asks for: see ta_analyses.h's struct ta_query. */
struct ta_query;
struct ta_table;

/* Builds the model for q on db's connection. A second call for the same
 * query only adds what is newly needed (several analyses in one run). */
/* A rank's analysis windows (?1: the rank), by start: its kept steps'
 * (step, ts, end_ts), or without steps its span as one, of step -1. */
#define TA_WINDOWS_SQL \
	"SELECT step, ts, end_ts FROM step_win WHERE rank = ?1" \
	" UNION ALL SELECT -1, ts, end_ts FROM span WHERE rank = ?1" \
	" AND NOT EXISTS (SELECT 1 FROM step_win WHERE rank = ?1) ORDER BY 2"

int ta_model_prepare(sqlite3 *db, const struct ta_query *q, unsigned need,
		     struct ta_error *err);

/* Writes the rank's coll (TA_NEED_COLL) into table coll of a new database
 * file, its traits into table traits and its earliest time into table
 * clock: a shard's part of what cross-rank commands gather. Attached as
 * schema "peers" to a connection, such tables of every rank's rows are
 * the coll, traits and job's start that connection's model uses. */
int ta_model_export_coll(sqlite3 *db, const struct ta_query *q,
			 const char *path, struct ta_error *err);
/* How many of rank's collective kernels in coll (TA_NEED_COLL) have no
 * usable length (a member kept with its end at its start), gloo's ranges
 * aside: in its step (step >= 0), else in its analysis window (its kept
 * steps; all of them where it has none); -1 on a database error. *st
 * keeps the statement between calls (finalized by the caller). */
int64_t ta_model_untimed_coll(sqlite3 *db, sqlite3_stmt **st, int64_t rank,
			      int64_t step);
/* The tables ta_model_export_coll writes (coll, traits, clock), named
 * with prefix, into out (in a transaction of out's, or each in one of its
 * own), from db's model (TA_NEED_COLL prepared). */
int ta_model_save_part(sqlite3 *db, sqlite3 *out, const char *prefix,
		       struct ta_error *err);
/* fn(rw, arg) in a transaction of a second connection, without waiting,
 * when db is the cache's own entry (info.cache_entry) and still the file
 * its name holds: what a later run reuses (the model's rows, an
 * analysis's walk); anything else is only read. */
void ta_model_write_entry(sqlite3 *db, int (*fn)(sqlite3 *rw, void *arg,
						   struct ta_error *err), void *arg);

/* Into the finished database at path, before it is put in place (ingest
 * -o): the model's device rows, and for a shard its part, for the
 * commands that read it later (keep.c). */
int ta_model_keep(const char *path, struct ta_error *err);
/* The device rows alone, into a cache entry before it is packed: made
 * while its pages are plain, not inflated again for the first command. */
int ta_model_keep_rows(const char *path, struct ta_error *err);
/* A cache entry of one rank keeps its part for its next run (db's model
 * prepared with TA_NEED_COLL for q; only a part q's rules fit is kept). */
void ta_model_keep_part(sqlite3 *db, const struct ta_query *q);
/* A shard's kept part (ta_model_keep) into out as ta_model_export_coll
 * writes it: 1; 0 when it has none this build made for q's rules (then
 * export it), -1 on an error. */
int ta_model_read_part(sqlite3 *shard, const struct ta_query *q, sqlite3 *out,
		       struct ta_error *err);
/* Whether db is a shard with every shard's parts attached as "peers"
 * (shard_run.c): then coll, the traits and the job's start are the job's. */
int ta_model_gathered(sqlite3 *db);

/* Indexes (1 << enum ta_lazy_index) that ingestion builds while loading
 * for a command with these needs. */
unsigned ta_model_lazy_indexes(unsigned need);

/* Whether a dev row has a negative duration (only HTA's rounding makes
 * one): sweeps then cannot stream (intervals.h). */
int ta_model_negative_dur(sqlite3 *db);
/* Whether rank launched GPU work while its trace holds no GPU activity
 * (profiled without ProfilerActivity.CUDA: what TA_NEED_GPU refuses), for
 * the host analyses that read such a trace: its device time is not
 * measured, not 0. 1 yes, 0 no, -1 a database error. */
int ta_model_gpu_unrecorded(sqlite3 *db, int64_t rank);

/* What the job's traces show is in use (traits.c): advice accounts for
 * it. Each is 0 or 1. */
struct ta_traits {
	int graphs;          /* CUDA (HIP) graph launches */
	int triton;          /* compiled kernels: torch.compile, Triton */
	int pinned;          /* host-to-device copies from pinned memory */
	int loader_workers;  /* DataLoader worker processes */
	int stacks;          /* profiled with_stack: Python frames recorded */
	int optim;           /* the optimizer's ops: 1 foreach, 2 fused,
			      * 3 an optimizer torch.optim cannot fuse */
	int sdd_pipeline;    /* TorchRec's TrainPipelineSparseDist */
	int no_host;         /* no trace recorded host activity (profiled
			      * without ProfilerActivity.CPU) */
};

/* The job's traits: every rank's (on a shard with the gathered parts
 * attached, "peers": every shard's). */
int ta_model_traits(sqlite3 *db, struct ta_traits *t, struct ta_error *err);
/* db's own traits as table `table` of out (a shard's part, gathered). */
int ta_model_save_traits(sqlite3 *db, sqlite3 *out, const char *table,
			 struct ta_error *err);

/* 0 when a selected rank kept a ProfilerStep#N, lo <= N <= hi (the model
 * prepared); else err, exit 3, names the kept steps (--step N of a step
 * that is not there: an empty table would read as a step with nothing in
 * it). */
int ta_model_steps_kept(sqlite3 *db, int64_t lo, int64_t hi, struct ta_error *err);

/* Earliest timestamp of the whole job (HTA's alignment, §6); on a shard
 * with every shard's part attached ("peers"), every shard's. */
int64_t ta_model_min_ts(sqlite3 *db, const struct ta_query *q);

/* What a command says about the job beside its tables (facts.c); the
 * model prepared (sel_ranks, step_win). */
struct ta_job_facts {
	size_t ranks, steps;       /* ranks selected; kept steps' windows */
	int64_t memory_span_ns;    /* first to last [memory] event; -1: none */
	char *files;               /* the first few paths ("a, b and 5 more") */
	int modules;               /* nn.Module frames in some trace */
};
/* Its parts, a row per rank's file (on one database, or on each shard and
 * appended in rank order), and the facts they make. */
int ta_model_facts_rows(sqlite3 *db, const struct ta_query *q,
			struct ta_table **out, struct ta_error *err);
void ta_model_facts_of(const struct ta_table *rows, struct ta_job_facts *f);
void ta_model_facts_free(struct ta_job_facts *f);

/* The traces a database was made from, by rank (with their size and
 * modification time at ingestion). */
struct ta_input_file {
	int64_t rank;
	char *path;
	int64_t bytes, mtime_ns;
};
int ta_model_inputs(sqlite3 *db, struct ta_input_file **v, size_t *n,
		    struct ta_error *err);
void ta_model_inputs_free(struct ta_input_file *v, size_t n);

/* A GPU's peaks (peaks.c): dense TFLOP/s per data type (0: none or not
 * published) and memory GB/s, from its vendor's datasheet. */
enum { TA_DT_FP64, TA_DT_FP32, TA_DT_TF32, TA_DT_BF16, TA_DT_FP16, TA_DT_FP8,
       TA_DT_INT8, TA_DT_N };
struct ta_peaks {
	const char *key;      /* matched as a word of the device's name */
	const char *gpu;      /* the model the figures are for */
	double tflops[TA_DT_N];
	double gbps;
};
/* By the name deviceProperties gives (and its memory, which tells A100s
 * apart); -1 for a GPU not in the table. */
int ta_peaks_lookup(const char *name, int64_t mem_bytes, struct ta_peaks *p);
/* Whether a kernel runs on the tensor cores, by its name: Volta to
 * Blackwell (HMMA/IMMA names, cuBLAS's and CUTLASS's tensor-op GEMMs,
 * Hopper's wgmma and nvjet, flash and cuDNN attention); the one list
 * (classify.c). */
int ta_is_tensor_core(const char *name);
/* Whether an op (aten:: name) does work tensor cores are for: matrix
 * products, convolutions, fused attention, cuDNN's recurrent layers. */
int ta_op_tensor_core_eligible(const char *name);
/* Whether a kernel's "est. achieved occupancy %" is Kineto's "not known":
 * its calculator assumes 48 KB of shared memory, and past it writes 0
 * (a small kernel's 0 is real: rounded down). */
int ta_occupancy_unknown(double occupancy, int64_t shared_mem);
/* Whether it is matrix work (GEMM, convolution, fused attention) on
 * whichever cores. */
int ta_is_matmul(const char *name);
/* The two above for a name seen before, from a memo: a kernel's name is
 * met once a launch, and its patterns cost 80,000 instructions a test
 * (report --html tested 67,000 kernels twice). */
#define TA_NAME_TENSOR_CORE 1
#define TA_NAME_MATMUL 2
struct ta_name_memo;
struct ta_name_memo *ta_name_memo_new(void);
unsigned ta_name_traits(struct ta_name_memo *m, const char *name);
void ta_name_memo_free(struct ta_name_memo *m);

/* Facts of names by id (labels.c): judge(text) of the label an id
 * names (0 without a judge), its text read once; TA_LABEL_NONE when no label has the id (the
 * rows a JOIN with label drops). For analyses whose rows carry name ids:
 * a JOIN with label and tests of the text per row cost more than the
 * row. A failed read gives TA_LABEL_NONE and is reported by
 * ta_labels_failed (-1, err set; else 0). Needs the model's views. */
#define TA_LABEL_NONE 0x80000000u
struct ta_labels;
struct ta_labels *ta_labels_new(sqlite3 *db, unsigned (*judge)(const char *name),
				struct ta_error *err);
unsigned ta_labels_get(struct ta_labels *l, sqlite3_value *id);
int ta_labels_failed(const struct ta_labels *l, struct ta_error *err);
void ta_labels_free(struct ta_labels *l);

/* "bf16" -> TA_DT_BF16; -1 for a type without a peak */
int ta_peaks_dtype(const char *dtype);

/* An allocator snapshot's history events; -1 if db is not a snapshot. */
int64_t ta_model_snapshot_events(sqlite3 *db);

/* Whose rules the numbers follow: ours (right on today's traces) or
 * HTA 0.6.1's, number for number (--hta-compat). A third mode (the
 * TensorBoard plugin's, say) is a value here, its flag in cli.c's table,
 * its row of rules (rules.c) and, per command, what it means there
 * (struct ta_command's compat); analyses do not change. */
enum ta_mode { TA_MODE_OWN, TA_MODE_HTA, TA_MODE_TB, TA_NMODES };

/* How analyses measure, one set of rules per mode (rules.c): the default,
 * right on today's traces, and HTA's (--hta-compat), HTA 0.6.1 number for
 * number. An analysis asks for a rule by what it decides, never which mode
 * runs: a third mode is a third row in rules.c, not a fork in analyses. */
struct ta_rules {
	/* measure each rank in its analysis window (else first to last GPU
	 * work, HTA §9.1, §9.8) */
	int windows;
	/* events as HTA's trace frame holds them (the hta_trace view: its
	 * step filter and call stacks, §7) */
	int trace_frame;
	/* HTA's arithmetic: kernel-type shares rounded to 1 decimal (else
	 * 2), idle µs and ratios to 2 (else exact), membw's running sum
	 * left to float drift once no copy runs (else 0) */
	int hta_arithmetic;
	/* idle gaps from the previous kernel's end, negative ones counted, the
	 * first kernel's NaN gap an "other", a category listed only where a
	 * gap fell (§9.6); else from the latest end so far, gaps > 0 only */
	int idle_prev_end;
	/* the GPU as a whole (stream empty) beside its streams: idle, diff */
	int whole_gpu;
	/* top-k: each kept name's per-name total only, negative sums kept,
	 * "others" the statistics of the absorbed totals, --top 0 everything
	 * to others (§9.3, §9.10); else every call's statistics */
	int topk_totals;
	/* kernel-type sweep at µs granularity (HTA truncates) */
	int sweep_trunc_us;
	/* HTA's row order: kernels by type then name, membw's ends after
	 * starts at one time, sequences by HTA's ranking without --top */
	int hta_order;
	/* notes on what the data does that HTA passes over in silence
	 * (shared correlation ids, launches after their kernel start) */
	int notes;
	/* exposed communication against the peers' matching collectives */
	int peers;
	/* launch ops: a launch's op on its own thread (HTA: any thread) and
	 * each rank's rows alone (HTA's list keeps the ranks before it) */
	int own_thread;
	/* kernel sequences found HTA's way (§9.13): the first rank, its
	 * stacks and backward links, candidates at the smallest depth */
	int hta_sequences;
	/* kernels: each name's blocks per SM, est. occupancy and tensor
	 * cores (the TensorBoard plugin's kernel view); HTA's table has
	 * times only */
	int kernel_launch_stats;
	/* a rank's rows may come from its own shard (HTA's numbers read every
	 * rank at once: its first rank, its rank order): the merged way */
	int on_shards;
};

const struct ta_rules *ta_rules(const struct ta_query *q);
/* Which row: what the model's cache of built views is keyed by. */
unsigned ta_rules_id(const struct ta_query *q);

#endif
