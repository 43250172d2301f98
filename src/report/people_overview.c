/* overview in text: a line per rank with its average step by category,
 * one with its GPU summary, and what to do about it, the plugin's
 * recommendations made right for the run (tb-semantics "Overview:
 * recommendations"): data loading over 5 % of the step, exposed
 * communication over 10 %, kernels running under 50 %, and matrix work that
 * never reached the tensor cores (never said to a run that uses them, as
 * the plugin said "enable AMP" to bf16 runs). */
#include "ta_people.h"

#include <string.h>

static const char *const parts[] = { "kernel", "memcpy", "memset", "communication",
	"runtime", "dataloader", "cpu_exec", "other" };
#define NPARTS (sizeof(parts) / sizeof(*parts))

/* the summary's own columns: each is there */
static const struct ta_cell *cell(const struct ta_table *t, size_t r, const char *name)
{
	return ta_table_cell(t, r, (size_t)ta_table_col(t, name));
}

static double share(const struct ta_table *s, size_t r, const char *part)
{
	char name[64];
	double step = cell(s, r, "step_us")->d;

	snprintf(name, sizeof(name), "%s_us", part);
	return step > 0 ? 100.0 * cell(s, r, name)->d / step : 0;
}

/* Whether rank's window is its whole trace (no ProfilerStep# range: its
 * row has no step), not a step: a trace of three steps read as "its step
 * 75 ms" where each was 25 (cuda_only). */
static int whole_trace(const struct ta_table *t, int64_t rank)
{
	long rc = ta_table_col(t, "rank"), sc = ta_table_col(t, "step");
	size_t i;

	for (i = 0; rc >= 0 && sc >= 0 && i < t->nrows; i++)
		if (ta_table_cell(t, i, (size_t)rc)->i == rank &&
		    ta_table_cell(t, i, (size_t)sc)->null)
			return 1;
	return 0;
}

static void breakdown(struct ta_buf *b, const struct ta_table *t,
		      const struct ta_table *s, size_t r)
{
	int64_t steps = cell(s, r, "steps")->i, rank = cell(s, r, "rank")->i;
	size_t i;
	int first = 1;

	ta_buf_addf(b, "rank %lld: ", (long long)rank);
	if (!steps) {
		ta_buf_adds(b, "no step to break down\n");
		return;
	}
	ta_buf_addf(b, "%s %.3f ms:", whole_trace(t, rank) ? "no ProfilerStep# step: "
		    "the whole trace as one window," : steps > 1 ? "the average step" :
		    "its step", cell(s, r, "step_us")->d / 1e3);
	for (i = 0; i < NPARTS; i++) {
		double p = share(s, r, parts[i]);

		if (p < 0.05 && strcmp(parts[i], "other") != 0)
			continue;
		ta_buf_addf(b, "%s %s %.1f %%", first ? "" : ",", parts[i], p);
		first = 0;
	}
	ta_buf_adds(b, "\n");
}

/* What the rank's window is, as the lines below name it. */
static const char *window_of(const struct ta_table *t, int64_t rank)
{
	return whole_trace(t, rank) ? "the trace" : "the steps";
}

static void gpu_line(struct ta_buf *b, const struct ta_table *s, size_t r,
		     const char *over)
{
	const struct ta_cell *util = cell(s, r, "gpu_util_pct");
	const struct ta_cell *sm = cell(s, r, "sm_efficiency_pct");
	const struct ta_cell *occ = cell(s, r, "occupancy_pct");
	const struct ta_cell *tc = cell(s, r, "tensor_core_pct");
	const struct ta_cell *mm = cell(s, r, "matmul_pct");
	int64_t unknown = cell(s, r, "occupancy_unknown")->i;

	if (util->null)
		return;
	/* kernels alone, as the plugin's utilization: not diagnose's GPU
	 * busy, which counts copies and sets too */
	ta_buf_addf(b, "  GPU utilization (kernels) %.1f %% of %s", util->d, over);
	if (!sm->null && sm->d > 0)
		ta_buf_addf(b, ", est. SM efficiency %.1f %%", sm->d);
	if (!occ->null)
		ta_buf_addf(b, ", est. achieved occupancy %.1f %%", occ->d);
	if (unknown)
		ta_buf_addf(b, " (%lld kernel%s without one left out)", (long long)unknown,
			    unknown == 1 ? "" : "s");
	/* beside the matrix work, what tensor cores are for: 34 % reads as
	 * poor where all of the matrix work is 34 % */
	if (!tc->null)
		ta_buf_addf(b, ", tensor cores %.1f %% of compute-kernel time (matrix "
			    "work %.1f %%)", tc->d, mm->null ? 0 : mm->d);
	ta_buf_adds(b, "\n");
}

/* A median launch-to-start past this: the GPU is behind the host */
#define LAG_BEHIND_US 1000.0

