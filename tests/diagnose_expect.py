#!/usr/bin/env python3
"""diagnose on the five captures whose cause was set when capturing them
(tools/capture/capture.py; profiler-off measurements in testdata/oracle/):
the verdict and the top findings must name that cause."""
import csv
import io
import json
import subprocess
import sys


def run(case, *extra):
    out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--format", "csv", *extra, "testdata/" + case],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def findings(case):
    return run(case, "--findings")


checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


v = run("train_healthy")
check("healthy training step is compute-bound", v and all(r["verdict"] == "compute-bound" for r in v))
v = run("train_stalled")
check("stalled step is host-stalled on data_loading (15 ms sleep)",
      all(r["verdict"] == "host-stalled" and r["main_cause"] == "host_region: data_loading"
          and float(r["cause_us"]) > 15000 for r in v))
f = findings("train_stalled")
check("stalled: .item() shows as a sync in aten::_local_scalar_dense, at its call site",
      any(r["kind"] == "sync" and r["where"].startswith("aten::_local_scalar_dense at capture.py(")
          for r in f))
check("stalled: data loading advice is about DataLoader workers",
      any(r["where"] == "data_loading" and "num_workers" in r["advice"] for r in f))
check("stalled: Python dispatch holes get dispatch advice, not data loading advice",
      all("DataLoader" not in r["advice"] for r in f
          if r["kind"] == "host_region" and r["where"].startswith("<built-in")))
check("stalled: the pageable copies are found",
      any(r["kind"] == "pageable_copy" for r in f))
check("stalled: data_loading is the costliest finding of each step",
      f and all(max((x for x in f if x["step"] == s), key=lambda x: float(x["cost_us"]))["where"] == "data_loading"
          for s in {r["step"] for r in f}))
eager = run("decode_eager")
check("batch-1 eager decode is launch-bound", all(r["verdict"] == "launch-bound" for r in eager))
check("eager decode: small kernels found", any(r["kind"] == "small_kernels" for r in findings("decode_eager")))
graph = run("decode_graph")
check("CUDA graphs cut the launch loss tenfold and the GPU is busy >= 60%",
      all(float(g["cause_us"]) * 10 < float(e["cause_us"]) and float(g["gpu_busy_pct"]) >= 60
          for g, e in zip(graph, eager)))
gf = findings("decode_graph")
check("decode under CUDA graphs is not told to use CUDA graphs",
      gf and all("CUDA graphs or torch.compile" not in r["advice"] for r in gf)
      and any("already" in r["advice"] or "although" in r["advice"] for r in gf))
check("eager decode is told to use CUDA graphs",
      any("CUDA graphs or torch.compile" in r["advice"] for r in findings("decode_eager")))

# the real capture of a host spinning on Event.query() (capture.py spin):
# the spin is a sync, though no blocking call was made, but it costs the
# hole only what the host waited in it (without it, python_work would have
# run that much earlier, under the GPU's work): the rest is python_work's
v = run("spin")
check("spin: each step's main cause is python_work, the Python after the spin",
      v and all(r["main_cause"] == "host_region: python_work" for r in v))
f = findings("spin")
spun = sum(float(r["cost_us"]) for r in f if r["kind"] == "sync")
ann = subprocess.run(["./traceanalyze", "annotations", "-q", "--format", "csv", "testdata/spin"],
                     capture_output=True, text=True).stdout
waited = sum(float(r["total_us"]) for r in csv.DictReader(io.StringIO(ann))
             if r["name"] == "wait_for_gpu")
check("spin: its sync finding %.1f us is spun, at most the wait_for_gpu ranges' %.1f us"
      " of 3 steps (kept: 2)" % (spun, waited), f and 0 < spun <= waited)
measured = json.load(open("testdata/oracle/spin.measured.json"))["expected_idle_share"]
idle = sum(float(r["step_us"]) * (1 - float(r["gpu_busy_pct"]) / 100) for r in v) / sum(float(r["step_us"]) for r in v)
check("spin: idle share %.3f within 0.1 of the profiler-off %.3f" % (idle, measured), abs(idle - measured) < 0.1)

v = run("copies")
check("copies: copy-bound, main cause the pageable copy",
      all(r["verdict"] == "copy-bound" and r["main_cause"].startswith("pageable_copy") for r in v))
check("gate on a verdict trips", subprocess.run(
    ["./traceanalyze", "diagnose", "-q", "testdata/train_stalled", "--fail-if", 'verdict == "host-stalled"'],
    capture_output=True).returncode == 1)

# one window: temporal's span is the sum of diagnose's step windows, and
# its idle the sum of their idle (gpu_busy_pct is rounded to 0.01 %)
for case in ("train_healthy", "train_stalled", "decode_eager", "decode_graph", "copies", "two_ranks", "autocast", "multistream"):
    out = subprocess.run(["./traceanalyze", "temporal", "-q", "--format", "csv", "testdata/" + case],
                         capture_output=True, text=True, check=True).stdout
    temporal = {r["rank"]: r for r in csv.DictReader(io.StringIO(out))}
    steps = run(case)
    for rank, t in temporal.items():
        mine = [r for r in steps if r["rank"] == rank]
        span = sum(float(r["step_us"]) for r in mine)
        idle = sum(float(r["step_us"]) * (1 - float(r["gpu_busy_pct"]) / 100) for r in mine)
        check("%s rank %s: temporal's window is diagnose's steps (%.3f vs %.3f us)" % (case, rank, float(t["window_us"]), span),
              abs(float(t["window_us"]) - span) <= 0.002 * len(mine))
        check("%s rank %s: temporal's idle is diagnose's (%.3f vs %.3f us)" % (case, rank, float(t["idle_us"]), idle),
              abs(float(t["idle_us"]) - idle) <= 0.0001 * span + 0.01)

