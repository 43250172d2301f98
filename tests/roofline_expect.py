#!/usr/bin/env python3
"""roofline against what was measured on the GPU that made each capture
(tools/capture/capture_roofline.py, testdata/oracle/roof_*.measured.json):
every op's FLOPs equal torch's FlopCounterMode over the same step (times
the profiled steps), attention's scaled by the causal mask's share (which
FlopCounterMode leaves out), checked against an independent formula here;
prefill's GEMMs compute-bound, decode's memory-bound; MFU of a GPU-bound
step within 10 % of FLOPs over the step's time with the profiler off;
per kernel and per op add up to the same work; a trace without shapes has
unknown FLOPs (empty), never 0."""
import csv
import gzip
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args):
    p = subprocess.run(["./traceanalyze", "roofline", "--format", "csv", *args],
                       capture_output=True, text=True)
    return p.returncode, list(csv.DictReader(io.StringIO(p.stdout))), p.stderr


def oracle(case):
    return json.load(open("testdata/oracle/%s.measured.json" % case))


def kept_steps(case):
    """roofline counts the calls of the kept steps, as every command does"""
    p = subprocess.run(["./traceanalyze", "steps", "-q", "--format", "csv", "testdata/" + case],
                       capture_output=True, text=True, check=True)
    return sum(r["kept"] == "1" for r in csv.DictReader(io.StringIO(p.stdout)))


def causal_share(sq, sk):
    pairs = sq * (sq + 1) / 2 if sq <= sk else sk * (sk + 1) / 2 + (sq - sk) * sk
    return pairs / (sq * sk)


def attention_full(op, shape):
    """FlopCounterMode's sdpa formulas, written again here."""
    dims = json.loads(shape)
    q, k, v = dims[1:4] if op.endswith("_backward") else dims[0:3]
    b, h, sq, d = q
    sk, dv = k[2], v[3]
    per = 3 * d + 2 * dv if op.endswith("_backward") else d + dv
    return 2 * b * h * sq * sk * per, sq, sk


def fc_key(op):
    return op.replace("aten::", "aten.")


for case in ("roof_prefill", "roof_decode", "roof_train", "roof_formulas", "roof_resnet"):
    m = oracle(case)
    n = kept_steps(case)
    rc, rows, err = run("--group-by", "shape", "testdata/" + case)
    check("%s: runs (rc %d) with rows" % (case, rc), rc == 0 and rows)
    ours, full = {}, {}
    shares_ok = True
    for r in rows:
        f = int(r["flops"])
        ours[r["op"]] = ours.get(r["op"], 0) + f
        if "attention" in r["op"]:
            want, sq, sk = attention_full(r["op"], r["shape"])
            ratio = f / (want * int(r["calls"]))
            shares_ok &= abs(ratio - 1) < 1e-9 or abs(ratio - causal_share(sq, sk)) < 1e-9
            full[r["op"]] = full.get(r["op"], 0) + want * int(r["calls"])
        else:
            full[r["op"]] = full.get(r["op"], 0) + f
    check("%s: attention rows are the full formula or its causal share" % case, shares_ok)
    for op, fc in m["flops_per_op"].items():
        got = full.get(op.replace("aten.", "aten::"), 0) / n
        check("%s: %s per step %d = FlopCounterMode's %d (0.1 %%)" % (case, op, got, fc),
              abs(got - fc) <= 1e-3 * fc)
    check("%s: no op counted that FlopCounterMode does not count" % case,
          all(fc_key(op) in m["flops_per_op"] for op in full))
    # per kernel: the same work and time
    _, kr, _ = run("--by", "kernel", "testdata/" + case)
    _, orow, _ = run("testdata/" + case)
    check("%s: per kernel the FLOPs add up to per op's" % case,
          abs(sum(int(r["flops"]) for r in kr) - sum(int(r["flops"]) for r in orow)) <= len(kr))
    check("%s: per kernel the GPU time adds up to per op's" % case,
          abs(sum(float(r["gpu_us"]) for r in kr) - sum(float(r["gpu_us"]) for r in orow)) < 0.01)
    check("%s: every peak_pct is in (0, 100]" % case,
          all(0 < float(r["peak_pct"]) <= 100 for r in orow))
    _, srow, _ = run("--by", "step", "testdata/" + case)
    check("%s: the steps' FLOPs add up to the ops'" % case,
          abs(sum(int(r["flops"]) for r in srow) - sum(int(r["flops"]) for r in orow)) <= len(srow))

