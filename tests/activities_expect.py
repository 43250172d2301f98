#!/usr/bin/env python3
"""Captures profiled with one activity left out, or with a stall planted
outside any range (tools/capture/capture_activities.py, one H100; what was
measured with the profiler off is in testdata/oracle/*.measured.json).

cpu_only: activities=[CPU]: the host's runtime calls are there (171
launches), the GPU's work is not (it was busy 9.5 ms of each 24.9 ms
step). Every command that measures the GPU must say it cannot, not read
a GPU idle all along (it said 0 % busy, 25 ms lost a step, and a gate on
busy tripped on a number that was never measured)."""
import csv
import glob
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args):
    p = subprocess.run(["./traceanalyze", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


GPU_COMMANDS = [["temporal"], ["idle"], ["kernels"], ["overlap"], ["launch"], ["queue"],
                ["membw"], ["overview"], ["diagnose"], ["diagnose", "--findings"],
                ["critical-path"], ["stragglers"], ["comms"], ["roofline"],
                ["report", "--html", "-"]]
for cmd in GPU_COMMANDS:
    for extra in ([], ["--no-cache", "-j", "2"]):
        rc, out, err = run(*cmd, *extra, "testdata/cpu_only")
        check("cpu_only: %s %s says the GPU was not recorded, exit 3 (rc %d: %s)"
              % (" ".join(cmd), " ".join(extra), rc, err.strip()[-120:]),
              rc == 3 and "holds no GPU activity" in err and "cpu_only" in err
              and len(err.strip().splitlines()) == 1 and out == "")
# a file cut before any of its GPU events (the profiler writes them
# after the host's): the same refusal, not "host-stalled, 0 % busy"
# (helper-66: gpt2_train's .gz cut at 58 % read so, exit 0)
with tempfile.TemporaryDirectory() as tmp:
    raw = open(glob.glob("testdata/gpt2_train/*.json.gz")[0], "rb").read()
    cut = os.path.join(tmp, "rank-0.pt.trace.json.gz")
    open(cut, "wb").write(raw[:int(len(raw) * 0.58)])
    for cmd in (["diagnose"], ["temporal"], ["report", "--html", "-"]):
        rc, out, err = run(*cmd, "--no-cache", cut)
        check("a file cut before its GPU events: %s refuses, exit 3 (rc %d: %s)"
              % (" ".join(cmd), rc, err.strip()[-160:]),
              rc == 3 and "cut short before any GPU activity" in err and out == "")
    rc, out, err = run("ops", "-q", "--no-cache", cut)
    check("a file cut before its GPU events: ops still reads the host (rc %d)" % rc, rc == 0 and out)
    # a machine with no GPU (no deviceProperties): cut short, it lost no
    # GPU's events, and is read as before (helper-67)
    t = json.load(gzip.open(glob.glob("testdata/gpt2_train/*.json.gz")[0], "rt"))
    t.pop("deviceProperties", None)
    t["traceEvents"] = [e for e in t["traceEvents"] if e.get("cat") not in
                        ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "ac2g")]
    text = json.dumps(t).encode()
    cpu_cut = os.path.join(tmp, "cpu", "rank-0.pt.trace.json")
    os.makedirs(os.path.dirname(cpu_cut))
    open(cpu_cut, "wb").write(text[:int(len(text) * 0.6)])
    rc, out, err = run("temporal", "--no-cache", cpu_cut)
    check("a CPU job's trace cut short: not refused as one that lost its GPU's events (rc %d: %s)"
          % (rc, err.strip()[-160:]), rc == 0 and "cut short before any GPU" not in err)
# kernels whose launch calls were not recorded (older Kineto missed
# Triton's cuLaunchKernel): said, not dropped in silence (helper-66)
with tempfile.TemporaryDirectory() as tmp:
    t = json.load(gzip.open(glob.glob("testdata/gpt2_train/*.json.gz")[0], "rt"))
    t["traceEvents"] = [e for e in t["traceEvents"]
                        if e.get("cat") not in ("cuda_runtime", "cuda_driver", "ac2g")]
    with gzip.open(os.path.join(tmp, "rank-0.pt.trace.json.gz"), "wt") as f:
        json.dump(t, f)
    for cmd in (["temporal"], ["diagnose"]):
        rc, out, err = run(*cmd, "--no-cache", tmp)
        check("kernels with no launch recorded: %s says so (rc %d: %s)" % (" ".join(cmd), rc, err.strip()[-200:]),
              rc == 0 and "kernels sampled have no launch call in the trace" in err)
rc, out, err = run("temporal", "--no-cache", "testdata/gpt2_train")
check("gpt2_train: no such warning (%s)" % err.strip()[-200:], "no launch call" not in err)
# every kernel recorded twice (same name, stream, start, length and
# correlation): the GPU's time counts each once, said (helper-66: the
# critical path read 100 % launch delay, kernels' counts doubled)
with tempfile.TemporaryDirectory() as tmp:
    t = json.load(gzip.open(glob.glob("testdata/gpt2_train/*.json.gz")[0], "rt"))
    t["traceEvents"] += [dict(e) for e in t["traceEvents"] if e.get("cat") == "kernel"]
    with gzip.open(os.path.join(tmp, "rank-0.pt.trace.json.gz"), "wt") as f:
        json.dump(t, f)
    for cmd in (["temporal"], ["kernels"], ["critical-path"], ["diagnose"]):
        rc, out, err = run(*cmd, "--no-cache", "--format", "csv", tmp)
        _, base, _ = run(*cmd, "--format", "csv", "testdata/gpt2_train")
        check("kernels recorded twice: %s as on the trace itself (rc %d)" % (" ".join(cmd), rc),
              rc == 0 and out == base)
    check("kernels recorded twice: said (%s)" % err.strip()[-200:],
          "GPU events recorded twice" in err)
# a gate on a GPU number does not pass, nor trip on a made-up one
rc, _, err = run("diagnose", "--fail-if", "gpu_busy_pct < 50", "testdata/cpu_only")
check("cpu_only: a gate on gpu_busy_pct exits 3, not 1 on a 0 never measured (rc %d)" % rc, rc == 3)
# the host side still reads: ops as the profiler's table, the steps
rc, out, _ = run("ops", "-q", "--format", "csv", "testdata/cpu_only")
ops = list(csv.DictReader(io.StringIO(out)))
check("cpu_only: ops reads the host side (%d rows)" % len(ops),
      rc == 0 and any(r["name"] == "aten::addmm" for r in ops))
# its device columns were never measured: empty, not 0 (helper-55: a
# gate on self_device_pct passed on 0 %)
check("cpu_only: ops' device columns are empty on every row",
      ops and all(r["self_device_us"] == "" and r["device_us"] == "" and r["self_device_pct"] == ""
                  for r in ops))
rc, _, err = run("ops", "--fail-if", "self_device_pct > 50", "testdata/cpu_only")
check("cpu_only: a gate on ops' self_device_pct trips, warned (rc %d)" % rc,
      rc == 1 and "no GPU activity" in err)
rc, out, _ = run("ops", "-q", "--kernels", "--format", "csv", "testdata/cuda_only")
check("cuda_only: ops' device columns are measured (its kernels' rows)",
      rc == 0 and any(r["self_device_us"] not in ("", "0.0") for r in csv.DictReader(io.StringIO(out))))
rc, out, _ = run("steps", "-q", "--format", "csv", "testdata/cpu_only")
steps = list(csv.DictReader(io.StringIO(out)))
m = json.load(open("testdata/oracle/cpu_only.measured.json"))
check("cpu_only: steps are the profiled steps, within 10 %% of %.2f ms (%s)"
      % (m["step_ms"], [r["cpu_us"] for r in steps]),
      rc == 0 and len(steps) >= 2 and all(abs(float(r["cpu_us"]) / 1e3 - m["step_ms"]) < 0.1 * m["step_ms"]
                                          for r in steps))
# --hta-compat is HTA's: it reads the trace as HTA does (no GPU rows)
rc, _, _ = run("temporal", "--hta-compat", "-q", "testdata/cpu_only")
check("cpu_only: --hta-compat temporal runs as HTA would (rc %d)" % rc, rc == 0)


# host_stall: a 10 ms time.sleep outside any range each step (profiler
# off it costs 9.5 ms a step): diagnose names it at about that cost, and
# says it blocks the host (it was told "CUDA graphs or torch.compile",
# which do not remove a sleep); overview does not say "larger batches"
m = json.load(open("testdata/oracle/host_stall.measured.json"))
rc, out, _ = run("diagnose", "-q", "--findings", "--format", "csv", "testdata/host_stall")
f = [r for r in csv.DictReader(io.StringIO(out)) if r["where"] == "<built-in function sleep>"]
steps = len({r["step"] for r in csv.DictReader(io.StringIO(run("diagnose", "-q", "--format", "csv",
                                                              "testdata/host_stall")[1]))})
cost = sum(float(r["cost_us"]) for r in f) / 1e3 / max(steps, 1)
check("host_stall: the sleep costs %.2f ms a step, within 15 %% of %.2f measured"
      % (cost, m["true_cost_sleep_ms"]), f and abs(cost - m["true_cost_sleep_ms"]) < 0.15 * m["true_cost_sleep_ms"])
check("host_stall: its advice says the host waits in the call, not dispatch (%s)"
      % (f[0]["advice"][:60] if f else None),
      f and all("waited in this call" in r["advice"] and "CUDA graphs or torch.compile (" not in r["advice"]
                for r in f))
rc, out, _ = run("overview", "testdata/host_stall")
check("host_stall: overview says the host's time outside ops, not larger batches",
      "outside any op or runtime call" in out and "larger batches" not in out)
# the 5 ms busy loop after the sync (9,164 calls of perf_counter in one
# Python frame) is on the path as the frame and its calls: 3.3 ms of it
# read "(no op or range)" when the frame was past a bounded search back
for extra in ([], ["--no-cache", "-j", "2"]):
    rc, out, _ = run("critical-path", "-q", "--top", "40", "--format", "csv", *extra, "testdata/host_stall")
    items = list(csv.DictReader(io.StringIO(out)))
    for step in sorted({r["step"] for r in items}):
        busy = sum(float(r["path_us"]) for r in items if r["step"] == step and
                   r["name"] in ("cap.py(14): busy", "<built-in function perf_counter>"))
        lost = sum(float(r["path_us"]) for r in items if r["step"] == step and r["name"] == "(no op or range)")
        check("host_stall %s step %s: the loop's frame and calls are on the path, %.0f us of 5003 "
              "(unnamed %.0f us)" % (extra, step, busy, lost), 4900 <= busy <= 5010 and lost < 100)

# cuda_only: activities=[CUDA]: no host op, no range, no step
rc, out, _ = run("overview", "testdata/cuda_only")
check("cuda_only: overview says the window is the whole trace, not a step (%s)" % out.splitlines()[2:3],
      "no ProfilerStep# step: the whole trace as one window" in out and "its step" not in out)
check("cuda_only: overview's advice says the host's ops were not recorded, over the trace,"
      " not 'host time outside any op' of 'the steps'",
      "the host's ops were not recorded" in out and "outside any op" not in out
      and "of the steps" not in out)
rc, out, _ = run("report", "-q", "--html", "-", "testdata/cuda_only")
check("cuda_only: the page's overview advice says the same",
      "kernels run only 38.3 % of the trace, and the host&#39;s ops were not recorded" in out
      or "kernels run only 38.3 % of the trace, and the host's ops were not recorded" in out)
check("cuda_only: the page's step grid says there is no step, not an empty box",
      "No rank has a ProfilerStep# step" in out)
rc, out, _ = run("diagnose", "-q", "--findings", "--format", "csv", "testdata/cuda_only")
f = [r for r in csv.DictReader(io.StringIO(out)) if r["where"] == "(no annotation)"]
check("cuda_only: the advice says the host was not recorded, not 'wrap in record_function'",
      f and all("ProfilerActivity.CPU" in r["advice"] and "record_function" not in r["advice"] for r in f))
rc, out, _ = run("report", "-q", "--html", "-", "testdata/cuda_only")
check("cuda_only: the page calls its window the whole trace, not '1 of 1 step'",
      rc == 0 and "over its whole trace (no ProfilerStep# step" in out and "1 of 1 step" not in out)
for extra in ([], ["--no-cache", "-j", "2"]):
    rc, out, _ = run("diagnose", "-q", "--findings", "--format", "csv", *extra, "testdata/cuda_only")
    check("cuda_only %s: the same advice on shards" % extra,
          rc == 0 and "ProfilerActivity.CPU" in out)

# one process's profiling cycles exported one file each (the torch docs'
# export_chrome_trace with a repeating schedule): neither names a rank;
# the error says what to do
import os
import shutil
import tempfile
d = tempfile.mkdtemp()
for n in ("test_trace_1.json.gz", "test_trace_2.json.gz"):
    shutil.copy("testdata/grad_accum/rank-0.pt.trace.json.gz", os.path.join(d, n))
rc, _, err = run("temporal", "--no-cache", d)
check("cycles of one process in one directory: exit 3, and a way out (%s)" % err.strip()[-100:],
      rc == 3 and "are both rank 0 (neither names its rank: give one file at a time" in err)

# helper-51: a job whose rank 1 recorded no GPU activity: --ranks 0 reads
# rank 0 with every command (stragglers and critical-path match every rank:
# rank 1 was refused though not asked for); all ranks: refused
d = tempfile.mkdtemp()
for r in (0, 1):
    t = json.load(gzip.open("testdata/ddp_straggler/rank-%d.pt.trace.json.gz" % r, "rt"))
    if r == 1:
        t["traceEvents"] = [e for e in t["traceEvents"] if e.get("cat") not in
                            ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "ac2g")]
    json.dump(t, open(os.path.join(d, "rank-%d.json" % r), "w"))
