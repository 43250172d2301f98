#!/usr/bin/env python3
"""memory on CUDA allocator snapshots (tools/capture/capture_snapshot.py on
an H200): the replayed peak against max_memory_allocated() read in the same
run (testdata/oracle/snap_*.measured.json), the planted leak of 4 MiB a
step named by its frame; a pickle that would build an object refused; and
damaged pickles: exit 3, never a crash or a hang."""
import csv
import datetime
import gzip
import io
import json
import os
import pickle
import random
import subprocess
import sys
import tempfile

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args, timeout=30):
    return subprocess.run(["./traceanalyze", "memory", "-q", *args], capture_output=True, text=True,
                          timeout=timeout)


def rows(*args):
    return list(csv.DictReader(io.StringIO(run("--format", "csv", *args).stdout)))


for case in ("snap_train", "snap_leak"):
    snap = "testdata/%s/snapshot.pickle.gz" % case
    m = json.load(open("testdata/oracle/%s.measured.json" % case))
    want = max(s["peak"] for s in m["steps"])
    r = rows(snap)
    peak = int(r[0]["peak_bytes"]) if r else 0
    check("%s: peak %d against max_memory_allocated() %d (within 1 %%)" % (case, peak, want),
          abs(peak - want) <= 0.01 * want)
    check("%s: baseline + activations = peak, fragmentation = reserved - peak" % case,
          r and int(r[0]["baseline_bytes"]) + int(r[0]["activations_bytes"]) == peak
          and int(r[0]["reserved_at_peak_bytes"]) - peak == int(r[0]["fragmentation_bytes"]))
    by = rows("--by", "stack", snap)
    check("%s: --by stack adds up to the peak" % case, sum(int(x["bytes"]) for x in by) == peak)
    s = rows("--series", snap)
    check("%s: --series reaches the peak" % case, max(int(x["allocated_bytes"]) for x in s) == peak)
    # parameters and optimizer state are sites of their own: make_model's
    # frame, and the optimizer's step (called from step())
    st = {x["where"]: int(x["bytes"]) for x in rows("--leaks", snap)}
    par = sum(v for k, v in st.items() if k.startswith("make_model"))
    opt = sum(v for k, v in st.items() if k.startswith("step at"))
    check("%s: never freed from make_model: %d bytes against the parameters' %d (within 2 %%)" % (
          case, par, m["params_bytes"]), abs(par - m["params_bytes"]) <= 0.02 * m["params_bytes"])
    check("%s: never freed from the optimizer's step: %d bytes against its state's %d (within 2 %%)" % (
          case, opt, m["optimizer_state_bytes"]),
          abs(opt - m["optimizer_state_bytes"]) <= 0.02 * m["optimizer_state_bytes"])
# the baseline as memory_allocated() between steps, and split: parameters,
# gradients and optimizer state each against their tensors' bytes read in
# the run (snap_profiled was recorded with the recorder's defaults, C++
# frames too, so its workspaces are known)
for case in ("snap_train", "snap_leak", "snap_profiled"):
    snap = "testdata/%s/snapshot.pickle.gz" % case
    m = json.load(open("testdata/oracle/%s.measured.json" % case))
    r = rows(snap)[0]
    for part, key in (("parameters", "params_bytes"), ("gradients", "grads_bytes"),
                      ("optimizer", "optimizer_state_bytes")):
        got, want = int(r[part + "_bytes"]), m[key]
        check("%s: %s %d bytes against %d (within 2 %%)" % (case, part, got, want),
              abs(got - want) <= 0.02 * want)
    if case != "snap_leak":   # the leak's blocks pile up: no flat floor
        between = m["steps"][-1]["allocated_before"]
        check("%s: baseline %s against memory_allocated() between steps %d (within 2 %%)" % (
              case, r["baseline_bytes"], between), abs(int(r["baseline_bytes"]) - between) <= 0.02 * between)
    parts = sum(int(r[k] or 0) for k in ("parameters_bytes", "gradients_bytes", "optimizer_bytes",
                                         "workspace_bytes", "other_baseline_bytes", "unrecorded_bytes"))
    check("%s: workspaces known only with C++ frames (%r)" % (case, r["workspace_bytes"]),
          (r["workspace_bytes"] == "") == (case != "snap_profiled"))
    check("%s: the parts add up to the baseline" % case, parts == int(r["baseline_bytes"]))
# recorded only after the model, its gradients and its optimizer state
# were made: their blocks have no history, and no part is said to be 0
m = json.load(open("testdata/oracle/snap_late.measured.json"))
r = rows("testdata/snap_late/snapshot.pickle.gz")[0]
known = m["params_bytes"] + m["grads_bytes"] + m["optimizer_state_bytes"]
check("snap_late: %s bytes allocated before recording started, at least the %d of parameters, "
      "gradients and optimizer state" % (r["unrecorded_bytes"], known), int(r["unrecorded_bytes"] or 0) >= known)
check("snap_late: no part is 0 of what was not recorded (%s)" % [r[k] for k in (
      "parameters_bytes", "gradients_bytes", "optimizer_bytes")],
      all(r[k] == "" for k in ("parameters_bytes", "gradients_bytes", "optimizer_bytes")))
out = run("testdata/snap_late/snapshot.pickle.gz").stdout
check("snap_late: the text says what was allocated before recording started",
      "allocated before recording started" in out and "0.0 MiB parameters" not in out)
prof = "testdata/snap_profiled/snapshot.pickle.gz"
r = rows(prof)[0]
check("snap_profiled: the cuBLAS workspaces named from C++ frames (%s bytes)" % r["workspace_bytes"],
      int(r["workspace_bytes"]) >= 2 * 32 << 20)