static void advice(struct ta_buf *b, const struct ta_table *s, size_t r,
		   const char *over)
{
	const struct ta_cell *util = cell(s, r, "gpu_util_pct");
	const struct ta_cell *tc = cell(s, r, "tensor_core_pct");
	const struct ta_cell *mm = cell(s, r, "matmul_pct");
	double load = share(s, r, "dataloader"), comm = share(s, r, "communication");
	double host = share(s, r, "runtime") + share(s, r, "cpu_exec");
	/* no op on the host at all: a trace profiled without
	 * ProfilerActivity.CPU, whose "other" is all of the host's time, not
	 * time outside its ops (cuda_only was told "Python that launches
	 * nothing, sleeps") */
	int no_ops = cell(s, r, "cpu_exec_us")->d <= 0 && load <= 0;
	const char *them = strcmp(over, "the steps") == 0 ? "them" : "it";
	const struct ta_cell *lag = cell(s, r, "launch_lag_us");
	/* what the run already uses is not recommended (the plugin told
	 * every run to use CUDA graphs) */
	const char *cure = cell(s, r, "cuda_graphs")->i ?
		"larger batches, capture more of the step in the CUDA graphs the "
		"run already uses, fewer synchronizations" :
		cell(s, r, "compiled")->i ?
		"larger batches, CUDA graphs for the compiled code the run already "
		"uses (torch.compile mode=\"reduce-overhead\"), fewer synchronizations" :
		"larger batches, CUDA graphs (torch.compile mode=\"reduce-overhead\"), "
		"fewer synchronizations";

	if (!cell(s, r, "steps")->i)
		return;
	if (load > 5)
		ta_buf_addf(b, "  - data loading takes %.1f %% of the step%s\n", load,
			    cell(s, r, "loader_workers")->i ?
			    " although DataLoader workers run: they do not keep up, so more "
			    "workers, cheaper decoding and augmentation, or faster storage" :
			    ": load in DataLoader workers (num_workers), with pin_memory=True "
			    "and prefetching");
	if (comm > 10)
		ta_buf_addf(b, "  - communication not hidden behind computation takes %.1f %% "
			    "of the step: where a rank is late the others wait here (traceanalyze "
			    "stragglers says who and why); else overlap it (DDP's bucket_cap_mb, "
			    "FSDP's prefetching) or send fewer, larger messages\n", comm);
	/* idle that data loading or waiting in collectives explains is said
	 * above */
	/* kernels that start milliseconds after their launch: the GPU runs
	 * behind the host, whose time in the runtime is waiting (a sync, a
	 * copy to pageable memory), not work that held the GPU */
	if (!util->null && util->d < 50 && load + comm < (100 - util->d) / 2 &&
	    !lag->null && lag->d >= LAG_BEHIND_US)
		ta_buf_addf(b, "  - kernels run only %.1f %% of %s, yet start a median "
			    "%.1f ms after their launch: the GPU runs behind the host, which "
			    "waits (its %.1f %% in the runtime and ops is not what holds the "
			    "GPU); the GPU idles with work queued (diagnose says on what)\n",
			    util->d, over, lag->d / 1000.0, host);
	/* the host's time outside ops and runtime calls (a sleep, Python
	 * that launches nothing, I/O): larger batches do not remove it
	 * (host_stall: 58 %% of the step, told "larger batches") */
	else if (!util->null && util->d < 50 && load + comm < (100 - util->d) / 2 &&
		 no_ops)
		ta_buf_addf(b, "  - kernels run only %.1f %% of %s, and the host's ops were "
			    "not recorded (profiled without ProfilerActivity.CPU): profile "
			    "both to see what the host did meanwhile\n", util->d, over);
	else if (!util->null && util->d < 50 && load + comm < (100 - util->d) / 2 &&
		 share(s, r, "other") > (100 - util->d) / 2)
		ta_buf_addf(b, "  - kernels run only %.1f %% of %s, and %.1f %% of "
			    "%s is host time outside any op or runtime call (Python that "
			    "launches nothing, sleeps, I/O, waits): diagnose names what ran "
			    "there\n", util->d, over, share(s, r, "other"), them);
	else if (!util->null && util->d < 50 && load + comm < (100 - util->d) / 2)
		ta_buf_addf(b, "  - kernels run only %.1f %% of %s, and the host runs "
			    "%.1f %% of %s: %s%s (diagnose says what it waits for)\n", util->d,
			    over, host, them,
			    host > 50 ? "the host does not keep up (the profiler's own cost on the "
			    "host adds to it, record_shapes and with_stack most: time a step with "
			    "the profiler off first): " : "give it more work per step: larger batches",
			    host > 50 ? cure : "");
	if (!tc->null && !mm->null && tc->d < 1 && mm->d > 10)
		ta_buf_addf(b, "  - matrix work is %.1f %% of kernel time and none of it runs "
			    "on the tensor cores: autocast to bf16 (torch.autocast), or TF32 for "
			    "fp32 (torch.backends.cuda.matmul.allow_tf32 = True)\n", mm->d);
}

void ta_people_overview(struct ta_table *t, const struct ta_table *sum,
			const struct ta_table *steps)
{
	size_t r;

	if (!sum)
		return;
	for (r = 0; r < sum->nrows; r++) {
		const char *over = window_of(steps ? steps : t, cell(sum, r, "rank")->i);

		breakdown(&t->head, steps ? steps : t, sum, r);
		gpu_line(&t->head, sum, r, over);
		advice(&t->head, sum, r, over);
	}
}
