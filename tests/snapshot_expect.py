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
