#!/usr/bin/env python3
"""ops --group-by stack:N against the python_function nesting in the trace
itself (torch 2.11's key_averages(group_by_stack_n=...) returns no stacks,
so there is no profiler oracle): for every op of a few names, the N
innermost Python frames that enclose it on its thread, innermost first,
joined by " <- ", counted per (op, stack); traceanalyze must give the same
calls per (op, stack)."""
import collections
import csv
import gzip
import io
import json
import os
import subprocess
import sys

CASE = "testdata/train_stalled"
OPS = ("aten::copy_", "aten::linear", "aten::item", "aten::to")


def expected(n):
    ev = json.load(gzip.open(CASE + "/rank-0.pt.trace.json.gz"))["traceEvents"]
    frames = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "python_function" and "dur" in e:
            frames[(e["pid"], e["tid"])].append(e)
    want = collections.Counter()
    for e in ev:
        if e.get("cat") != "cpu_op" or e.get("name") not in OPS:
            continue
        t0, t1 = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        enclosing = [f for f in frames[(e["pid"], e["tid"])]
                     if float(f["ts"]) <= t0 and t1 <= float(f["ts"]) + float(f["dur"])]
        # innermost first: the latest start, then the shortest
        enclosing.sort(key=lambda f: (-float(f["ts"]), float(f["dur"])))
        want[(e["name"], " <- ".join(f["name"] for f in enclosing[:n]))] += 1
    return want


def ours(n):
    out = subprocess.run(["./traceanalyze", "ops", "-q", "--format", "csv", "--group-by", f"stack:{n}", CASE],
                         capture_output=True, text=True, check=True).stdout
    got = collections.Counter()
    for r in csv.DictReader(io.StringIO(out)):
        if r["name"] in OPS:
            got[(r["name"], r["stack"])] += int(r["calls"])
    return got


def main():
    failed = 0
    for n in (1, 3):
        want, got = expected(n), ours(n)
        if want != got or not want:
            failed += 1
            print(f"FAIL ops stack:{n}: want {sorted(want.items())[:3]} got {sorted(got.items())[:3]}")
        else:
            print(f"ops stack:{n}: {len(want)} (op, call site) pairs match")
    # an op whose first child has its name and which has a second child:
    # the child was counted at the second child and again at the op's
    # end, a double free with stacks (abort) and twice its calls without
    # (HTA's trace_filter: aten::repeat_interleave 12 calls of 8 events)
    shared = os.path.join(os.environ.get("SHARED", "../shared"), "testdata/hta/trace_filter")
    checks = 2
    if os.path.isdir(shared):
        checks += 1
        f = os.path.join(shared, "sampled_rank-0.json.gz")
        n = sum(1 for e in json.load(gzip.open(f))["traceEvents"]
                if e.get("ph") == "X" and e.get("name") == "aten::repeat_interleave")
        p = subprocess.run(["./traceanalyze", "ops", "-q", "--no-cache", "--format", "csv",
                            "--group-by", "stack:2", "--ranks", "0", shared],
                           capture_output=True, text=True)
        calls = sum(int(r["calls"]) for r in csv.DictReader(io.StringIO(p.stdout))
                    if r["name"] == "aten::repeat_interleave") if p.returncode == 0 else -1
        if p.returncode != 0 or not 0 < calls <= n:
            failed += 1
            print(f"FAIL ops stack:2 on trace_filter: rc {p.returncode}, "
                  f"{calls} calls of {n} events: {p.stderr.strip()[:200]}")
        else:
            print(f"ops stack:2 on trace_filter: {calls} calls of {n} events")
    print(f"ops-stack: {checks - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