for cmd in ("diagnose", "stragglers", "critical-path", "temporal"):
    for j in ("1", "2"):
        rc, _, err = run(cmd, "-q", "--no-cache", "-j", j, "--ranks", "0", d)
        check("rank 1 without GPU activity: %s --ranks 0 -j %s reads rank 0 (rc %d %s)"
              % (cmd, j, rc, err.strip()[:80]), rc == 0)
rc, _, err = run("diagnose", "-q", "--no-cache", d)
check("rank 1 without GPU activity: every rank refused, naming rank 1 (rc %d)" % rc,
      rc == 3 and "rank 1 launched GPU work" in err)
# every async copy or set is GPU work; a host function on a stream is not
for api, refused in (("cuMemcpyHtoDAsync_v2", True), ("cudaMemcpy2DAsync", True),
                     ("cuMemsetD32Async", True), ("cudaLaunchHostFunc", False)):
    d = tempfile.mkdtemp()
    t = json.load(gzip.open("testdata/cpu_only/rank-0.pt.trace.json.gz", "rt"))
    for e in t["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and ("Launch" in e["name"] or "Async" in e["name"]):
            e["name"] = api
    json.dump(t, open(os.path.join(d, "rank-0.json"), "w"))
    rc, _, _ = run("temporal", "-q", "--no-cache", d)
    check("cpu_only with its launches named %s: %s (rc %d)" % (api, "refused" if refused else "read", rc),
          rc == (3 if refused else 0))

# the sleep's frame under other names: a wait by what waits (a lock, a
# queue, the OS), not by a method's name (str.join, Tensor.select, a
# CUDA event's wait are not waits)
for name, waits in (("<built-in method __enter__ of _thread.lock object>", True),
                    ("<built-in method get of _queue.SimpleQueue object>", True),
                    ("<built-in function select>", True),
                    ("<built-in method join of str object>", False),
                    ("<built-in method select of Tensor object>", False),
                    ("<built-in method wait of torch._C._CudaEventBase object>", False),
                    ("<built-in method sleepy>", False)):
    d = tempfile.mkdtemp()
    t = json.load(gzip.open("testdata/host_stall/rank-0.pt.trace.json.gz", "rt"))
    for e in t["traceEvents"]:
        if e.get("name") == "<built-in function sleep>":
            e["name"] = name
    json.dump(t, open(os.path.join(d, "rank-0.json"), "w"))
    rc, out, _ = run("diagnose", "-q", "--no-cache", "--findings", "--format", "csv", d)
    f = [r for r in csv.DictReader(io.StringIO(out)) if r["where"] == name]
    check("host_stall's sleep named %s: %s" % (name, "a wait" if waits else "not a wait"),
          f and all(("host waited in this call" in r["advice"]) == waits for r in f))

# membw's inflight_gbps is the bandwidth over the time the copies of a
# kind were in flight: the series' sum in flight, weighted by how long it
# held (HTA's statistics count each point alike: a 256 B copy's weighs
# what a 3.5 MB copy's does); on copies, 4 copies of 32 MiB in 4790 us
for case in ("copies", "lstm_ckpt", "mem_train"):
    rc, out, _ = run("membw", "-q", "--format", "csv", "testdata/" + case)
    got = {r["name"]: float(r["inflight_gbps"]) for r in csv.DictReader(io.StringIO(out))}
    rc, out, _ = run("membw", "-q", "--series", "--format", "csv", "testdata/" + case)
    pts = {}
    for r in csv.DictReader(io.StringIO(out)):
        pts.setdefault(r["name"], []).append((float(r["ts_us"]), float(r["gbps"])))
    check("%s: membw has kinds (%s)" % (case, sorted(got)), got and set(got) == set(pts))
    for name, ps in pts.items():
        w = sum(g * (b[0] - a[0]) for a, b in zip(ps, ps[1:]) for g in [a[1]] if g > 0)
        t = sum(b[0] - a[0] for a, b in zip(ps, ps[1:]) if a[1] > 0)
        want = w / t if t else 0
        check("%s: membw %s inflight_gbps %.3f = the series weighted by time %.3f"
              % (case, name, got.get(name, -1), want), abs(got.get(name, -1) - want) <= 0.001 * want + 0.002)
rc, out, _ = run("membw", "-q", "--format", "csv", "testdata/copies")
r = list(csv.DictReader(io.StringIO(out)))
check("copies: 4 x 32 MiB in 4790.373 us in flight: %s GB/s" % (r and r[0]["inflight_gbps"]),
      r and abs(float(r[0]["inflight_gbps"]) - 4 * 33554432 / 4790.373e3) < 0.01)

# helper-60: a copy with no bandwidth in the trace (or one below 0) has
# none to average: left out of both sums (a 10 MB copy without one read
# as 1000 us at 0 GB/s: 0.05 GB/s against the other copy's 5)
def copies_case(bws):
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0,
           "dur": 5000}]
    for i, (ts, dur, bw) in enumerate(bws):
        args = {"stream": 7, "correlation": 10 + i, "device": 0, "bytes": 1000}
        if bw is not None:
            args["memory bandwidth (GB/s)"] = bw
        ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0,
                   "tid": 7, "ts": ts, "dur": dur, "args": args})
    d = tempfile.mkdtemp()
    json.dump({"traceEvents": ev}, open(os.path.join(d, "rank-0.json"), "w"))
    rc, out, _ = run("membw", "-q", "--no-cache", "--format", "csv", d)
    r = list(csv.DictReader(io.StringIO(out)))
    return float(r[0]["inflight_gbps"]) if r else None


