/* What to do about a finding. The same kind of loss has different cures
 * depending on what covers it (data loading, the optimizer, logging,
 * Python dispatch) and on what the run already does (a run under CUDA
 * graphs is not told to use CUDA graphs). */
#include "advice.h"
#include "host.h"

#include <ctype.h>
#include <string.h>

const char *const ta_finding_names[NKINDS + 1] = {
	"host_region", "sync", "pageable_copy", "launch_overhead",
	"exposed_comm", "small_kernels", "misaligned_gemm", "wait_for_peer",
	"memory_growth", "memory_peak", "low_efficiency", "queued_idle",
	"exposed_copy", NULL
};

/* Case-insensitive: does s contain any of words, each at the start of a
 * word of s ("data_loading", "DataLoader", not "DistributedDataParallel")? */
static int mentions(const char *s, const char *const *words)
{
	size_t i, j;

	for (i = 0; s[i]; i++)
		for (j = 0; words[j] && (i == 0 || !isalnum((unsigned char)s[i - 1])); j++) {
			size_t k = 0;

			while (words[j][k] && tolower((unsigned char)s[i + k]) == words[j][k])
				k++;
			if (!words[j][k])
				return 1;
		}
	return 0;
}

/* where: "aten::mm (bf16, memory-bound)": the cure by family and side of
 * the ridge (roofline says how far below its roof each shape is), and
 * what roofline_findings.c ruled out ("beside communication", "aligned
 * shapes"). */
static const char *low_efficiency(const char *where)
{
	int memory = strstr(where, "memory-bound") != NULL;

	if (strstr(where, ", beside communication)"))
		return "its kernels ran beside collectives, which take SMs and "
		       "memory bandwidth while they run (overlap's slowed_us is "
		       "the time computation lost to them): the shapes are not the "
		       "cause. Collectives held long by a late peer (stragglers) "
		       "slow it most; a peer's rank running the same shapes alone "
		       "shows their own speed";

	/* the fused backends' own ops: telling them to use one is no cure */
	if (strstr(where, "attention") && !memory &&
	    (strstr(where, "flash") || strstr(where, "cudnn") ||
	     strstr(where, "efficient")))
		/* a checklist, not a charge: the trace may show is_causal
		 * already set, no mask and no dropout (helper-58) */
		return "attention already runs a fused kernel and stays below "
		       "its roof; what holds a fused kernel there, where the run "
		       "has it: an explicit mask tensor (attn_mask) where "
		       "is_causal=True would do (the kernel then skips the masked "
		       "half), dropout, and head dims of 64 (128 runs closest to "
		       "the peak; roofline --group-by shape shows the shapes)";
	if (strstr(where, "attention"))
		return memory ?
		       "attention memory-bound at its shapes (short sequences, or "
		       "decode's one query a call): more queries a call (longer "
		       "sequences, batched decode) raise its FLOPs per byte; roofline "
		       "--group-by shape shows each shape" :
		       "attention below its roof: head dims of 64 or 128 and a fused "
		       "backend (flash or cuDNN: torch.nn.attention.sdpa_kernel) run "
		       "closest to the peak";
	/* (where names the type: a bf16 run is not told to use bf16) */
	if (strstr(where, "conv") && (strstr(where, "(bf16") || strstr(where, "(fp16")))
		/* a checklist: the trace does not say the layout (helper-61's
		 * channels_last ResNet was told to use channels_last) */
		return "convolutions below their roof; what keeps cuDNN off its "
		       "fastest tensor-core kernels, where the run has it: the NCHW "
		       "layout (channels_last), channel counts that are not "
		       "multiples of 8 (an RGB stem's 3 never is), "
		       "torch.backends.cudnn.benchmark off; small images or batches "
		       "keep them below it regardless";
	if (strstr(where, "conv"))
		return "convolutions below their roof; what keeps cuDNN off its "
		       "fastest tensor-core kernels, where the run has it: fp32 "
		       "(bf16/fp16 autocast), the NCHW layout (channels_last), "
		       "channel counts that are not multiples of 8, "
		       "torch.backends.cudnn.benchmark off";
	if (strstr(where, ", aligned shapes)"))
		return "compute-bound GEMMs far below the peak whose dimensions are "
		       "all multiples of 64 already (padding them will not help): "
		       "small GEMMs leave SMs idle (few tiles a wave), and kernels "
		       "running beside them on other streams take SMs; roofline "
		       "--group-by shape shows each shape's share of the peak";
	return memory ?
	       "memory-bound GEMMs read every weight for few rows (decode, a small "
	       "batch): batch more tokens per GEMM, or fuse the layers; "
	       "roofline --group-by shape shows each shape's intensity" :
	       "compute-bound GEMMs far below the peak: shapes not multiples of 64 "
	       "(or 8) leave tiles partly empty (a vocabulary of 50257: pad to 50304); "
	       "roofline --group-by shape names the shapes";
}

