#!/usr/bin/env python3
"""counters and kernels --sequences. counters against an independent
reading of the CUPTI profiler trace's JSON (../shared/testdata/hta/
cupti_profiler): the Nth counter range by time is the kernel of the Nth
cudaLaunchKernel, its ops the CPU ops over that call on its thread.
kernels --sequences on a real capture: every pattern starts with an op
and has at least --min-len kernels."""
import csv
import gzip
import io
import json
import os
import subprocess
import sys

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def rows(*args, rc=0):
    p = subprocess.run(["./traceanalyze", *args, "-q", "--format", "csv"], capture_output=True, text=True)
    if p.returncode != rc:
        print(p.stderr)
    return list(csv.DictReader(io.StringIO(p.stdout))), p


SHARED = os.environ.get("SHARED", "../shared")
d = os.path.join(SHARED, "testdata/hta/cupti_profiler")
if os.path.isdir(d):
    f = [os.path.join(d, x) for x in os.listdir(d) if x.endswith(".gz")][0]
    ev = json.load(gzip.open(f))["traceEvents"]
    ranges = sorted((e for e in ev if e.get("cat") == "cuda_profiler_range"), key=lambda e: e["ts"])
    launches = sorted((e for e in ev if e.get("cat") == "cuda_runtime" and e["name"].startswith("cudaLaunchKernel")),
                      key=lambda e: e["ts"])
    ops = [e for e in ev if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    want = []
    for n, (r, l) in enumerate(zip(ranges, launches)):
        over = sorted((o for o in ops if o["tid"] == l["tid"] and o["ts"] <= l["ts"] < o["ts"] + o["dur"]),
                      key=lambda o: (o["ts"], -o["dur"]))
        for k, v in r["args"].items():
            want.append((0, n, r["name"], over[-1]["name"] if over else "", over[0]["name"] if over else "", k,
                         float(v)))
    got, _ = rows("counters", d)
    mine = [(int(x["rank"]), int(x["nth"]), x["kernel"], x["op"], x["top_op"], x["counter"], float(x["value"]))
            for x in got]
    check("counters: %d ranges, %d launches, %d values, every one as the JSON says" % (
          len(ranges), len(launches), len(mine)),
          len(ranges) == len(launches) and len(mine) == 9 * len(ranges) and sorted(mine) == sorted(want))
else:
    print("counters: skipped: %s not found" % d)
_, p = rows("counters", "testdata/train_healthy", rc=3)
check("counters without counter ranges: exit 3 naming the file", p.returncode == 3 and "rank-0" in p.stderr)

seq, _ = rows("kernels", "--sequences", "--top", "0", "testdata/train_healthy")
check("sequences: every pattern is an op and 3 kernels or more (%d patterns)" % len(seq),
      seq and all(len(x["pattern"].split("|")) >= 4 for x in seq))
check("sequences: by what fusing saves, the gaps", all(float(a["gap_us"]) >= float(b["gap_us"])
                                                      for a, b in zip(seq, seq[1:])))
top, _ = rows("kernels", "--sequences", "testdata/train_healthy")
check("sequences: --top 5 by default", len(top) == 5)
lin, _ = rows("kernels", "--sequences", "--op", "aten::linear", "--min-len", "1", "--top", "0",
              "testdata/train_healthy")
check("sequences --op: only its ops", lin and all(x["pattern"].startswith("aten::linear|") for x in lin))
_, p = rows("kernels", "--op", "aten::mm", "testdata/train_healthy", rc=2)
check("--op without --sequences is exit 2", p.returncode == 2)

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL counters:", n)
print(f"counters: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