# the real capture of the same (tools/capture/capture.py multistream):
# streams joined by cudaStreamWaitEvent, a slow Python host, no blocking call
f = findings("multistream")
check("multistream: no sync where the host only waited on Python",
      f and not any(r["kind"] == "sync" for r in f))
ms = run("multistream")
check("multistream: the holes are python_work",
      ms and all(r["main_cause"] == "host_region: python_work" for r in ms))

# kernels --by type measures the same window as temporal: its labels
# split the busy time, those with COMPUTATION the compute time
for case in ("train_healthy", "train_stalled", "copies", "two_ranks", "autocast", "multistream"):
    def table(*args):
        out = subprocess.run(["./traceanalyze", *args, "-q", "--format", "csv", "testdata/" + case],
                             capture_output=True, text=True, check=True).stdout
        return list(csv.DictReader(io.StringIO(out)))
    t = table("temporal")
    busy = sum(float(r["window_us"]) - float(r["idle_us"]) for r in t)
    comp = sum(float(r["compute_us"]) for r in t)
    k = table("kernels", "--by", "type")
    check("%s: kernels --by type splits temporal's busy time" % case,
          abs(sum(float(r["total_us"]) for r in k) - busy) <= 0.01 * len(k) + 0.01)
    check("%s: its COMPUTATION labels are temporal's compute time" % case,
          abs(sum(float(r["total_us"]) for r in k if "COMPUTATION" in r["kernel_type"]) - comp) <= 0.01 * len(k) + 0.01)

# a stream waiting on an event is no host sync: the hole is host time
import json
import os
import tempfile
K = {"ph": "X", "cat": "kernel", "pid": 0, "tid": 7, "dur": 10}
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1,
       "ts": 1000 * i, "dur": 1000} for i in (1, 2)]
for i in (1, 2):
    t = 1000 * i
    ev += [dict(K, name="k", ts=t + 100, args={"stream": 7, "correlation": 10 * i}),
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": t + 90, "dur": 5, "args": {"correlation": 10 * i}},
           {"ph": "X", "cat": "cpu_op", "name": "wait_op", "pid": 1, "tid": 1, "ts": t + 115, "dur": 480},
           {"ph": "X", "cat": "python_function", "pid": 1, "tid": 1, "ts": t + 112, "dur": 486,
            "name": "<built-in method wait of Event object at 0x7f3cb353e1%02x>" % i},
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1,
            "ts": t + 120, "dur": 470, "args": {"correlation": 10 * i + 1}},
           dict(K, name="k", ts=t + 600, args={"stream": 7, "correlation": 10 * i + 2}),
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": t + 595, "dur": 4, "args": {"correlation": 10 * i + 2}}]
d = tempfile.mkdtemp()
path = os.path.join(d, "rank-0.json")
json.dump({"distributedInfo": {"rank": 0}, "traceEvents": ev}, open(path, "w"))
out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--no-cache", "--format", "csv", "--findings", path],
                     capture_output=True, text=True, check=True).stdout
f = list(csv.DictReader(io.StringIO(out)))
check("cudaStreamWaitEvent is no sync: the hole is a host_region",
      f and not any(r["kind"] == "sync" for r in f) and any(r["kind"] == "host_region" for r in f))
check("findings name no object address, so they match across runs",
      any(r["where"] == "<built-in method wait of Event object>" for r in f)
      and not any("0x" in r["where"] for r in f))

# a misaligned GEMM is costed at its estimated saving (40 % of its time,
# the least padding saved in measured H200 GEMMs), not its whole time
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1,
       "ts": 10000 * i, "dur": 10000} for i in (1, 2)]
for i in (1, 2):
    t = 10000 * i
    ev += [dict(K, name="void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1>",
                ts=t + 100, dur=9000, args={"stream": 7, "correlation": 10 * i}),
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": t + 90, "dur": 5, "args": {"correlation": 10 * i}},
           {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t + 80, "dur": 20,
            "args": {"Input Dims": [[4096, 4095], [4095, 4095]]}}]
json.dump({"distributedInfo": {"rank": 0}, "traceEvents": ev}, open(path, "w"))
out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--no-cache", "--format", "csv", "--findings", path],
                     capture_output=True, text=True, check=True).stdout
f = [r for r in csv.DictReader(io.StringIO(out)) if r["kind"] == "misaligned_gemm"]
check("misaligned GEMM: costed at 40 %% of 9 ms, per step (%s)" % [r["cost_us"] for r in f],
      len(f) == 1 and abs(float(f[0]["cost_us"]) - 3600) < 1 and "estimate" in f[0]["advice"]
      and f[0]["where"].startswith("aten::mm [[4096, 4095]"))

# the critical path's second opinion: it holds a fair share of what each
# planted cause's verdict blames
for case, least in (("train_healthy", 90), ("train_stalled", 25), ("decode_eager", 90), ("copies", 25),
                    ("spin", 50)):
    for r in run(case):
        check("%s step %s: %s confirmed by the path (%s %% of it)" % (case, r["step"], r["verdict"],
                                                                     r["verdict_path_pct"]),
              float(r["verdict_path_pct"]) >= least)
for r in run("ddp_straggler"):
    if r["verdict"] == "waiting-for-peer":
        # the path runs on the late peer's work, counted as what it is
        # there (its CPU): on_peers, which waiting-for-peer blames
        check("ddp_straggler rank %s step %s: the path is on the late peer (%s %%)" % (
              r["rank"], r["step"], r["verdict_path_pct"]), float(r["verdict_path_pct"]) > 90)