/* Whether an optimizer step's range names one of torch.optim's that have
 * fused=True, or names none ("Optimizer.step#Shampoo.step": a class of
 * its own, whose step no flag fuses). */
static int torch_fusable(const char *where)
{
	static const char *const fused[] = { "Adam.", "AdamW.", "SGD.", "Adagrad.",
		NULL };
	const char *cls = strstr(where, "Optimizer.step#");
	size_t i;

	if (!cls)
		return 1;
	cls += strlen("Optimizer.step#");
	for (i = 0; fused[i]; i++)
		if (strncmp(cls, fused[i], strlen(fused[i])) == 0)
			return 1;
	return 0;
}

/* A Python builtin that blocks the host: a function of the OS's
 * ("<built-in function sleep>", os.read, select.select), or a method of
 * an object made to wait (a lock, a queue, a file, a socket:
 * "<built-in method acquire of _thread.lock object>"). It launches
 * nothing and dispatches nothing: graphs or compile do not remove it
 * (host_stall's 10 ms sleep was told so). By the object's type, not the
 * method's name: str.join, Tensor.select, a generator's send and a CUDA
 * event's wait (the host goes on) are not waits. */
static int blocking_builtin(const char *where)
{
	static const char *const functions[] = { "sleep", "select", "poll",
		"read", "write", "pread", "pwrite", "readv", "writev", "fsync",
		"waitpid", "wait", "wait3", "wait4", "waitid", NULL };
	static const char *const types[] = { "_thread.lock", "_thread.RLock",
		"_io.", "_socket.socket", "select.", "_queue.SimpleQueue",
		"_multiprocessing.SemLock", "_ssl._SSLSocket", NULL };
	const char *of;
	size_t i, n;

	if (strncmp(where, "<built-in function ", 19) == 0) {
		where += 19;
		n = strcspn(where, " >");
		for (i = 0; functions[i]; i++)
			if (strlen(functions[i]) == n && strncmp(where, functions[i], n) == 0)
				return 1;
		return 0;
	}
	if (strncmp(where, "<built-in method ", 17) != 0 ||
	    !(of = strstr(where + 17, " of ")))
		return 0;
	for (i = 0, of += 4; types[i]; i++)
		if (strncmp(of, types[i], strlen(types[i])) == 0)
			return 1;
	return 0;
}