# the roofline's verdicts on prefill and decode (issue #38's truth)
_, pre, _ = run("testdata/roof_prefill")
_, dec, _ = run("testdata/roof_decode")
check("prefill's GEMMs are compute-bound",
      all(r["bound"] == "compute" for r in pre if r["op"] in ("aten::addmm", "aten::mm")))
check("decode's GEMMs are memory-bound",
      all(r["bound"] == "memory" for r in dec if r["op"] in ("aten::addmm", "aten::mm")))

# MFU of the GPU-bound step against FLOPs over its profiler-off time
m = oracle("roof_train")
_, steps, _ = run("--by", "step", "testdata/roof_train")
check("roof_train: a row per kept step", len(steps) == 2)
for s in steps:
    truth = int(s["flops"]) / (m["step_wall_us"] * 1e-6) / 989.5e12 * 100
    check("roof_train step %s: MFU %.2f %% within 10 %% of %.2f %% (FLOPs / profiler-off step)"
          % (s["step"], float(s["mfu_pct"]), truth),
          abs(float(s["mfu_pct"]) - truth) <= 0.1 * truth)
    check("roof_train step %s: GPU-bound (busy %s %%)" % (s["step"], s["gpu_busy_pct"]),
          float(s["gpu_busy_pct"]) > 90)

# a CUDA graph's replay records no op: a row that says so, a gate trips
p = subprocess.run(["./traceanalyze", "roofline", "--format", "csv", "--fail-if", "peak_pct < 20",
                    "testdata/decode_graph"], capture_output=True, text=True)
check("CUDA graph: a row with no counted op, the gate trips on it (rc %d)" % p.returncode,
      "(no counted op)" in p.stdout and p.returncode == 1 and "CUDA graph" in p.stderr)
# TF32: fp32 data on the tensor cores is measured against the TF32 peak
_, rows, err = run("testdata/fsdp2")
check("fsdp2: fp32 GEMMs on tensor cores are tf32, under 100 %% of the roof",
      rows and all(r["dtype"] == "tf32" and float(r["peak_pct"]) <= 100 for r in rows) and
      "above 100" not in err)

# diff: prefill against decode, the GEMMs' kernels and bound changed
p = subprocess.run(["./traceanalyze", "diff", "testdata/roof_prefill", "testdata/roof_decode"],
                   capture_output=True, text=True)
line = [l for l in p.stdout.splitlines() if l.strip().startswith("aten::addmm (fp16)")]
check("diff prefill -> decode: addmm compute-bound -> memory-bound, its kernel changed",
      line and "compute-bound -> memory-bound" in line[0] and "its kernel" in line[0])
p = subprocess.run(["./traceanalyze", "diff", "testdata/roof_prefill", "testdata/roof_prefill"],
                   capture_output=True, text=True)
check("diff of a run with itself: no op efficiency changed", "Op efficiency" not in p.stdout)
# diagnose: low_efficiency where an op group is far below its roof, never on a run whose
# GEMMs reach 74 % (train_stalled, fp32 on the CUDA cores)
p = subprocess.run(["./traceanalyze", "diagnose", "--findings", "--format", "csv", "testdata/roof_prefill"],
                   capture_output=True, text=True)
check("diagnose: prefill's LM head GEMM (9 %% of its roof) is a low_efficiency finding",
      any(r["kind"] == "low_efficiency" and r["where"] == "aten::mm (fp16, compute-bound)"
          for r in csv.DictReader(io.StringIO(p.stdout))))
p = subprocess.run(["./traceanalyze", "diagnose", "--findings", "--format", "csv", "testdata/train_stalled"],
                   capture_output=True, text=True)