check("ddp_straggler: rank 0 waits for rank 1 in every step, the first included (%s)" % [
      (r["step"], r["verdict"]) for r in run("ddp_straggler") if r["rank"] == "0"],
      all(r["verdict"] == "waiting-for-peer" and r["main_cause"].startswith("wait_for_peer: rank 1")
          for r in run("ddp_straggler") if r["rank"] == "0"))
# the stalled step's path is mostly kernels (the GPU was busy 65 %), the
# verdict blames the data step: the text says both
out = subprocess.run(["./traceanalyze", "diagnose", "-q", "testdata/train_stalled"], capture_output=True,
                     text=True, check=True).stdout
check("text names the steps where the path disagrees",
      "Where the critical path disagrees" in out and "rank 0 step 2: host-stalled, but 35 %" in out)
# advice that fits: a user's pure-Python stall is not told CUDA graphs; a
# trace profiled with_stack is not told to use with_stack
f = findings("gpt2_stalled")
tok = [r for r in f if r["where"].endswith("fake_tokenize")]
check("gpt2_stalled: fake_tokenize is not told CUDA graphs or compile (%s)" % [r["advice"][:50] for r in tok],
      all("CUDA graphs" not in r["advice"] and "compile" not in r["advice"] for r in tok))
# waits inside a frame far longer than they are: named "within" it (they
# were "(no annotation)"), told neither with_stack=True (the trace has
# stacks) nor that the frame "launched nothing" (it is a model's forward)
na = [r for r in f if r["where"].startswith("within ")]
check("gpt2_stalled (with_stack: 1): waits inside long frames named 'within' them, not told with_stack=True (%d)" % len(na),
      na and not [r for r in f if r["where"] == "(no annotation)"] and
      all("with_stack=True" not in r["advice"] and "launched nothing" not in r["advice"] for r in na))
# helper-46's review of "within": tb_gloo's bucket all-reduce runs on
# gloo's worker thread, which copies but launches no kernel, beside holes
# on the autograd thread: not named after it
f = findings("tb_gloo")
check("tb_gloo: no hole named within gloo's worker thread's all-reduce (%d)" %
      len([r for r in f if r["where"].startswith("within gloo:")]),
      f and not [r for r in f if r["where"].startswith("within gloo:")])
# a wait within DDP's forward (the whole model's) is the model's dispatch,
# not DDP's sync (ddp_straggler's rank 1 is itself the late one)
w = [r for r in findings("ddp_straggler") if r["where"] == "within DistributedDataParallel.forward"]
check("ddp_straggler: within DDP's forward told dispatch, not DDP's sync (%d)" % len(w),
      w and all("dispatch" in r["advice"] and "broadcast_buffers" not in r["advice"] for r in w))
# a frame around every step (the capture's main, its profiled loop) names
# no step's hole; batch norm is no batch of data
f = findings("cnn_stack") + findings("mem_leak") + findings("train_stalled")
wide = [r["where"] for r in f if r["where"].startswith("within ") and
        any(x in r["where"] for x in ("): main", "): scenario", "): run_profiled", "): profiled"))]
check("no hole named within a frame around every step (%s)" % wide[:3], f and not wide)
bn = [r for r in f if "batch" in r["where"].lower() and "norm" in r["where"].lower()]
check("cnn_stack: batch norm is not told DataLoader workers (%d)" % len(bn),
      bn and all("DataLoader" not in r["advice"] and "num_workers" not in r["advice"] for r in bn))
# fsdp2: 6.2 ms of rank 0's holes lie inside its "forward" and "backward"
# ranges, 20-50x longer than each hole: named so, not left unnamed
f2 = [r for r in findings("fsdp2") if r["rank"] == "0" and r["step"] == "2" and r["kind"] == "host_region"]
big = max(f2, key=lambda r: float(r["cost_us"])) if f2 else None
check("fsdp2: the largest host_region is inside a named range (%s)" % (big and big["where"]),
      big and big["where"] in ("within forward", "within backward") and
      "far longer than the waits" in big["advice"])
na = [r for r in findings("resnet_train") if r["where"] == "(no annotation)"]
check("resnet_train (no with_stack): '(no annotation)' is told with_stack=True (%d)" % len(na),
      na and all("with_stack=True" in r["advice"] for r in na))
# resnet_train's holes during the backward, which autograd's thread runs
# while the main thread blocks: named as the backward's ops and told what
# holds them (with_stack would record no frame there: they have no
# Python); the forward's holes stay unnamed; naming moves no time
f = findings("resnet_train")
bw = [r for r in f if r["where"] == "(backward ops, autograd's engine)"]
check("resnet_train: the backward's holes are named so (%d, %.0f us), told about autograd's engine"
      % (len(bw), sum(float(r["cost_us"]) for r in bw)),
      len(bw) == 3 and all("autograd's engine" in r["advice"] and "with_stack" not in r["advice"]
                           and float(r["cost_us"]) > 4000 for r in bw))
v = run("resnet_train")
check("resnet_train: each step's main cause is the backward's ops (%s)" % [r["main_cause"] for r in v],
      v and all(r["main_cause"] == "host_region: (backward ops, autograd's engine)" for r in v))
# GradScaler.step's .item() on found_inf (cnn_stack: fp16 with a
# GradScaler, SGD not fused) is the scaler's, not the user's call site's:
# told the fused optimizer that takes the check without a sync, not
# "drop the synchronisation at this call site"
sy = [r for r in findings("cnn_stack") if r["kind"] == "sync"]
check("cnn_stack: GradScaler's sync named and told fused=True (%s)" % [(r["where"][:40], r["advice"][:40]) for r in sy],
      sy and all(r["where"].startswith("GradScaler.step's inf check") and "fused=True" in r["advice"]
                 and "drop the synchronisation" not in r["advice"] for r in sy))