static const char *host_region(const char *where, const struct ta_traits *run)
{
	static const char *const data[] = { "data", "loader", "__next__",
		"collate", "fetch", "batch", "dataset", NULL };
	static const char *const optim[] = { "optim", "zero_grad", "clip_grad",
		NULL };
	static const char *const logs[] = { "log", "print", "wandb",
		"tensorboard", "metric", NULL };
	static const char *const save[] = { "save", "checkpoint", "state_dict",
		NULL };
	static const char *const ddp[] = { "distributeddataparallel", NULL };
	static const char *const norm[] = { "batch_norm", "batchnorm", NULL };
	/* "within X": a range far longer than the waits it holds (host.c).
	 * What X is still says what held the step (a loader, an optimizer);
	 * the advice on what ran inside it does not follow from its name */
	int within = strncmp(where, "within ", 7) == 0;

	if (within)
		where += 7;

	/* the profiler's own frames (record_function's enter and exit):
	 * told CUDA graphs as any dispatch was (helper-64) */
	if (strstr(where, "torch/autograd/profiler.py(") ||
	    strstr(where, "torch/profiler/") ||
	    strstr(where, "_record_function_enter") ||
	    strstr(where, "_record_function_exit"))
		return "the profiler's own work (prof.step(), entering and leaving "
		       "record_function ranges): not there with the profiler off";
	if (strcmp(where, "(no annotation)") == 0)
		/* the host was late with the next work: what it ran then may
		 * have launched some (op dispatch), so not "launched nothing" */
		return run->no_host ?
		       "the GPU waited for the host here, and the trace holds no "
		       "host activity (profiled without ProfilerActivity.CPU): no "
		       "op, range or step says what ran; profile with "
		       "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]" :
		       run->stacks ?
		       "the GPU waited for the host here and neither a range nor "
		       "a Python frame of the trace names what it ran (native "
		       "code, or Python the profiler did not record): wrap the "
		       "step's parts in record_function to see what ran" :
		       "the GPU waited for the host here and no range names what "
		       "it ran: profile with with_stack=True, or wrap the step's "
		       "parts in record_function, to see what ran";
	if (strcmp(where, TA_HOST_IDLE) == 0)
		return run->stacks ?
		       "the host ran no op and no recorded Python frame for this "
		       "long: it waited (a lock, a future or queue, I/O, "
		       "time.sleep) or ran native code or another thread's work the "
		       "profiler does not record (a ThreadPoolExecutor's): a "
		       "record_function around the wait says which" :
		       "the host ran no op for this long: it waited (a lock, a "
		       "future or queue, I/O, time.sleep) or ran Python or another "
		       "thread's work the profiler does not record (a "
		       "ThreadPoolExecutor's): a record_function around the wait, "
		       "or with_stack=True, says which";
	if (strcmp(where, TA_HOST_BACKWARD) == 0)
		/* each backward op's CPU work (autograd's bookkeeping, the
		 * dispatch, its hooks) before its kernels launch: no Python
		 * frame or range of the step names it */
		return run->graphs ?
		       "the GPU waited while autograd's engine ran the backward's "
		       "ops one after another (each op's CPU work before its "
		       "kernels launch, and any hook registered on the backward): "
		       "capture the backward in the CUDA graphs too, or a larger "
		       "batch per step" :
		       run->triton ?
		       "the GPU waited while autograd's engine ran the backward's "
		       "ops one after another (each op's CPU work before its "
		       "kernels launch, and any hook registered on the backward): "
		       "CUDA graphs (mode=\"reduce-overhead\"), or a larger batch "
		       "per step" :
		       "the GPU waited while autograd's engine ran the backward's "
		       "ops one after another (each op's CPU work before its "
		       "kernels launch, and any hook registered on the backward): "
		       "CUDA graphs (torch.compile's mode=\"reduce-overhead\", "
		       "which compiles the backward too), or a larger batch per "
		       "step; a compiled graph without them launches its kernels "
		       "one by one as well";
	/* torch.compile's own ranges: its wrapper's Python around each call
	 * (before the words below: a graph's hash may begin with "log") */
	if (within && !run->graphs && (strncmp(where, "## Call CompiledFxGraph", 23) == 0 ||
				       strncmp(where, "CompiledFunction", 16) == 0))
		/* the holes lie inside one call of the graph, far longer than
		 * them: between its own launches, not in the Python around it
		 * (helper-61: one forward and one backward call a step, 100
		 * launches each, told to compile a larger region) */
		return "the GPU waited between the compiled graph's own launches "
		       "(its kernels launch one by one, each faster than the host "
		       "launches the next): mode=\"reduce-overhead\" replays them as "
		       "a CUDA graph; or a larger batch a step";
	if (strncmp(where, "## Call CompiledFxGraph", 23) == 0 ||
	    strncmp(where, "Torch-Compiled Region", 21) == 0 ||
	    strncmp(where, "TorchDynamo Cache Lookup", 24) == 0 ||
	    strncmp(where, "CompiledFunction", 16) == 0)
		return run->graphs ?
		       "torch.compile's own Python around each call (Dynamo's "
		       "guards, copies into the CUDA graph's static inputs) ran "
		       "between replays: compile a larger region (the loop around "
		       "this call) so that each call replays more work" :
		       /* one call a step is as large as it gets: a larger
			* region only where a step makes many (helper-62) */
		       "torch.compile's own work around and inside each call "
		       "(Dynamo's guards, the graph's wrapper, its kernels "
		       "launched one by one) held the GPU: mode=\"reduce-overhead\" "
		       "replays the launches as CUDA graphs; where a step makes "
		       "many small calls, compile a larger region";
	/* a collective on the CPU (gloo, mpi, ucc): not made cheaper by the
	 * rank that waits in it (tb_gloo's rank 0 was told so, while its peer
	 * slept 20 ms a step) */
	if (strncmp(where, "gloo:", 5) == 0 || strncmp(where, "mpi:", 4) == 0 ||
	    strncmp(where, "ucc:", 4) == 0)
		return "a collective on the CPU held the step: its time is the "
		       "transfer and the wait for the slowest rank (stragglers names "
		       "it for gloo where the traces name its group; else compare "
		       "the ranks' time in it: the rank that spends least in it "
		       "is the one the others wait for) and fix that rank, or move "
		       "the collectives to the GPU (NCCL)";
	/* TorchRec's input distribution (its pipelines name their stages
	 * "## sparse_data_dist ##", "## wait_sparse_data_dist ##", its
	 * all-to-alls "## all2all_data:kjt splits ##",
	 * "## all2all_id_list_score_data:init ##"): the
	 * sparse features' all-to-all, not a data loader (before "data") */
	if ((strstr(where, "sparse_data_dist") || strstr(where, "all2all") ||
	     strcasestr(where, "alltoall")) && run->sdd_pipeline)
		return "TorchRec's input distribution (the sparse features' "
		       "all-to-all) held the step although the pipeline overlaps "
		       "it with the previous batch: it takes longer than that "
		       "batch's compute, so fewer or smaller sparse features a "
		       "rank (sharding), or if a peer is late, fix that rank "
		       "(stragglers names it)";
	if (strstr(where, "sparse_data_dist") || strstr(where, "all2all") ||
	    strcasestr(where, "alltoall"))
		return "TorchRec's input distribution (the sparse features' "
		       "all-to-all) held the step: a pipeline that overlaps it "
		       "with the previous batch's compute (TrainPipelineSparseDist), "
		       "and if a peer is late, fix that rank (stragglers names it)";
	/* the batch copied to the GPU (TorchRec's "## copy_batch_to_gpu ##"):
	 * a copy, not a loader (before "batch") */
	if ((strstr(where, "copy_batch") || strstr(where, "to_gpu") ||
	     strstr(where, "to_device")) && run->sdd_pipeline)
		return "the host copies the batch to the GPU here although the "
		       "pipeline copies the next batch ahead: pin it "
		       "(pin_memory=True) and copy with non_blocking=True, so "
		       "that the copy does not hold the host";
	if (strstr(where, "copy_batch") || strstr(where, "to_gpu") ||
	    strstr(where, "to_device"))
		return "the host copies the batch to the GPU here: pin it "
		       "(pin_memory=True) and copy with non_blocking=True, or copy "
		       "the next batch on a side stream while this one computes "
		       "(a pipeline such as TorchRec's TrainPipelineSparseDist)";
	/* DDP's forward holds the whole model's: a wait within it is the
	 * model's dispatch as often as DDP's own sync */
	if (mentions(where, ddp) && !within)
		return "DDP's forward waits here for the other ranks (the last "
		       "step's all-reduce, its buffer broadcast, its bucket "
		       "rebuild): if a peer is late, fix that rank (stragglers "
		       "names it); else broadcast_buffers=False when the buffers "
		       "need no sync";
	if (mentions(where, data) && !mentions(where, norm))
		return run->loader_workers ?
		       "data loading stalls the GPU although DataLoader workers "
		       "run: they do not keep up, so more workers, cheaper "
		       "decoding and augmentation, or faster storage (a larger "
		       "prefetch_factor only evens out a rate that varies)" :
		       "data loading stalls the GPU: load in DataLoader worker "
		       "processes (num_workers > 0, persistent_workers=True) "
		       "with pin_memory=True and prefetching";
	if (mentions(where, optim) && (!torch_fusable(where) ||
					(run->optim == 3 && !strstr(where, "Optimizer.step#"))))
		return "the optimizer runs in Python between launches, and it is "
		       "not one of torch.optim's with fused=True: compile its step "
		       "(torch.compile), or step less often (gradient accumulation)";
	if (mentions(where, optim))
		return run->optim == 2 ?
		       "the optimizer's Python runs between launches although it "
		       "is fused: compile the optimizer step (torch.compile), or "
		       "step less often (gradient accumulation)" :
		       run->optim == 1 ?
		       "the optimizer runs in Python between launches although it "
		       "uses foreach kernels: fused=True (Adam, AdamW, SGD: a "
		       "kernel a parameter group), or compile the step" :
		       "the optimizer runs in Python between launches: a fused "
		       "or foreach optimizer (fused=True), or compile the step";
	if (mentions(where, logs))
		return "logging holds the step: log every N steps and keep the "
		       "metrics on the GPU until then";
	/* activation checkpointing's recomputation (torch.utils.checkpoint:
	 * its frames, its recompute_fn, CheckpointFunction; not any user
	 * frame named recompute_*) saves nothing
	 * (helper-54: told "checkpoint less often, or asynchronously") */
	if (strstr(where, "utils/checkpoint.py") || strstr(where, ": recompute_fn") ||
	    strstr(where, "CheckpointFunction"))
		return "activation checkpointing recomputes the forward in the "
		       "backward: this is its host time; checkpoint fewer layers "
		       "where memory allows, or compile the recomputed block";
	if (mentions(where, save))
		return "saving holds the step: checkpoint less often, or "
		       "asynchronously (torch.distributed.checkpoint.async_save)";
	/* the allocator's cache emptied: the next step takes its blocks
	 * back with cudaMalloc (helper-65: told graphs or compile) */
	if (strstr(where, "_cuda_emptyCache") || strstr(where, "empty_cache"))
		return "torch.cuda.empty_cache() hands the allocator's cached blocks "
		       "back to the driver, and the next step takes them again "
		       "(cudaMalloc, which synchronizes): do not call it in the loop";
	if (blocking_builtin(where))
		return "the host waited in this call (a sleep, a lock, a file or a "
		       "socket) with the GPU idle: it launches nothing, so CUDA "
		       "graphs or torch.compile do not remove it; take it off the "
		       "step (a background thread or process, prefetching)";
	/* within an op or a builtin (no record_function goes inside it), or
	 * DDP's forward: the model's dispatch */
	if (within && (strncmp(where, "aten::", 6) == 0 ||
		       strncmp(where, "<built-in", 9) == 0 || mentions(where, ddp)))
		return run->graphs ? "Python and op dispatch between launches, "
			       "outside the CUDA graphs the run already uses: capture "
			       "this part of the step in a graph too" :
		       run->triton ? "Python and op dispatch between launches, "
			       "outside the compiled code the run already uses: remove "
			       "the graph breaks here (torch._dynamo.explain) or use "
			       "mode=\"reduce-overhead\"" :
		       "Python and op dispatch between launches: CUDA graphs or "
		       "torch.compile (mode=\"reduce-overhead\")";
	if (within)
		return run->graphs || run->triton ?
		       "the GPU waited for the host inside this range, which is "
		       "far longer than the waits: wrap its parts in "
		       "record_function to see what ran" :
		       "the GPU waited for the host inside this range, which is "
		       "far longer than the waits: wrap its parts in "
		       "record_function to see what ran; short waits between an "
		       "eager model's ops are op dispatch (CUDA graphs or "
		       "torch.compile launch them together)";
	/* a Python frame of the user's own code (not torch's, not a
	 * library's) over a hole: Python work that launches nothing (a
	 * tokenizer, a loop over samples), not the dispatch overhead that
	 * graphs or compile would remove */
	if (strstr(where, ".py(") && !strstr(where, "torch/") &&
	    !strstr(where, "site-packages/") && !strstr(where, "dist-packages/"))
		return "Python code of this frame ran with the GPU idle (its "
		       "own time, not its launches'): make it cheaper, run it less "
		       "often, or move it off the step (DataLoader workers, a "
		       "background thread or process)";
	if (strncmp(where, "aten::", 6) == 0 || strncmp(where, "<built-in", 9) == 0 ||
	    strstr(where, ".py(") || strncmp(where, "nn.Module:", 10) == 0) {
		if (run->graphs)
			return "Python and op dispatch between launches, outside the "
			       "CUDA graphs the run already uses: capture this part "
			       "of the step in a graph too";
		if (run->triton)
			return "Python and op dispatch between launches, outside the "
			       "compiled code the run already uses: remove the graph "
			       "breaks here (torch._dynamo.explain) or use "
			       "mode=\"reduce-overhead\"";
		return "Python and op dispatch between launches: CUDA graphs or "
		       "torch.compile (mode=\"reduce-overhead\")";
	}
	return "the GPU waited while the CPU ran this region: make it "
	       "cheaper, run it less often, or move it off the step (a "
	       "background thread or process)";
}