check("diagnose: no low_efficiency where GEMMs reach their roof",
      not any(r["kind"] == "low_efficiency" for r in csv.DictReader(io.StringIO(p.stdout))))

# low_efficiency names what the trace rules out (helper-41: every GEMM of
# ddp_straggler is a multiple of 64, yet rank 0 was told to pad its shapes;
# its GEMMs ran 79 % of their time beside all-reduces held by the late peer)
def low_eff(path, *extra):
    p = subprocess.run(["./traceanalyze", "diagnose", "--findings", "--format", "csv", *extra, path],
                       capture_output=True, text=True)
    return [r for r in csv.DictReader(io.StringIO(p.stdout)) if r["kind"] == "low_efficiency"]


f = low_eff("testdata/ddp_straggler")
check("diagnose: ddp_straggler's slow GEMMs are named beside communication, not told to pad",
      f and all(r["where"] == "aten::mm (tf32, compute-bound, beside communication)"
                and "pad" not in r["advice"] and "collectives" in r["advice"] for r in f))
f = low_eff("testdata/roof_prefill")
check("diagnose: prefill's LM head (a vocabulary of 50257) is still told to pad",
      any(r["where"] == "aten::mm (fp16, compute-bound)" and "50304" in r["advice"] for r in f))
with tempfile.TemporaryDirectory() as tmp:
    # the same rank with its collectives' kernels taken out: nothing ran
    # beside its GEMMs, whose shapes are all multiples of 64
    with gzip.open("testdata/ddp_straggler/rank-0.pt.trace.json.gz", "rt") as fh:
        t = json.load(fh)
    t["traceEvents"] = [e for e in t["traceEvents"]
                        if not (e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower())]
    with open(os.path.join(tmp, "rank-0.json"), "w") as fh:
        json.dump(t, fh)
    f = low_eff(os.path.join(tmp, "rank-0.json"), "--no-cache")
    check("diagnose: GEMMs far below the roof at shapes all multiples of 64: not told to pad",
          f and all(r["where"] == "aten::mm (tf32, compute-bound, aligned shapes)"
                    and "will not help" in r["advice"] for r in f))

# no shapes: unknown, never 0
with tempfile.TemporaryDirectory() as tmp:
    with gzip.open("testdata/roof_resnet/rank-0.pt.trace.json.gz", "rt") as f:
        t = json.load(f)
    for e in t["traceEvents"]:
        e.get("args", {}).pop("Input Dims", None)
    with open(os.path.join(tmp, "rank-0.json"), "w") as f:
        json.dump(t, f)
    rc, rows, err = run(tmp)
    check("no shapes: rows with empty FLOPs (%d rows)" % len(rows),
          rows and all(r["flops"] == "" and r["gpu_us"] != "" for r in rows))
    check("no shapes: said on stderr", "FLOPs are unknown" in err)
    rc, steps, err = run("--by", "step", tmp)
    check("no shapes: steps' FLOPs and MFU empty, busy known",
          steps and all(s["flops"] == "" and s["mfu_pct"] == "" and s["gpu_busy_pct"] for s in steps))

# an edited database: a correlation that is not an integer (text, or a
# real) matches no call, as one of -1 (none) does; each of those kernels
# was once read as correlation 0, so 20 launches took every one's time
with tempfile.TemporaryDirectory() as tmp:
    out = []
    for n, how in (("none", "-1"), ("text", "'x' || correlation"), ("real", "correlation + 0.5")):
        db = os.path.join(tmp, n + ".db")
        subprocess.run(["./traceanalyze", "ingest", "-q", "testdata/roof_train", "-o", db], check=True)
        with sqlite3.connect(db) as c:
            c.execute("UPDATE events SET correlation = %s WHERE role IN (1, 2) AND correlation IN"
                      " (SELECT correlation FROM events WHERE role = 1 AND correlation > 0"
                      " ORDER BY dur_ns DESC LIMIT 20)" % how)
        p = subprocess.run(["./traceanalyze", "roofline", "--format", "csv", db],
                           capture_output=True, text=True)
        out.append((p.returncode, p.stdout))
    check("edited database: text correlations match nothing (as -1)", out[1] == out[0] and out[0][1])
    check("edited database: real correlations match nothing (as -1)", out[2] == out[0])