sy = [r for r in findings("gpt2_sync") if r["kind"] == "sync"]
check("gpt2_sync: a user's .item() (no GradScaler) is still told to drop it (%d)" % len(sy),
      sy and all("drop the synchronisation" in r["advice"] and "GradScaler" not in r["where"] for r in sy))
# NCCL's watchdog thread polls its collectives' events (cudaEventQuery in
# a loop) and launches nothing: its polling held no GPU work (fsdp2 rank
# 0 step 2 read "spin on GPU queries in forward", 152 us); a spin on the
# launching thread still counts (spin)
sp = [r for r in findings("fsdp2") if r["kind"] == "sync"]
check("fsdp2: no sync blamed on NCCL's polling thread (%s)" % [r["where"][:40] for r in sp], not sp)
sp = [r for r in findings("spin") if r["kind"] == "sync" and r["where"].startswith("spin on GPU queries")]
check("spin: the main thread's spin is still a sync (%d)" % len(sp), sp)
# grad_hooks (helper-59): 14 gradient hooks a backward, each spinning
# 0.4 ms inside record_function("grad_hook"), two backwards a step; the
# GPU idles through them, two back to back in most holes, neither over
# half of the hole: diagnose named only the holes one hook filled (5.9 ms
# of 11.4 measured, the rest "(backward ops, ...)"). Against the hooks'
# time profiler off, and critical-path's grad_hook
m = json.load(open("testdata/oracle/grad_hooks.measured.json"))["hooks_ms_per_step"] * 1000
gh = {r["step"]: float(r["cost_us"]) for r in findings("grad_hooks") if r["where"] == "grad_hook"}
out = subprocess.run(["./traceanalyze", "critical-path", "-q", "--top", "5", "--format", "csv",
                      "testdata/grad_hooks"], capture_output=True, text=True, check=True).stdout
cp = {r["step"]: float(r["path_us"]) for r in csv.DictReader(io.StringIO(out)) if r["name"] == "grad_hook"}
check("grad_hooks: each step's grad_hook cost is the hooks' time profiler off, %.0f us (%s), as"
      " critical-path says (%s)" % (m, sorted(gh.items()), sorted(cp.items())),
      len(gh) == 4 and set(gh) == set(cp) and
      all(abs(v - m) < 0.15 * m and abs(v - cp[k]) < 0.15 * cp[k] for k, v in gh.items()))
v = run("train_stalled", "--no-path")
check("--no-path leaves the path's columns empty", v and all(r["path_bound"] == "" and r["verdict_path_pct"] == ""
                                                           for r in v))

# A DataLoader whose 2 workers cannot keep up (profiler off: 31.4 of 34.8 ms
# a step waiting in next()): every step host-stalled by the loader's
# iterator, most of the steps' time its cost, and the advice for a run
# that already has workers
m = json.load(open("testdata/oracle/loader_starved.measured.json"))
v = run("loader_starved")
f = [x for x in findings("loader_starved") if "DataLoaderIter" in x["where"]]
wait = sum(float(x["cost_us"]) for x in f)
total = sum(float(r["step_us"]) for r in v)
check("loader_starved: every step host-stalled by the DataLoader",
      v and all(r["verdict"] == "host-stalled" and "DataLoader" in r["main_cause"] for r in v))
check("loader_starved: the loader's cost %.0f %% of the steps (profiler off: %.0f %%)" % (
      100 * wait / total, 100 * m["data_wait_us"] / m["step_wall_us"]),
      wait >= 0.7 * total)
check("loader_starved: the advice knows the workers run", f and all("workers run" in x["advice"] for x in f))

# tb_gloo: rank 1 sleeps 20 ms a step and rank 0 waits in gloo:all_reduce;
# the rank that waits is not told to make the collective cheaper
g = [x for x in findings("tb_gloo") if x["kind"] == "host_region" and x["where"] == "gloo:all_reduce"]
check("tb_gloo: a CPU collective's finding says the ranks wait in it (%d)" % len(g),
      g and all("slowest rank" in x["advice"] and "make it cheaper" not in x["advice"] for x in g))

