#!/usr/bin/env python3
"""traceanalyze ops against torch.profiler's own key_averages(), dumped in
on_trace_ready next to each capture in testdata/ (testdata/oracle/).

For every profiler row: the same count, and self/total CPU and device
times within 1 µs per call. GPU-side annotation rows (a CPU op's name with
no CPU time) are left out, as traceanalyze leaves them out. Checked plain
(with --kernels) and grouped by input shape.
"""
import csv
import fnmatch
import io
import json
import os
import subprocess
import sys

BIN = "./traceanalyze"
# Deliberate differences (see traceanalyze(1), ops): the profiler leaves
# kernels launched by cudaGraphLaunch unattributed; traceanalyze gives them
# to the op or range that issued the launch. There, the launching range's
# device time must equal the graph kernels' total instead.
GRAPH_ISSUER = {"decode_graph": "ProfilerStep*"}
# Under torch.compile's reduce-overhead the profiler gives a replay's
# kernels to the op whose External id the launch carries (the compiled
# region); traceanalyze to the range inside it that holds the call. There
# the two rows' self and total device time move by the replays' kernels.
GRAPH_MOVED = {"compiled_graphs": ("Torch-Compiled Region: *", "## Call CompiledFxGraph *")}
FIELDS = [("self_cpu_time_total", "self_cpu_us"), ("cpu_time_total", "cpu_us"),
          ("self_device_time_total", "self_device_us"), ("device_time_total", "device_us")]
# Captures with profile_memory=True (tools/capture/capture_ops_mem.py) dump
# the profiler's memory columns too: bytes, equal to the byte.
MEM_FIELDS = [("self_cpu_memory_usage", "self_cpu_mem_bytes"), ("cpu_memory_usage", "cpu_mem_bytes"),
              ("self_device_memory_usage", "self_device_mem_bytes"),
              ("device_memory_usage", "device_mem_bytes")]


def ours(case, extra):
    out = subprocess.run([BIN, "ops", "--kernels", "--format", "csv", "-q"] + extra +
                         [os.path.join("testdata", case)], capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def compare(case, oracle, rows, by_shape):  # noqa: C901
    key = (lambda n, s: (n, s)) if by_shape else (lambda n, s: n)
    mine = {key(r["name"], r.get("input_shapes", "")): r for r in rows}
    cpu_names = {o["key"] for o in oracle if o["cpu_time_total"] > 0}
    problems, checked = [], 0
    for o in oracle:
        if o["cpu_time_total"] == 0 and o["key"] in cpu_names:
            continue  # GPU-side copy of an annotation: left out by design
        k = key(o["key"], o["input_shapes"])
        r = mine.get(k)
        if r is None:
            problems.append(f"missing {k}")
            continue
        checked += 1
        if GRAPH_ISSUER.get(case) == o["key"] and o["cpu_time_total"] > 0:
            graph = sum(x["self_device_time_total"] for x in oracle if x["cpu_time_total"] == 0
                        and x["key"] not in cpu_names)
            for col in ("self_device_us", "device_us"):
                if abs(float(r[col]) - graph) > 1.0 * max(1, o["count"]):
                    problems.append(f"{k}: {col} {r[col]} vs graph kernels {graph:.3f}")
            continue
        if int(r["calls"]) != o["count"]:
            problems.append(f"{k}: calls {r['calls']} vs {o['count']}")
        moved = GRAPH_MOVED.get(case)
        region = moved and fnmatch.fnmatch(o["key"], moved[0])
        if moved and o["cpu_time_total"] > 0 and (region or fnmatch.fnmatch(o["key"], moved[1])):
            graph = sum(x["self_device_time_total"] for x in oracle
                        if fnmatch.fnmatch(x["key"], moved[0]) and x["cpu_time_total"] > 0)
            # the region loses them from its self time (its total holds
            # the range); the range gains them in both
            want = {"self_cpu_us": o["self_cpu_time_total"], "cpu_us": o["cpu_time_total"],
                    "self_device_us": o["self_device_time_total"] + (-graph if region else graph),
                    "device_us": o["device_time_total"] + (0 if region else graph)}
            for col, w in want.items():
                if abs(float(r[col]) - w) > 1.0 * max(1, o["count"]):
                    problems.append(f"{k}: {col} {r[col]} vs {w:.3f} (graph kernels moved)")
            continue
        for theirs, col in FIELDS:
            if abs(float(r[col]) - o[theirs]) > 1.0 * max(1, o["count"]):
                problems.append(f"{k}: {col} {r[col]} vs {o[theirs]:.3f}")
        for theirs, col in MEM_FIELDS:
            if theirs in o and int(r.get(col) or 0) != o[theirs]:
                problems.append(f"{k}: {col} {r.get(col)} vs {o[theirs]}")
                mem_checked.discard(case)
            elif theirs in o:
                mem_checked.add(case)
    return checked, problems


mem_checked = set()


def main():
    cases = sorted(f[:-len(".key_averages.json")] for f in os.listdir("testdata/oracle")
                   if f.endswith(".key_averages.json"))
    passed = failed = 0
    for case in cases:
        data = json.load(open(f"testdata/oracle/{case}.key_averages.json"))
        for by_shape, table, extra in ((False, "key_averages", []),
                                       (True, "by_input_shape", ["--group-by", "shape"])):
            checked, problems = compare(case, data[table], ours(case, extra), by_shape)
            if problems:
                failed += 1
                print(f"FAIL ops {case} {table}: {len(problems)} of {checked} rows differ: {problems[:4]}")
            else:
                passed += 1
                print(f"ops {case:14s} {table:15s} {checked} rows match")
    # a capture with memory columns, so that a lost column fails here
    if "ops_mem" not in mem_checked:
        failed += 1
        print("FAIL ops: no memory column compared on testdata/ops_mem")
    print(f"ops: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