# a counted op during which its thread launched nothing did no GPU work
# (helper-54: activation checkpointing's early stop cuts a recomputed
# addmm off before its launch; its shapes are recorded all the same, and
# read as a GEMM at 121 % of the roof): one mm a step that launches, one
# that does not; a third crossed by a launch's op (given to no op) counts
with tempfile.TemporaryDirectory() as tmp:
    ev, corr = [], [100]

    def X(cat, name, ts, dur, args=None, pid=1, tid=1):
        ev.append(dict(ph="X", cat=cat, name=name, pid=pid, tid=tid, ts=ts, dur=dur, args=args or {}))

    def mm(ts, n):
        X("cpu_op", "aten::mm", ts, 50, {"Input Dims": [[n, n], [n, n]], "Input type": ["float", "float"]})

    def kernel(ts):
        corr[0] += 1
        X("cuda_runtime", "cudaLaunchKernel", ts, 5, {"correlation": corr[0]})
        X("kernel", "ampere_sgemm_128x64_nn", ts + 10, 40, {"correlation": corr[0], "stream": 7}, 0, 7)

    for k in range(1, 5):
        t = k * 1000
        X("user_annotation", "ProfilerStep#%d" % k, t, 900)
        mm(t + 10, 1024)
        kernel(t + 20)
        mm(t + 200, 512)          # cut off: nothing launched
        mm(t + 400, 256)          # a launch inside an op that crosses its end
        X("cpu_op", "aten::resolve_conj", t + 410, 45)
        kernel(t + 420)
    with open(os.path.join(tmp, "rank-0.json"), "w") as f:
        json.dump({"traceEvents": ev}, f)
    rc, rows, err = run("--group-by", "shape", "--peak-tflops", "60", "--peak-gbps", "2000", tmp)
    shapes = {r["shape"]: int(r["calls"]) for r in rows or []}
    check("an mm that launched nothing is not counted (%s)" % shapes,
          "[[512, 512], [512, 512]]" not in shapes and shapes.get("[[1024, 1024], [1024, 1024]]") == 3)
    # its kernel given to no op, it has FLOPs and no time: left out of
    # the rows, as a call whose kernels a trace lost, and said
    check("an mm whose launch crossed its end: no row of FLOPs without time, said (%s; %s)"
          % (shapes, err.strip()[:200]),
          "[[256, 256], [256, 256]]" not in shapes and "3 of 6 calls launched no kernel" in err)

# HTA's sampled trace lost an fp32 addmm's GEMM kernel but kept the
# cudaMemsetAsync it launched: its 8.1 GFLOP over the memset's 3 us read
# 2708 TFLOP/s, named "Memset (Device)" (helper-63). A call that launched
# only copies or memsets has no kernel found: no time, no rate.
TF = "../shared/testdata/hta/trace_filter"
if os.path.isdir(TF):
    _, rows, _ = run("--group-by", "shape", "-q", TF)
    lost = [r for r in rows if r["op"] == "aten::addmm" and r["dtype"] == "fp32"
            and r["shape"].startswith("[[110], [2048, 18030]")]
    check("a call with only a memset found: left out of the rows (%s)" % [r.get("gpu_us") for r in lost],
          not lost)
    fast = [r for r in rows if r.get("tflops") and float(r["tflops"]) > 2000]
    check("no group above any GPU's peak (%s)" % [(r["op"], r["tflops"]) for r in fast], not fast)
    _, rows, _ = run("--by", "kernel", "-q", TF)
    memsets = [r for r in rows if "Memset" in r.get("kernel", "")]
    check("no FLOPs on a memset (%s)" % [r["flops"] for r in memsets],
          all(r["flops"] in ("0", "") for r in memsets))