const char *ta_advice_peak(int roomy)
{
	return roomy ? "the peak is under half of the GPU's memory: room to "
		       "spare, a larger batch fits (memory --by annotation "
		       "says what the peak is made of)" :
		       "what the peak is made of (memory --by annotation, --by "
		       "stack): activation checkpointing, a smaller batch, or "
		       "freeing early what the largest of these keeps";
}

const char *ta_advice(enum finding_kind kind, const char *where,
		      const struct ta_traits *run)
{
	switch (kind) {
	case F_HOST_REGION:
		return host_region(where, run);
	case F_SYNC:
		if (strncmp(where, "spin on ", 8) == 0)
			return "the host polls the GPU (cudaEventQuery or "
			       "cudaStreamQuery in a loop) until it is done: let "
			       "the queue run ahead and wait later, or every N steps";
		if (strncmp(where, TA_HOST_SCALER, strlen(TA_HOST_SCALER)) == 0)
			/* GradScaler.step calls .item() on found_inf unless the
			 * optimizer takes the scale itself (_step_supports_amp_scaling) */
			return "GradScaler.step reads whether a gradient overflowed "
			       "(.item()) before each optimizer step: an optimizer "
			       "with fused=True (Adam, AdamW, SGD) takes the check "
			       "into its kernel and does not synchronise; bf16 "
			       "autocast needs no GradScaler";
		return "drop the synchronisation at this call site (.item(), "
		       ".cpu(), print of a GPU tensor, Python if on a GPU "
		       "value): accumulate on the GPU, read it every N steps";
	case F_PAGEABLE:
		/* into pageable memory: .cpu(), .item(); the host waits for it */
		if (strstr(where, "Device -> Pageable"))
			return "copies from the GPU into pageable memory (.cpu(), "
			       ".item()) hold the host until the GPU has done all "
			       "before them: copy into a pinned tensor with "
			       "non_blocking=True and read it a step later, or less "
			       "often";
		return run->pinned ?
		       "these copies read pageable memory, though the run pins "
		       "others: pin their source too (tensor.pin_memory(), "
		       "pin_memory=True) and copy with non_blocking=True" :
		       "copy from pinned memory (pin_memory=True, "
		       "tensor.pin_memory()) with non_blocking=True so the copy "
		       "overlaps compute";
	case F_LAUNCH:
		if (run->graphs)
			return "short gaps between kernels although the run uses CUDA "
			       "graphs: capture more of the step in one graph (the "
			       "gaps are outside or between replays)";
		if (run->triton)
			return "short gaps between launches of compiled kernels: "
			       "mode=\"reduce-overhead\" (CUDA graphs) or larger "
			       "batches";
		return "launch fewer, larger kernels: CUDA graphs or torch.compile "
		       "(mode=\"reduce-overhead\"), larger batches";
	case F_COMM:
		return "overlap communication with compute (bucketed DDP/FSDP, "
		       "fewer collectives), or check the network";
	case F_SMALL:
		if (run->graphs && run->triton)
			return "many tiny kernels, already compiled and replayed as "
			       "CUDA graphs: more work a kernel (larger batches, "
			       "several tokens or samples a call)";
		if (run->graphs)
			return "many tiny kernels, already replayed as CUDA graphs: "
			       "fuse them (torch.compile) or batch the work";
		return run->triton ?
		       "many tiny kernels even with compiled (Triton) code: larger "
		       "batches, or CUDA graphs to hide their launches" :
		       "fuse small kernels (torch.compile) or batch the work";
	case F_ALIGN:
		return "pad the GEMM dimensions to a multiple of 8 (16 for fp8) "
		       "so aligned kernels are chosen; the cost is an estimate: "
		       "40 % of the kernel time, the least padding saved in GEMMs "
		       "measured on an H200";
	case F_WAIT_PEER:
		return "this rank waits in collectives for a late peer: fix the "
		       "late rank's own cause (named here), not the network";
	case F_MEM_GROWTH:
		return "memory allocated here every step is never freed: drop the "
		       "references it keeps (a list of tensors, a loss kept for "
		       "logging: keep .item() or .detach().cpu() instead)";
	case F_MEM_PEAK:
		return ta_advice_peak(0);
	case F_LOW_EFF:
		return low_efficiency(where);
	case F_COPY:
		/* already pinned (and async): what it lacked was work to run
		 * under it, not a better copy (streams_pinned was told to do
		 * what it did) */
		if (strstr(where, "HtoD") && strstr(where, "Pinned"))
			return "copies to the GPU from pinned memory with nothing "
			       "running under them: the copy is as it should be, the "
			       "GPU had nothing else queued (where the host was behind, "
			       "the step's host findings say why); copied a step ahead "
			       "on a side stream, if the run does not yet, it hides "
			       "under compute";
		if (strstr(where, "HtoD"))
			return "copies to the GPU with nothing running under them: "
			       "issue them earlier, from pinned memory with "
			       "non_blocking=True (the next batch copied on a side "
			       "stream while this one computes), so that they overlap "
			       "compute";
		if (strstr(where, "DtoH"))
			return "copies back to the host with nothing running under "
			       "them: fewer of them, or later and batched (.cpu(), "
			       ".item(), .tolist() of GPU tensors), or overlapped with "
			       "the next step's compute";
		if (strstr(where, "DtoD"))
			return "copies on the GPU with nothing running under them "
			       "(.contiguous(), torch.cat, clones, copies into a CUDA "
			       "graph's static inputs): fewer of them, or written in "
			       "place";
		return "memory operations with nothing running under them: fewer of "
		       "them, or overlapped with compute";
	case F_QUEUED:
		if (strcmp(where, TA_QUEUED_INSIDE) == 0)
			return "the GPU idled between the kernels of one launch, all "
			       "queued: a node of the graph waiting on an event of "
			       "work outside it, or kernels the profiler did not "
			       "record inside the replay (not the host: it had "
			       "launched the whole replay); critical-path shows what "
			       "the path waited on";
		return run->graphs ?
		       "the GPU idled with its next work queued (the launch had "
		       "returned: the host was not late): a stream waiting on an "
		       "event of work on another stream or another process "
		       "(cudaStreamWaitEvent, wait_stream), a graph's replay that "
		       "starts late, or work the profiler did not record; "
		       "critical-path shows what the path waited on" :
		       "the GPU idled with its next work queued (the launch had "
		       "returned: the host was not late): a stream waiting on an "
		       "event of work on another stream or another process "
		       "(cudaStreamWaitEvent, wait_stream), or work the profiler "
		       "did not record; critical-path shows what the path waited on";
	default:
		return "";
	}
}

void ta_beside_add(struct ta_beside *s, int64_t rank, int64_t name, int64_t dur,
		   int64_t over)
{
	size_t i;

	/* a rank's kernels come together: its few names are near the end */
	for (i = s->n; i > 0 && s->v[i - 1].rank == rank; i--)
		if (s->v[i - 1].name == name) {
			s->v[i - 1].dur += (double)dur;
			s->v[i - 1].over += (double)over;
			return;
		}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = ta_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = (struct ta_beside_kernel){ rank, name, (double)dur, (double)over };
}

double ta_beside_share(const struct ta_beside *s, int64_t rank, int64_t name)
{
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (s->v[i].rank == rank && s->v[i].name == name)
			return s->v[i].dur > 0 ? s->v[i].over / s->v[i].dur : 0;
	return 0;
}