# HTA's TorchRec trace: "## sparse_data_dist ##" is the sparse features'
# all-to-all, not a data loader (the word "data" sent it to DataLoader advice)
import os
nq = os.path.join(os.environ.get("SHARED", "../shared"), "testdata/hta/negative_queue_length_values_check")
if os.path.isdir(nq):
    out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--findings", "--format", "csv", nq],
                         capture_output=True, text=True, check=True).stdout
    f = list(csv.DictReader(io.StringIO(out)))
    d = [x for x in f if x["kind"] == "host_region" and ("sparse_data_dist" in x["where"]
                                                          or "all2all_data" in x["where"])]
    check("TorchRec's sparse_data_dist, all2all_data: all-to-all advice, not DataLoader's (%d)" % len(d),
          d and all("all-to-all" in x["advice"] and "DataLoader" not in x["advice"] for x in d))
    # the GPU runs 155 ms behind the host and idles with work queued (a
    # CUDA graph launched 66 ms before it runs): not the host's loss
    out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--format", "csv", nq],
                         capture_output=True, text=True, check=True).stdout
    v = list(csv.DictReader(io.StringIO(out)))
    check("TorchRec: the GPU idle with work queued is queued-idle, as the path's gaps say (%s)" % (
          [(x["verdict"], x["path_bound"]) for x in v]),
          v and all(x["verdict"] == "queued-idle" and x["path_bound"] == "gap" for x in v))
    # copy-bound on pinned and device copies, not on its 25 us pageable one
    out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--format", "csv",
                          os.path.join(os.path.dirname(nq), "trace_diff_test")],
                         capture_output=True, text=True, check=True).stdout
    v = [x for x in csv.DictReader(io.StringIO(out)) if x["verdict"] == "copy-bound"]
    check("trace_diff_test: copy-bound for exposed copies, not a 25 us pageable one (%s)" % (
          [x["main_cause"] for x in v]),
          v and all(x["main_cause"].startswith("exposed_copy: Memcpy") for x in v))
    c = [x for x in f if x["where"] == "## copy_batch_to_gpu ##"]
    check("TorchRec's copy_batch_to_gpu: a copy's advice, not DataLoader's (%d)" % len(c),
          c and all("non_blocking" in x["advice"] and "DataLoader" not in x["advice"] for x in c))
    # named for its data but an all-to-all (TorchRec's), and an optimizer
    # no flag fuses (Shampoo): neither told what does not apply
    for trace, where, said, unsaid in (
            ("trace_diff_test", "## all2all_id_list_score_data:init ##", "all-to-all", "DataLoader"),
            ("trace_filter", "Optimizer.step#Shampoo.step", "compile its step", "fused=True ("),
            # helper-46: its "## optimizer ##" holds Shampoo's step too; the
            # TorchRec trace runs TrainPipelineSparseDist already
            ("trace_filter", "within ## optimizer ##", "compile its step", "fused=True ("),
            ("negative_queue_length_values_check", "within ## sparse_data_dist ##",
             "although the pipeline overlaps", "TrainPipelineSparseDist"),
            ("negative_queue_length_values_check", "## copy_batch_to_gpu ##",
             "non_blocking", "TrainPipelineSparseDist")):
        out = subprocess.run(["./traceanalyze", "diagnose", "-q", "--findings", "--format", "csv",
                              os.path.join(os.path.dirname(nq), trace)],
                             capture_output=True, text=True, check=True).stdout
        d = [x for x in csv.DictReader(io.StringIO(out)) if x["kind"] == "host_region" and x["where"] == where]
        check("%s: %s told '%s', not '%s' (%d)" % (trace, where, said, unsaid, len(d)),
              d and all(said in x["advice"] and unsaid not in x["advice"] for x in d))
elif os.environ.get("TA_REQUIRE_SHARED"):
    check("../shared present (CI always has it)", False)

import tempfile


# Traces made here: ProfilerStep#1..n of 10 ms on the host thread, GPU
# work on stream 7 and the runtime calls that launched it
def host_steps(n):
    return [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k + 1), "pid": 100,
             "tid": 100, "ts": 10000 * k, "dur": 10000, "args": {}} for k in range(n)]


def gpu(ev, corr, start, dur, name="gemm", cat="kernel"):
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": start, "dur": dur,
               "args": {"device": 0, "stream": 7, "correlation": corr}})


def call(ev, corr, ts, dur, api="cudaLaunchKernel"):
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": 100, "tid": 100,
               "ts": ts, "dur": dur, "args": {"correlation": corr}})


def written(ev):
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "rank-0.json"), "w") as fh:
        json.dump({"traceEvents": ev}, fh)
    return d


