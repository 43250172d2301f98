#!/usr/bin/env python3
"""--tb-compat against the TensorBoard profiler plugin's own numbers.

usage: tb_conform.py --bin BIN --trace TRACE_DIR --expected OUT_DIR

OUT_DIR is what ../shared/tools/tb_oracle.py writes for TRACE_DIR (the
plugin's code run on it): a status.json naming each trace file's worker
and span, and one CSV per view. TRACE_DIR may also hold one such test per
subdirectory, with OUT_DIR the same subdirectories (../shared/testdata/tb
and tb-expected: the plugin's 27 test traces). Each file of a view that
has a --tb-compat counterpart is compared value by value with that
command's output on the worker's file alone; the rest are listed as not
compared, by view. Prints "N passed, M failed" and exits 1 on any
difference.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

# view file -> the command that gives it, and (plugin column, ours, kind)
VIEWS = {
    "kernels.csv": (["kernels"], [
        ("Name", "name", "text"),
        ("Tensor Cores Used", "tensor_cores_used", "text"),
        ("Calls", "calls", "int"),
        ("Total Duration (us)", "total_us", "int"),
        ("Mean Duration (us)", "mean_us", "int"),
        ("Max Duration (us)", "max_us", "int"),
        ("Min Duration (us)", "min_us", "int"),
        ("Mean Blocks Per SM", "blocks_per_sm", "real"),
        ("Mean Est. Achieved Occupancy (%)", "occupancy_pct", "real"),
    ]),
}
VIEWS["overview_steps.csv"] = (["overview"], [
    ("row", "row", "text"),
    ("step", "step", "text"),
    ("Kernel", "kernel_us", "real"),
    ("Memcpy", "memcpy_us", "real"),
    ("Memset", "memset_us", "real"),
    ("Communication", "communication_us", "real"),
    ("Runtime", "runtime_us", "real"),
    ("DataLoader", "dataloader_us", "real"),
    ("CPU Exec", "cpu_exec_us", "real"),
    ("Other", "other_us", "real"),
    ("Total", "total_us", "real"),
    ("shown_columns", "shown_columns", "text"),
])
OPS = [
    ("name", "name", "text"),
    ("calls", "calls", "int"),
    ("device_self_duration", "self_device_us", "int"),
    ("device_total_duration", "device_us", "int"),
    ("host_self_duration", "self_cpu_us", "int"),
    ("host_total_duration", "cpu_us", "int"),
    ("tc_eligible", "tc_eligible", "text"),
    ("tc_self_ratio", "tc_self_pct", "real"),
    ("tc_total_ratio", "tc_pct", "real"),
]
VIEWS["operators.csv"] = (["ops"], OPS)
VIEWS["operators_shape.csv"] = (["ops", "--group-by", "shape"],
                                OPS[:1] + [("input_shape", "input_shape", "text")] + OPS[1:])
VIEWS["kernels_by_op.csv"] = (["kernels", "--by", "op"], [
    ("Name", "name", "text"),
    ("Operator", "op", "text"),
    ("Grid", "grid", "text"),
    ("Block", "block", "text"),
    ("Register Per Thread", "registers", "real"),
    ("Shared Memory", "shared_mem", "real"),
    ("Kernel Uses Tensor Cores", "tensor_cores_used", "text"),
    ("Op is Tensor Cores eligible", "op_tc_eligible", "text"),
    ("Calls", "calls", "int"),
    ("Total Duration (us)", "total_us", "real"),
    ("Mean Duration (us)", "mean_us", "int"),
    ("Max Duration (us)", "max_us", "real"),
    ("Min Duration (us)", "min_us", "real"),
    ("Mean Blocks Per SM", "blocks_per_sm", "real"),
    ("Mean Est. Achieved Occupancy (%)", "occupancy_pct", "real"),
])
VIEWS["gpu_metrics.csv"] = (["overview", "--summary"], [
    ("gpu", "gpu", "text"),
    ("title", "title", "text"),
    ("value", "value", "text"),
    ("raw", "raw", "real"),
])
VIEWS["modules.csv"] = (["modules"], [
    ("path", "path", "text"),
    ("depth", "depth", "int"),
    ("name", "name", "text"),
    ("occurences", "occurrences", "int"),
    ("operators", "operators", "int"),
    ("host_duration", "host_us", "real"),
    ("self_host_duration", "self_host_us", "real"),
    ("device_duration", "device_us", "real"),
    ("self_device_duration", "self_device_us", "real"),
    ("id", "module_id", "int"),
    ("avg_duration", "avg_us", "real"),
])
VIEWS["memory_stats.csv"] = (["memory", "--by", "op"], [
    ("device", "device", "text"),
    ("Operator Name", "name", "text"),
    ("Calls", "calls", "int"),
    ("Size Increase (KB)", "increase_kb", "real"),
    ("Self Size Increase (KB)", "self_increase_kb", "real"),
    ("Allocation Count", "allocs", "int"),
    ("Self Allocation Count", "self_allocs", "int"),
    ("Allocation Size (KB)", "alloc_kb", "real"),
    ("Self Allocation Size (KB)", "self_alloc_kb", "real"),
    ("Size Increase (B)", "increase_bytes", "real"),
    ("Self Size Increase (B)", "self_increase_bytes", "real"),
    ("Allocation Size (B)", "alloc_bytes", "real"),
    ("Self Allocation Size (B)", "self_alloc_bytes", "real"),
])
# tb_oracle.py writes the curve's values rounded to 6 decimals (r6)
VIEWS["memory_curve.csv"] = (["memory", "--series"], [
    ("device", "device", "text"),
    ("time_ms", "time_ms", "r6"),
    ("allocated_MB", "allocated_mb", "r6"),
    ("reserved_MB", "reserved_mb", "r6"),
])
# the Distributed view: every worker of a span at once (the command run on
# the trace directory), rows matched by their keys
JOINT = {
    "distributed.csv": (["overlap", "--by", "step"], ("step", "worker"), [
        ("Computation", "computation_us", "real"),
        ("Overlapping", "overlapping_us", "real"),
        ("Communication", "communication_us", "real"),
        ("Other", "other_us", "real"),
    ]),
    "distributed_wait.csv": (["comms", "--by", "step"], ("step", "worker"), [
        ("Data Transfer Time", "transfer_us", "real"),
        ("Synchronizing Time", "synchronizing_us", "real"),
    ]),
    "comm_ops.csv": (["comms"], ("worker", "Name"), [
        ("Calls", "calls", "int"),
        ("Total Size (bytes)", "size_bytes", "real"),
        ("Avg Size (bytes)", "avg_size_bytes", "real"),
        ("Total Latency (us)", "latency_us", "real"),
        ("Avg Latency (us)", "avg_latency_us", "real"),
        ("Data Transfer Time (us)", "transfer_us", "real"),
        ("Avg Data Transfer Time (us)", "avg_transfer_us", "real"),
    ]),
}
OURS_KEY = {"step": "step", "worker": "worker", "Name": "name"}
# views whose row order among equal sort keys is the plugin's machine's:
# the Kernel view sorts with pandas' sort_values (numpy's quicksort, not
# stable, SIMD-dispatched by CPU): rows are matched by this column, and
# ours must be in order of the total
UNORDERED = {"kernels.csv": ("Name", "Total Duration (us)")}
TOP_N = 200  # tb_oracle.py writes the first 200 rows of a table
UNTRIMMED = {"memory_curve.csv"}  # ... but the memory curve whole

passed = failed = 0
not_compared = {}


def fail(msg):
    global failed
    failed += 1
    print("FAIL tb_conform: " + msg)


def same(kind, want, got):
    if kind == "text":
        return want == got
    if want in ("", "None", "nan") or got == "":
        return want in ("", "None", "nan") and got == ""
    if kind == "r6":
        return abs(float(want) - round(float(got), 6)) <= 1e-9 * max(1.0, abs(float(want)))
    if kind == "int":
        return float(want) == float(got) and float(got) == int(float(got))
    return abs(float(want) - float(got)) <= 1e-9 * max(1.0, abs(float(want)))


def ours(binary, args, path):
    env = dict(os.environ, TRACEANALYZE_CACHE_DIR=tempfile.mkdtemp())
    r = subprocess.run([binary] + args + ["--tb-compat", "--format", "csv", "-q", path],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return list(csv.DictReader(io.StringIO(r.stdout))), None


def compare_view(test, view, binary, trace_dir, expected, files, status):
    global passed
    args, columns = VIEWS[view]
    with open(os.path.join(expected, view), newline="") as f:
        want_all = list(csv.DictReader(f))
    for entry in files:
        worker, span = entry["worker"], "" if entry["span"] is None else str(entry["span"])
        want = [r for r in want_all if r["worker"] == worker and r["span"] == span]
        total = status.get("rows_total", {}).get("%s[%s/%s]" % (view, worker, entry["span"]))
        got, err = ours(binary, args, os.path.join(trace_dir, entry["file"]))
        where = "%s %s %s" % (test, view, worker + ("." + span if span else ""))
        if got is None:
            fail("%s: %s" % (where, err))
            continue
        if isinstance(total, dict):  # memory_stats: rows per device
            total = sum(total.values())
        if total is not None and len(got) != total:
            fail("%s: %d rows, the plugin %d" % (where, len(got), total))
            continue
        bad = 0
        top = len(got) if view in UNTRIMMED else TOP_N
        pairs = list(zip(want, got[:top]))
        if view in UNORDERED:
            k, total = UNORDERED[view]
            mine = {g.get(dict(((t, m) for t, m, _ in columns))[k]): g for g in got}
            pairs = [(w, mine.get(w[k], {})) for w in want]
            ours_total = [float(g[dict(((t, m) for t, m, _ in columns))[total]]) for g in got]
            if any(a < b for a, b in zip(ours_total, ours_total[1:])):
                fail("%s: our rows are not in order of %s" % (where, total))
                bad += 1
        for i, (w, g) in enumerate(pairs):
            for theirs, mine, kind in columns:
                wv = w.get(theirs, "")  # a column the plugin leaves out: ours empty
                if not same(kind, wv, g.get(mine, "")):
                    fail("%s row %d %s: plugin %r, ours %r" % (where, i + 1, theirs, wv, g.get(mine)))
                    bad += 1
        if len(want) != min(len(got), top):
            fail("%s: %d rows compared, the plugin wrote %d" % (where, min(len(got), top), len(want)))
            bad += 1
        if not bad:
            passed += 1


def compare_joint(test, view, binary, trace_dir, expected, files):
    global passed
    args, keys, columns = JOINT[view]
    with open(os.path.join(expected, view), newline="") as f:
        want_all = list(csv.DictReader(f))
    for span in sorted({e["span"] for e in files}, key=lambda s: -1 if s is None else s):
        label = "default" if span is None else str(span)
        want = [r for r in want_all if r["span"] == label]
        extra = [] if span is None else ["--span", str(span)]
        got, err = ours(binary, args + extra, trace_dir)
        where = "%s %s%s" % (test, view, "" if span is None else " span " + label)
        if got is None:
            fail("%s: %s" % (where, err))
            continue
        mine = {tuple(g[OURS_KEY[k]] for k in keys): g for g in got}
        bad = 0
        if len(mine) != len(got):
            fail("%s: %d of our rows repeat a key" % (where, len(got) - len(mine)))
            bad += 1
        for w in want:
            key = tuple(w[k] for k in keys)
            g = mine.pop(key, None)
            if g is None:
                fail("%s: no row %r" % (where, key))
                bad += 1
                continue
            for theirs, ours_col, kind in columns:
                if not same(kind, w[theirs], g.get(ours_col, "")):
                    fail("%s %r %s: plugin %r, ours %r" % (where, key, theirs, w[theirs], g.get(ours_col)))
                    bad += 1
        for key in mine:
            fail("%s: our row %r, none in the plugin's" % (where, key))
            bad += 1
        if not bad:
            passed += 1


def run_test(test, binary, trace_dir, expected):
    with open(os.path.join(expected, "status.json")) as f:
        status = json.load(f)
    files = status["files"]
    for view in sorted(os.listdir(expected)):
        if not view.endswith(".csv"):
            continue
        if view in VIEWS:
            compare_view(test, view, binary, trace_dir, expected, files, status)
        elif view in JOINT:
            compare_joint(test, view, binary, trace_dir, expected, files)
        else:
            not_compared[view] = not_compared.get(view, 0) + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--expected", required=True)
    a = ap.parse_args()
    if os.path.exists(os.path.join(a.expected, "status.json")):
        run_test(os.path.basename(a.expected.rstrip("/")), a.bin, a.trace, a.expected)
    else:
        for test in sorted(os.listdir(a.expected)):
            if os.path.exists(os.path.join(a.expected, test, "status.json")):
                run_test(test, a.bin, os.path.join(a.trace, test), os.path.join(a.expected, test))
    if not_compared:
        print("tb_conform: not compared (no --tb-compat view yet): " +
              ", ".join("%s (%d)" % (v, n) for v, n in sorted(not_compared.items())))
    print("tb_conform: %d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