check("snap_profiled: no site is the recorder's own frame",
      not [x for x in rows("--by", "stack", prof) if "unwind" in x["where"]])
m = json.load(open("testdata/oracle/snap_profiled.measured.json"))
want = max(s["peak"] for s in m["steps"])
check("snap_profiled: peak %s against max_memory_allocated() %d (within 1 %%)" % (r["peak_bytes"], want),
      abs(int(r["peak_bytes"]) - want) <= 0.01 * want)
# --trace: the peak's step from the windows measured in the run; its op
# from the trace's own [memory] event for the block (same address, its
# time within 50 us on the shared clock), enclosed by that op
trace = "testdata/snap_profiled/rank-0.pt.trace.json.gz"
t = rows("--trace", trace, prof)[0]
peak_us = int(t["peak_time_us"])
win = [s["step"] for s in m["steps"] if s["start_us"] <= peak_us <= s["end_us"]]
check("--trace: the peak in ProfilerStep#%s, measured in step %s" % (t["peak_step"], win),
      win and t["peak_step"] == str(win[0]))
snapd = pickle.load(gzip.open(prof))
tr = json.load(gzip.open(trace))
base = int(tr["baseTimeNanoseconds"]) // 1000
al, top, at = 0, -1, None
for e in snapd["device_traces"][0]:
    al += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
    if e["action"] == "alloc" and al > top:
        top, at = al, e
mem = [x for x in tr["traceEvents"] if x.get("name") == "[memory]" and x["args"].get("Addr") == at["addr"]
       and x["args"].get("Bytes", 0) > 0 and abs(x["ts"] + base - at["time_us"]) < 50]
ops = sorted((x for x in tr["traceEvents"] if mem and x.get("ph") == "X" and x.get("cat") == "cpu_op"
              and x["tid"] == mem[0]["tid"] and x["ts"] <= mem[0]["ts"] <= x["ts"] + x["dur"]),
             key=lambda x: x["dur"])
check("--trace: the peak in %s, the trace's [memory] event for its block in %s" % (
      t["peak_op"], ops[0]["name"] if ops else None), ops and t["peak_op"] == ops[0]["name"])
p = subprocess.run(["./traceanalyze", "memory", "--trace", "testdata/train_healthy", prof],
                   capture_output=True, text=True, timeout=30)
check("--trace with another run's trace: said, on stderr and in peak_op",
      p.returncode == 0 and "outside the trace" in p.stderr and "(outside the trace)" in p.stdout)
p = run("--trace", trace, "--leaks", prof)
check("--trace with --leaks: a usage error", p.returncode == 2)
ser = rows("--series", "--bucket-events", "100", prof)
n = len(snapd["device_traces"][0])
check("--series --bucket-events 100: a row each 100 events (%d rows, %d events)" % (len(ser), n),
      len(ser) == (sum(1 for e in snapd["device_traces"][0] if e["action"] in (
          "alloc", "free_completed", "segment_alloc", "segment_free", "segment_map", "segment_unmap")) + 99) // 100)
check("--series --bucket-events: still reaches the peak",
      max(int(x["allocated_bytes"]) for x in ser) == int(r["peak_bytes"]))
leak = json.load(open("testdata/oracle/snap_leak.measured.json"))["leak_bytes_per_step"]
l = [x for x in rows("--leaks", "testdata/snap_leak/snapshot.pickle.gz") if x["where"].startswith("keep_leak")]
check("snap_leak: the leak named by its frame, %s bytes each (planted %d, within 2 %%)" % (
      l[0]["bytes_each"] if l else None, leak), l and abs(int(l[0]["bytes_each"]) - leak) <= 0.02 * leak)
check("snap_train: no keep_leak", not [x for x in rows("--leaks", "testdata/snap_train/snapshot.pickle.gz")
                                      if x["where"].startswith("keep_leak")])
out = run("testdata/snap_leak/snapshot.pickle.gz").stdout
check("text: a verdict line", "baseline +" in out and "activations; reserved" in out)

d = tempfile.mkdtemp()
evil = os.path.join(d, "evil.pickle")
open(evil, "wb").write(pickle.dumps({"segments": [], "device_traces": [], "x": datetime.date(2020, 1, 1)},
                                    protocol=4))
p = run(evil)
check("an object-building opcode is refused, exit 3, with its offset",
      p.returncode == 3 and "refused" in p.stderr and "at byte" in p.stderr)
raw = gzip.open("testdata/snap_leak/snapshot.pickle.gz").read()
cut = os.path.join(d, "cut.pickle")
open(cut, "wb").write(raw[:len(raw) // 2])
p = run(cut)
check("a pickle cut short: exit 3", p.returncode == 3 and "pickle" in p.stderr)
notsnap = os.path.join(d, "list.pickle")
open(notsnap, "wb").write(pickle.dumps([1, 2, 3], protocol=4))
p = run(notsnap)
check("a pickle that is not a snapshot: exit 3, said", p.returncode == 3 and "not an allocator snapshot" in p.stderr)
random.seed(7)
bad = 0
for i in range(150):
    b = bytearray(raw[:20000] if i % 2 else raw)
    for _ in range(random.randint(1, 8)):
        b[random.randrange(len(b))] = random.randrange(256)
    f = os.path.join(d, "m%d.pickle" % i)
    open(f, "wb").write(bytes(b))
    try:
        p = run(f, timeout=20)
        bad += p.returncode not in (0, 3)
    except subprocess.TimeoutExpired:
        bad += 1
check("150 mutated snapshots: exit 0 or 3 each, none hangs (%d did not)" % bad, bad == 0)

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL snapshot:", n)
print(f"snapshot: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