def csv_of(d, *cmd):
    out = subprocess.run(["./traceanalyze", *cmd, "-q", "--no-cache", "--format", "csv", d],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


# A step with no GPU work while the GPU still runs the step before's: its
# window is empty (windows are contiguous). It lost nothing: not
# host-stalled with a cause of 0, no share of a window, no path part; overview
# keeps its row, so the average step is the steps' time over their count.
ev = host_steps(4)
for corr, launch, start, dur in ((1, 1000, 1010, 24000), (3, 21000, 25500, 3000), (4, 31000, 31010, 1000)):
    gpu(ev, corr, start, dur)
    call(ev, corr, launch, 2)
d = written(ev)
v = {r["step"]: r for r in csv_of(d, "diagnose")}
e = v.get("2", {})
check("empty window: step 2 has 0 us, no busy share, the step before's verdict, no path part (%s)" % e,
      float(e.get("step_us", "1")) == 0 and e.get("gpu_busy_pct") == "" and e.get("verdict") == "compute-bound"
      and e.get("main_cause") == "under step 1's GPU work" and e.get("path_bound") == "")
o = csv_of(d, "overview")
check("empty window: overview keeps its row (%d rows)" % len(o), [r["step"] for r in o] == ["1", "2", "3"])
o = csv_of(d, "overview", "--summary")
check("empty window: overview's average step is 30 ms over 3 steps (%s)" % (o and o[0].get("step_us")),
      o and abs(float(o[0]["step_us"]) - 10000) < 0.01)
st = {r["step"]: r for r in csv_of(d, "stragglers")}
check("empty window: stragglers gives it no busy share either (%s)" % st.get("2"),
      st.get("2", {}).get("busy_pct", "x") == "")
text = subprocess.run(["./traceanalyze", "critical-path", "-q", "--no-cache", d],
                      capture_output=True, text=True, check=True).stdout
check("empty window: critical-path says it has no window, not 0 % on the CPU",
      "step 2: no window of its own" in text and "step 2: 0 %" not in text)

# Steps 2-4 launch nothing while step 1's 45 ms kernel runs: each is under
# step 1's work (not the empty step just before it); the report's headline
# counts step 1 alone
ev = host_steps(6)
for corr, launch, start, dur in ((1, 1000, 1010, 45000), (5, 41000, 46500, 1000), (6, 51000, 51010, 100)):
    gpu(ev, corr, start, dur)
    call(ev, corr, launch, 2)
d = written(ev)
v = {r["step"]: r for r in csv_of(d, "diagnose")}
check("empty windows in a row: each under step 1's work (%s)" % [v.get(k, {}).get("main_cause") for k in "234"],
      all(v.get(k, {}).get("main_cause") == "under step 1's GPU work" for k in "234"))
html = os.path.join(d, "r.html")
subprocess.run(["./traceanalyze", "report", "-q", "--no-cache", "--html", html, d], check=True)
page = open(html).read()
check("empty windows: the report's headline counts the steps with a window (compute-bound in 1 of 5)",
      "</span> in 1 of 5 steps" in page)

# A hole whose next work was queued (its launch call had returned before
# the GPU went idle) is not the host's: queued-idle. A hole under a copy
# call the host is still in (a pageable copy it stages) is the host's.
ev = host_steps(3)
for corr, api, at, call_dur, cat, start, dur in (
        (1, "cudaLaunchKernel", 500, 5, "kernel", 1000, 1000),
        (2, "cudaLaunchKernel", 600, 5, "kernel", 8000, 1500),           # queued 7 ms
        (3, "cudaLaunchKernel", 10500, 5, "kernel", 11000, 1000),
        (4, "cudaMemcpyAsync", 10600, 7000, "gpu_memcpy", 17600, 400),   # the host stages it
        (5, "cudaLaunchKernel", 21000, 5, "kernel", 21010, 100)):
    gpu(ev, corr, start, dur, "gemm" if cat == "kernel" else "Memcpy HtoD (Pageable -> Device)", cat)
    call(ev, corr, at, call_dur, api)
v = {r["step"]: r for r in csv_of(written(ev), "diagnose")}
check("queued work: step 1 is queued-idle for its 6 ms hole (%s)" % v.get("1"),
      v.get("1", {}).get("verdict") == "queued-idle" and abs(float(v["1"]["cause_us"]) - 6000) < 1)
check("a copy call the host is in: step 2 is host-stalled (%s)" % v.get("2"),
      v.get("2", {}).get("verdict") == "host-stalled")

# A gap between the kernels of one launch (a CUDA graph's replay: one
# correlation, many kernels) is named so, and told so
ev = host_steps(2)
call(ev, 9, 500, 10, "cudaGraphLaunch")
for start in (1000, 5000):
    gpu(ev, 9, start, 1000)
f = [x for x in csv_of(written(ev), "diagnose", "--findings") if x["kind"] == "queued_idle"]
check("a gap inside a graph's replay: 3 ms between the kernels of one launch (%s)" % f,
      len(f) == 1 and f[0]["where"].startswith("between the kernels of one launch")
      and abs(float(f[0]["cost_us"]) - 3000) < 1 and "graph" in f[0]["advice"])

# A collective queued mid-trace, no peer late: queued work like any, not
# "GPU work launched before the trace began" (helper-44)
ev = host_steps(2)
for corr, name, at, start, dur in ((1, "gemm", 500, 1000, 1000),
                                   (2, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 600, 8000, 1500)):
    gpu(ev, corr, start, dur, name)
    call(ev, corr, at, 5)
v = csv_of(written(ev), "diagnose")
check("a queued collective, no late peer: queued-idle, not unrecorded (%s)" % [
      (x["verdict"], x["main_cause"]) for x in v],
      v and v[0]["verdict"] == "queued-idle" and "before the trace" not in v[0]["main_cause"])

# A range on another thread over a host hole names it only where that
# thread launches kernels: cudaLaunchHostFunc queues a host function,
# not a kernel (helper-47's g20 case)
for api, named in (("cudaLaunchHostFunc", False), ("cudaLaunchKernel", True)):
    ev = host_steps(2)
    for k in range(2):
        s0 = 10000 * k
        for corr, at, start, dur in ((10 * k + 1, s0 + 100, s0 + 110, 3890),
                                     (10 * k + 2, s0 + 4200, s0 + 4210, 4790)):
            gpu(ev, corr, start, dur)
            call(ev, corr, at, 5)
        ev.append({"ph": "X", "cat": "user_annotation", "name": "## side ##", "pid": 100,
                   "tid": 200, "ts": s0 + 50, "dur": 8950, "args": {}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": api, "pid": 100, "tid": 200,
                   "ts": s0 + 60, "dur": 5, "args": {"correlation": 10 * k + 3}})
        if named:
            ev.append({"ph": "X", "cat": "kernel", "name": "tiny", "pid": 0, "tid": 8,
                       "ts": s0 + 70, "dur": 5,
                       "args": {"device": 0, "stream": 8, "correlation": 10 * k + 3}})
    f = [x["where"] for x in csv_of(written(ev), "diagnose", "--findings")
         if x["kind"] == "host_region"]
    check("a range over the hole on a thread calling only %s: %s (%s)" % (
          api, "named" if named else "not named", f),
          f and ("within ## side ##" in f) == named)

# a range a user named "(no annotation)" is that range, quoted: not taken
# for a hole with no range over it (its advice, the sync's "then ...")
import gzip
d = json.load(gzip.open("testdata/train_stalled/rank-0.pt.trace.json.gz"))
for e in d["traceEvents"]:
    if e.get("name") == "data_loading":
        e["name"] = "(no annotation)"
f = [x for x in csv_of(written(d["traceEvents"]), "diagnose", "--findings") if x["kind"] == "host_region"]
q = [x for x in f if x["where"] == '"(no annotation)"']
check("a range named (no annotation): quoted, with a range's advice (%s)" % [x["cost_us"] for x in q],
      q and all(float(x["cost_us"]) > 10000 and "no range" not in x["advice"] for x in q))

# infer_cpu_copy: the .cpu() is a sync at aten::copy_ (a gate on syncs
# passed), and its copy is named as what it is: into pageable memory
f = findings("infer_cpu_copy")
check("infer_cpu_copy: the .cpu() is a sync in aten::copy_",
      any(r["kind"] == "sync" and r["where"].startswith("aten::copy_") for r in f))
check("infer_cpu_copy: its pageable copy is the one from the GPU (%s)"
      % [r["where"] for r in f if r["kind"] == "pageable_copy"],
      all(r["where"] == "Memcpy DtoH (Device -> Pageable)" for r in f if r["kind"] == "pageable_copy"))

# a copy from pinned memory is not told to come from pinned memory
# (helper-52's overlapped side-stream copy was told to do what it did)
f = findings("copies")
pinned = [r for r in f if r["kind"] == "exposed_copy" and "Pinned" in r["where"]]
check("copies: a pinned copy's advice is not 'from pinned memory' (%s)" % [r["advice"][:50] for r in pinned],
      pinned and all("from pinned memory with non_blocking" not in r["advice"] for r in pinned))

# helper-60: GradScaler's sync is the thread's first after its unscale,
# in the step: a user's .item() after the scaler's is the user's (it read
# "GradScaler.step's inf check" and was told fused=True); a thread named
# by no number still has its syncs (they were dropped as a side thread's)
def scaler_case(tid, user_sync):
    def op(name, ts, dur):
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur, "args": {}}

    def rt(name, ts, dur, c):
        return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
                "args": {"correlation": c}}

    def k(name, ts, dur, c):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                "args": {"stream": 7, "correlation": c, "device": 0}}
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": tid, "ts": 0,
           "dur": 3000}, op("aten::linear", 0, 60), rt("cudaLaunchKernel", 10, 5, 101), k("k0", 20, 1200, 101),
          op("aten::_amp_foreach_non_finite_check_and_unscale_", 100, 20)]
    if user_sync:   # the scaler's own, short, then the user's
        ev += [op("aten::item", 130, 20), rt("cudaStreamSynchronize", 131, 18, 102)]
    ev += [op("aten::_local_scalar_dense", 200, 1100), rt("cudaStreamSynchronize", 201, 1098, 103),
           op("aten::_amp_update_scale_", 1400, 10), op("aten::add_", 2000, 30),
           rt("cudaLaunchKernel", 2010, 5, 104), k("k1", 2050, 940, 104)]
    return written(ev)