# what the counted ops leave out is said: compiled_train's Triton kernels
# (46 % of its kernel time) went unsaid beside "the counted ops are 54 %"
# (helper-64)
out = subprocess.run(["./traceanalyze", "roofline", "-q", "testdata/compiled_train"],
                     capture_output=True, text=True).stdout
check("compiled_train: the sentence names the largest uncounted kernel, a Triton one",
      "the largest triton_" in out)

# a user's @triton.jit kernels carry no FLOP formula: the sentence says how
# much of the kernel time the counted ops are and names what is not
out = subprocess.run(["./traceanalyze", "roofline", "-q", "testdata/triton_mlp"],
                     capture_output=True, text=True).stdout
check("triton_mlp: the counted share is said with the largest of the rest",
      "the counted ops are" in out and "(the rest, no op with a FLOP formula: the largest" in out)
_, krows, _ = run("--by", "kernel", "-q", "testdata/triton_mlp")
check("triton_mlp: no FLOPs given to the Triton kernels (%s)" %
      [r["kernel"] for r in krows if r["kernel"].startswith("ln_")],
      not [r for r in krows if r["kernel"].startswith("ln_") and r["flops"] not in ("", "0")])

# kernels lost from a trace (gpt2_train, those of step 2 taken out): the
# calls that launched them keep their FLOPs and lose their time; counted,
# an addmm read 138 % of its roof and the warning blamed the peak
# (helper-66). They are left out of the rows, and said.
with tempfile.TemporaryDirectory() as tmp:
    src = sorted(f for f in os.listdir("testdata/gpt2_train") if ".json" in f)[0]
    d = json.load(gzip.open(os.path.join("testdata/gpt2_train", src), "rt"))
    steps = sorted((e for e in d["traceEvents"] if e.get("cat") == "user_annotation"
                    and str(e.get("name", "")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    s2 = steps[1]
    d["traceEvents"] = [e for e in d["traceEvents"] if not (e.get("cat") == "kernel" and
                        s2["ts"] <= e["ts"] < s2["ts"] + s2["dur"])]
    lostdir = os.path.join(tmp, "lost")
    os.makedirs(lostdir)
    with gzip.open(os.path.join(lostdir, src), "wt") as f:
        json.dump(d, f)
    rc, rows, err = run("--no-cache", lostdir)
    _, full, _ = run("testdata/gpt2_train")
    over = [(r["op"], r["peak_pct"]) for r in rows if r.get("peak_pct") and float(r["peak_pct"]) > 100]
    check("kernels lost from the trace: no row above its roof (%s)" % over, rc == 0 and not over)
    check("kernels lost from the trace: said (%s)" % err.strip()[:300],
          "launched no kernel found in the trace" in err)
    eff = {(r["op"], r["dtype"]): r["peak_pct"] for r in rows}
    base = {(r["op"], r["dtype"]): r["peak_pct"] for r in full}
    near = [k for k in eff if k in base and eff[k] and base[k] and
            abs(float(eff[k]) - float(base[k])) > 0.25 * float(base[k])]
    check("kernels lost from the trace: each op's efficiency as on the whole trace's "
          "other steps (%s)" % [(k, eff[k], base[k]) for k in near], not near)

# CUDA graph replays record no ops (testdata/graph_streams: three steps of
# graph replays, one eager of 164,338,073,600 FLOPs, helper-65's count):
# a step whose kernels no counted op launched has unknown FLOPs, not 0
rc, rows, err = run("--by", "step", "testdata/graph_streams")
fl = {r["step"]: r["flops"] for r in rows}
check("graph replays: their steps' FLOPs empty, the eager one's exact (%s)" % fl,
      fl == {"2": "", "3": "164338073600", "4": "", "5": ""})
check("graph replays: said (%s)" % err.strip()[:200], "3 steps ran kernels that no op" in err)

bad = [n for n, ok in checks if not ok]
for n, ok in checks:
    if not ok or os.environ.get("VERBOSE"):
        print(("ok   " if ok else "FAIL ") + n)
print("roofline_expect: %d checks, %d failed" % (len(checks), len(bad)))
sys.exit(1 if bad else 0)