for case, bws in (("no bandwidth", [(100, 1000, None), (2000, 10, 5.0)]),
                  ("a bandwidth below 0", [(100, 1000, 10.0), (300, 200, -100.0), (2000, 10, 5.0)])):
    got = copies_case(bws)
    want = 5.0 if case == "no bandwidth" else (10.0 * 1000 + 5.0 * 10) / 1010
    check("membw: a copy with %s is left out of inflight_gbps (%s, want %.3f)" % (case, got, want),
          got is not None and abs(got - want) < 0.01)

# side_thread (helper-59): a Python thread's EMA update launched 490
# kernels the profiler recorded none of (its memsets and copies are
# there): every GPU number leaves that work out, which was said nowhere.
# Said once a command, of that thread; not of a capture whose kernels are
# all there; not with -q
for cmd in (["temporal"], ["kernels"], ["critical-path"], ["report", "--html", os.path.join(tempfile.mkdtemp(), "r.html")]):
    rc, out, err = run(*cmd, "--no-cache", "testdata/side_thread")
    said = [l for l in err.splitlines() if "launched kernels the trace holds no GPU activity" in l]
    check("side_thread: %s says once that a thread's kernels are missing (%d)" % (cmd[0], len(said)),
          rc == 0 and len(said) == 1 and "rank 0: thread " in said[0])
for case in ("grad_hooks", "resnet_train", "fsdp2", "compiled_graphs"):
    rc, out, err = run("temporal", "--no-cache", "testdata/" + case)
    check("%s: no thread's kernels said missing" % case, "launched kernels the trace" not in err)
rc, out, err = run("temporal", "-q", "testdata/side_thread")
check("side_thread: -q says nothing", rc == 0 and err == "")

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL activities:", n)
print(f"activities: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