sy = [r for r in csv_of(scaler_case(1, True), "diagnose", "--findings") if r["kind"] == "sync"]
check("a user's sync after GradScaler's is the user's (%s)" % [r["where"] for r in sy],
      sy and all(not r["where"].startswith("GradScaler") for r in sy if float(r["cost_us"]) > 500))
sy = [r for r in csv_of(scaler_case(1, False), "diagnose", "--findings") if r["kind"] == "sync"]
check("the first sync after the unscale is GradScaler's (%s)" % [r["where"] for r in sy],
      sy and sy[0]["where"].startswith("GradScaler.step's inf check"))
sy = [r for r in csv_of(scaler_case("MainThread", False), "diagnose", "--findings") if r["kind"] == "sync"]
check("a thread named by no number keeps its sync (%s)" % [r["where"] for r in sy],
      sy and float(sy[0]["cost_us"]) > 500)

# compiled_cnn (helper-61: torch.compile of a channels_last bf16
# ResNet-18, host-bound; one forward and one backward call of the graph a
# step, a hundred launches each): holes inside a graph's call are its own
# launches, told mode="reduce-overhead", not "compile a larger region";
# the convolutions, already channels_last, get a checklist, not an order
f = findings("compiled_cnn")
inside = [r for r in f if r["where"].startswith("within ## Call CompiledFxGraph")]
check("compiled_cnn: holes inside a graph's call told reduce-overhead (%s)"
      % [(r["where"][:40], r["advice"][:50]) for r in inside],
      inside and all("reduce-overhead" in r["advice"] and "larger region" not in r["advice"] for r in inside))
conv = [r for r in f if r["kind"] == "low_efficiency" and "conv" in r["where"]]
check("compiled_cnn: the convolutions' advice is a checklist (%d)" % len(conv),
      conv and all("where the run has it" in r["advice"] for r in conv))

# a long stretch in which no op ran is no dispatch overhead (helper-61: a
# 20.8 ms wait on a future read as 61 short holes' worth of it): two_ranks'
# rank 1 sleeps 3 ms a step outside any range (tools/capture/capture_ranks.py)
idle = [r for r in findings("two_ranks") if r["where"] == "(no op ran)"]
check("two_ranks: rank 1's 3 ms sleep a step is a stretch where no op ran (%s)"
      % [(r["rank"], r["step"], r["cost_us"]) for r in idle],
      len(idle) == 2 and all(r["rank"] == "1" and abs(float(r["cost_us"]) - 3000) < 450 and
                             "time.sleep" in r["advice"] for r in idle))
check("resnet_train: dispatch holes, where ops run, are not stretches where none ran",
      not [r for r in findings("resnet_train") if r["where"] == "(no op ran)"])

# exposed communication, one quantity: diagnose's wait_for_peer and
# exposed_comm add up to overlap's exposed_us, rank by rank (the man page
# says so). The slowdown beside collectives was read against every GPU row
# here and the analysis window there: ddp_straggler rank 0 read 45.9 ms
# here, 56.0 ms in overlap (its GEMMs 994 us beside the all-reduce held by
# the late peer, 555 us in ddp_balanced: the window's reading is right)
for case in ("ddp_straggler", "ddp_balanced", "ddp_bucketed", "fsdp2"):
    ov = subprocess.run(["./traceanalyze", "overlap", "-q", "--format", "csv", "testdata/" + case],
                        capture_output=True, text=True).stdout
    ov = {r["rank"]: float(r["exposed_us"]) for r in csv.DictReader(io.StringIO(ov))}
    sm = subprocess.run(["./traceanalyze", "diagnose", "--findings", "--summary", "-q", "--format",
                         "csv", "testdata/" + case], capture_output=True, text=True).stdout
    got = {}
    for r in csv.DictReader(io.StringIO(sm)):
        if r["kind"] in ("wait_for_peer", "exposed_comm"):
            got[r["rank"]] = got.get(r["rank"], 0.0) + float(r["cost_us"])
    check("%s: diagnose's wait_for_peer + exposed_comm = overlap's exposed_us (%s, %s)" % (case, got, ov),
          ov and all(abs(got.get(k, 0.0) - v) < 0.01 for k, v in ov.items()))

