#!/usr/bin/env python3
"""memory on real captures (tools/capture/capture_memory.py, profile_memory
on an H200): each step's peak and its allocated bytes at start and end
against what the CUDA allocator said in the same run
(testdata/oracle/mem_*.measured.json), a planted leak of 4 MiB a step
found and named; and damaged [memory] events: counted, never a crash."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args, rc=0):
    p = subprocess.run(["./traceanalyze", "memory", "-q", *args], capture_output=True, text=True)
    if p.returncode != rc:
        print(p.stderr)
    return p


def rows(*args):
    return list(csv.DictReader(io.StringIO(run("--format", "csv", *args).stdout)))


for case in ("mem_train", "mem_leak"):
    measured = {s["step"]: s for s in json.load(open("testdata/oracle/%s.measured.json" % case))["steps"]}
    r = [x for x in rows("testdata/" + case) if x["device"] == "cuda:0"]
    check("%s: a row per kept step (%d)" % (case, len(r)), len(r) == 2)
    for x in r:
        m = measured[int(x["step"])]
        peak = int(x["peak_bytes"])
        check("%s step %s: peak %d against max_memory_allocated() %d (within 1 %%)" % (case, x["step"], peak, m["peak"]),
              abs(peak - m["peak"]) <= 0.01 * m["peak"])
        check("%s step %s: start and end are memory_allocated() before and after" % (case, x["step"]),
              int(x["start_bytes"]) == m["allocated_before"] and int(x["end_bytes"]) == m["allocated_after"])
leak = json.load(open("testdata/oracle/mem_leak.measured.json"))["leak_bytes_per_step"]
f = rows("--findings", "testdata/mem_leak")
g = [x for x in f if x["kind"] == "memory_growth"]
check("mem_leak: growth of %s bytes a step (planted %d, within 2 %%)" % (g[0]["bytes"] if g else None, leak),
      len(g) == 1 and abs(int(g[0]["bytes"]) - leak) <= 0.02 * leak)
check("mem_leak: the leak is named by its range", g and g[0]["where"] == "leaky_cache")
check("mem_train: no growth found", not [x for x in rows("--findings", "testdata/mem_train") if x["kind"] == "memory_growth"])
s = {x["where"]: x for x in rows("--by", "annotation", "testdata/mem_leak") if x["device"] == "cuda:0"}
check("--by annotation: leaky_cache never freed 2 x 4 MiB", int(s["leaky_cache"]["never_freed_bytes"]) == 2 * leak)
peak = max(int(x["peak_bytes"]) for x in rows("testdata/mem_leak") if x["device"] == "cuda:0")
check("--by: what was live at the peak adds up to the peak",
      sum(int(x["live_at_peak_bytes"]) for x in s.values()) == peak)
ser = rows("--series", "testdata/mem_leak")
check("--series: the highest point is the peak", max(int(x["allocated_bytes"]) for x in ser) >= peak)
b = rows("--series", "--bucket-us", "1000", "testdata/mem_leak")
check("--series --bucket-us: fewer rows, the same highest point",
      len(b) < len(ser) and max(int(x["allocated_bytes"]) for x in b) == max(int(x["allocated_bytes"]) for x in ser))
out = run("testdata/mem_leak").stdout
check("text says the leak and where", "grows 4.0 MiB a step" in out and "leaky_cache" in out)
p = run("--fail-if", "peak_bytes > 1", "testdata/train_healthy", rc=3)
check("a trace without [memory] events is exit 3, saying how to get them (no gate passes on it)",
      p.returncode == 3 and "profile_memory=True" in p.stderr)

# damaged events: no total, a negative total, a free of nothing, an address
# allocated twice; a peak still right, a warning for each
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1,
       "ts": 1000 * i, "dur": 1000} for i in (1, 2, 3)]


def mem(ts, addr, nbytes, total):
    a = {"Addr": addr, "Bytes": nbytes, "Device Type": 1, "Device Id": 0, "Total Reserved": 1 << 20}
    if total is not None:
        a["Total Allocated"] = total
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1,
            "ts": ts, "args": a}


ev += [mem(1100, 1, 100, 100), mem(1200, 2, 50, None), mem(1300, 1, 100, 250),
       mem(1400, 9, -30, -5), mem(1500, 2, -50, 200), mem(2100, 3, 10, 210)]
d = tempfile.mkdtemp()
p_ = os.path.join(d, "rank-0.json")
json.dump({"traceEvents": ev}, open(p_, "w"))
p = subprocess.run(["./traceanalyze", "memory", "--no-cache", "--format", "csv", p_], capture_output=True,
                   text=True, timeout=20)
r = list(csv.DictReader(io.StringIO(p.stdout)))
check("damaged events: exit 0 and the step's peak is the running total (250)",
      p.returncode == 0 and r and int(r[0]["peak_bytes"]) == 250)
check("damaged events: each kind is said",
      "without \"Total Allocated\"" in p.stderr and "negative total" in p.stderr)
p = subprocess.run(["./traceanalyze", "memory", "--no-cache", "--by", "op", p_], capture_output=True, text=True,
                   timeout=20)
check("damaged events: --by counts the address allocated twice", p.returncode == 0 and "still allocated" in p.stderr)
for opt in ([], ["--by", "op"], ["--series"]):
    p = subprocess.run(["./traceanalyze", "memory", "--no-cache", *opt, p_], capture_output=True, text=True,
                       timeout=20)
    check("damaged events %s: the missing totals are said whatever the table" % opt,
          p.returncode == 0 and "without \"Total Allocated\"" in p.stderr)
# a size past a PiB: counted as 2^50 (sums must not overflow), and said
ev2 = ev + [mem(2200, 4, 1 << 60, 1 << 60), mem(2300, 4, -(1 << 60), 210)]
json.dump({"traceEvents": ev2}, open(p_, "w"))
for opt in ([], ["--by", "op"], ["--series"], ["--findings"]):
    p = subprocess.run(["./traceanalyze", "memory", "--no-cache", *opt, p_], capture_output=True, text=True,
                       timeout=20)
    check("a 2^60-byte allocation %s: said, not silently cut (%s)" % (opt, p.stderr.strip()[-80:]),
          p.returncode == 0 and "past 2^50 bytes" in p.stderr)
# a reserved total past a PiB alone: the same
ev3 = ev + [dict(mem(2200, 4, 8, 218), args=dict(mem(2200, 4, 8, 218)["args"], **{"Total Reserved": 1 << 60}))]
json.dump({"traceEvents": ev3}, open(p_, "w"))
p = subprocess.run(["./traceanalyze", "memory", "--no-cache", "--format", "csv", p_], capture_output=True,
                   text=True, timeout=20)
r = list(csv.DictReader(io.StringIO(p.stdout)))
check("a 2^60-byte Total Reserved: said, and counted as 2^50 (%s)" % p.stderr.strip()[-80:],
      p.returncode == 0 and "past 2^50 bytes" in p.stderr and r and
      max(int(x["reserved_peak_bytes"]) for x in r) == 1 << 50)

# total_bytes and increase_bytes: an op's calls with what runs under them.
# A (1000-1900) holds B (1100-1300): B allocates 100; A 50, frees B's 100
# and 30 bytes allocated before the trace: A's total 150, increase 20
def op(name, ts, dur):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
ev3 = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1,
        "ts": 5000 * (i - 1), "dur": 5000} for i in (1, 2)]
ev3 += [op("A", 1000, 900), op("B", 1100, 200), mem(1150, 1, 100, 1100), mem(1400, 2, 50, 1150),
        mem(1500, 1, -100, 1050), mem(1600, 3, -30, 1020)]
json.dump({"traceEvents": ev3}, open(p_, "w"))
r = {x["where"]: x for x in rows("--no-cache", "--by", "op", p_)}
check("nested ops: B allocates 100, total 100, increase 100 (%s)" % r.get("B"),
      r.get("B") and (r["B"]["bytes"], r["B"]["total_bytes"], r["B"]["increase_bytes"]) == ("100", "100", "100"))
check("nested ops: A allocates 50, total 150, increase 20 (%s)" % r.get("A"),
      r.get("A") and (r["A"]["bytes"], r["A"]["total_bytes"], r["A"]["increase_bytes"]) == ("50", "150", "20"))

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL memory:", n)
print(f"memory: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
