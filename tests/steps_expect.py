#!/usr/bin/env python3
"""steps agrees with the window every other command measures (diagnose's
step_us, critical-path's path_us), keeps all steps but the last, and with
--hta-compat keeps what HTA's get_profiler_steps() returns; launch --by-op
on real captures counts every launch under an ATen op once."""
import csv
import io
import os
import subprocess
import sys

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def rows(cmd, *args):
    p = subprocess.run(["./traceanalyze", cmd, "-q", "--format", "csv", *args], capture_output=True, text=True,
                       check=True)
    return list(csv.DictReader(io.StringIO(p.stdout)))


for case in ("train_healthy", "train_stalled", "decode_eager", "ddp_straggler", "two_ranks", "mem_leak"):
    s = rows("steps", "testdata/" + case)
    d = {(r["rank"], r["step"]): float(r["step_us"]) for r in rows("diagnose", "--no-path", "testdata/" + case)}
    kept = [r for r in s if r["kept"] == "1"]
    check("%s: the kept steps are diagnose's (%d)" % (case, len(kept)),
          {(r["rank"], r["step"]) for r in kept} == set(d))
    check("%s: each kept step's window is diagnose's step" % case,
          all(abs(float(r["window_us"]) - d[(r["rank"], r["step"])]) < 0.01 for r in kept))
    last = {}
    for r in s:
        last[r["rank"]] = max(last.get(r["rank"], -1), int(r["step"]))
    check("%s: the last step of each rank is not kept" % case,
          all(r["kept"] == "0" for r in s if int(r["step"]) == last[r["rank"]]))

SHARED = os.environ.get("SHARED", "../shared")
tf = os.path.join(SHARED, "testdata/hta/trace_filter")
if os.path.isdir(tf):
    want = {r["profiler_step"] for r in csv.DictReader(open(os.path.join(SHARED,
            "testdata/hta-expected/trace_filter/profiler_steps.csv")))}
    got = {r["step"] for r in rows("steps", "--hta-compat", tf) if r["kept"] == "1"}
    check("--hta-compat: the kept steps are HTA's get_profiler_steps() %s (ours %s)" % (sorted(want), sorted(got)),
          got == want)

r = rows("launch", "--by-op", "testdata/decode_eager")
check("launch --by-op: a row per op and kernel sequence, delays positive",
      r and all(float(x["op_to_launch_us"]) > 0 and float(x["launch_to_kernel_us"]) > 0 for x in r))
check("launch --by-op: decode's addmm and clamp_min, 8 tokens x 12 layers x 2 steps each",
      {x["op"]: int(x["count"]) for x in r}.get("aten::clamp_min") == 192)
p = subprocess.run(["./traceanalyze", "launch", "--by-op", "--summary", "testdata/decode_eager"],
                   capture_output=True, text=True)
check("launch --by-op --summary is exit 2", p.returncode == 2)

# a rank with no ProfilerStep# among ranks with steps (train_stalled as
# rank 0, cuda_only as rank 1): said, not an absence to guess at
import shutil
import tempfile
d = tempfile.mkdtemp()
shutil.copy("testdata/train_stalled/rank-0.pt.trace.json.gz", d + "/rank-0.json.gz")
shutil.copy("testdata/cuda_only/rank-0.pt.trace.json.gz", d + "/rank-1.json.gz")
p = subprocess.run(["./traceanalyze", "steps", "--no-cache", "--format", "csv", d],
                   capture_output=True, text=True)
check("steps: a stepless rank among stepped ones is said (%s)" % p.stderr.strip()[-120:],
      p.returncode == 0 and "rank 1: no ProfilerStep#N range" in p.stderr
      and "rank 0: no ProfilerStep" not in p.stderr)
shutil.rmtree(d)

# ops --kernels --step N: the kernel rows are the step's launches, as the
# op rows' device time is (by the GPU's time, a GPU behind the host gave
# gpt2_train step 2's kernel rows 27.2 of its ops' 54.2 ms, the GEMMs 1
# call each beside aten::mm's 19: helper-63)
for case, step in (("gpt2_train", "2"), ("gpt2_train", "3"), ("train_stalled", "2"),
                   ("decode_graph", "3"), ("fsdp2", "2")):
    p = subprocess.run(["./traceanalyze", "ops", "--kernels", "--step", step, "-q", "--format",
                        "csv", "testdata/" + case], capture_output=True, text=True)
    ops = list(csv.DictReader(io.StringIO(p.stdout)))
    kern = [r for r in ops if r["self_cpu_us"] == "0.0" and r["cpu_us"] == "0.0"]
    a = sum(float(r["self_device_us"] or 0) for r in ops if r not in kern)
    b = sum(float(r["self_device_us"] or 0) for r in kern)
    check("ops --kernels --step %s on %s: kernel rows %.0f us = op rows %.0f us" % (step, case, b, a),
          a > 0 and abs(a - b) <= 0.001 * a)

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL steps:", n)
print(f"steps: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