# helper-64: the profiler's own frames were told CUDA graphs; a
# host-bound verdict, measured under the profiler (which slows the host,
# not the GPU), said nothing of it
prof = [r for r in findings("host_stall") if "profiler.py(" in r["where"] or
        "_record_function_enter" in r["where"]]
check("host_stall: the profiler's own frames are said to be the profiler's (%d)" % len(prof),
      prof and all(r["advice"].startswith("the profiler's own work") for r in prof))
out = subprocess.run(["./traceanalyze", "diagnose", "-q", "testdata/host_stall"],
                     capture_output=True, text=True).stdout
check("host_stall: a host-stalled verdict says the profiler slows the host",
      "host-stalled" in out and "measured with the profiler on" in out)
out = subprocess.run(["./traceanalyze", "diagnose", "-q", "testdata/train_healthy"],
                     capture_output=True, text=True).stdout
check("train_healthy: no such word where no step is host-bound",
      "measured with the profiler on" not in out)

# torch.cuda.empty_cache() in the loop: told not to call it, not graphs
# or compile (helper-65: its 0.8-1.1 ms a step got the dispatch advice)
ev = host_steps(3)
for k in range(3):
    t = 10000 * k
    call(ev, 10 * k + 1, t + 100, 20)
    gpu(ev, 10 * k + 1, t + 150, 1900)
    ev.append({"ph": "X", "cat": "python_function", "name": "<built-in function _cuda_emptyCache>",
               "pid": 100, "tid": 100, "ts": t + 2100, "dur": 3800, "args": {}})
    call(ev, 10 * k + 2, t + 6000, 20)
    gpu(ev, 10 * k + 2, t + 6050, 3000)
ec = [r for r in csv_of(written(ev), "diagnose", "--findings") if "_cuda_emptyCache" in r["where"]]
check("empty_cache in the loop: named, advice not to call it (%s)" % [r["advice"][:60] for r in ec],
      ec and all("do not call it in the loop" in r["advice"] for r in ec))

# helper-65's capture (tools/capture/capture_streams_ckpt.py, profiler off
# in testdata/oracle/graph_streams.measured.json): CUDA graphs replayed
# per batch bucket, inputs prepared on a side stream the main one waits
# for, a 0.59 ms spin kernel planted there (it is half of each step:
# removing it saves 0.43-0.56 ms, the planted host sync 0.06-0.09 ms)
gm = json.load(open("testdata/oracle/graph_streams.measured.json"))
p = subprocess.run(["./traceanalyze", "critical-path", "--top", "1", "-q", "--format", "csv",
                    "testdata/graph_streams"], capture_output=True, text=True)
top = list(csv.DictReader(io.StringIO(p.stdout)))
check("graph_streams: each step's path leads with the planted spin kernel, its %.3f ms (%s)" %
      (gm["gpu_ms_sleep"], [(r["name"][:40], r["path_us"]) for r in top]),
      len(top) == 4 and all("spin_kernel" in r["name"] and
                            abs(float(r["path_us"]) / 1e3 - gm["gpu_ms_sleep"]) < 0.05 for r in top))
p = subprocess.run(["./traceanalyze", "report", "--html", "-", "testdata/graph_streams"],
                   capture_output=True, text=True)
check("graph_streams: the page says the critical path disagrees with host-stalled",
      p.returncode == 0 and "its critical path disagrees in 4 of 4 steps" in p.stdout)

# two captures of a new user's (tools/capture/capture_newuser.py, profiler
# off in testdata/oracle): a user Triton LayerNorm with a planted 8 ms
# sleep, and a ViT whose pageable batch copy costs 3.1 ms alone
tm = findings("triton_mlp")
top = {}
for r in tm:
    if r["step"] == "":
        continue
    if r["step"] not in top or float(r["cost_us"]) > float(top[r["step"]]["cost_us"]):
        top[r["step"]] = r
check("triton_mlp: each step's costliest finding is the planted sleep (%s)" %
      [(k, v["where"]) for k, v in top.items()],
      len(top) == 2 and all(v["where"] == "<built-in function sleep>" for v in top.values()))
check("triton_mlp: the sleep's cost a step is at least what it costs profiler-off (4.2 ms) and "
      "at most the sleep (%s)" % [v["cost_us"] for v in top.values()],
      all(4000 <= float(v["cost_us"]) <= 8200 for v in top.values()))
peak = [r for r in tm if r["kind"] == "memory_peak"]
want = json.load(open("testdata/oracle/triton_mlp.measured.json"))["mem_peak_bytes"] / 2**20
check("triton_mlp: the memory peak is the allocator's, profiler off (%s, %.1f MiB)" %
      ([r["detail"][:12] for r in peak], want),
      peak and peak[0]["detail"].startswith("%.1f MiB" % want))
vi = findings("vit_item")
page = [r for r in vi if r["kind"] == "pageable_copy"]
check("vit_item: its pageable batch copy is a finding a step, 0.5-2x its 3.1 ms alone (%s)" %
      [r["cost_us"] for r in page],
      page and all(1550 <= float(r["cost_us"]) <= 6200 for r in page))
check("vit_item: the .item() that blocked 0.04 ms is no sync finding of 1 ms (%s)" %
      [(r["where"], r["cost_us"]) for r in vi if r["kind"] == "sync"],
      not [r for r in vi if r["kind"] == "sync" and float(r["cost_us"]) >= 1000])

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL diagnose:", n)
print(f"diagnose: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
