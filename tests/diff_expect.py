#!/usr/bin/env python3
"""diff on real captures: two identical runs (train_healthy and
healthy_rerun: the same script twice) flag nothing; the same model with
faults planted (train_stalled: a 15 ms data step, .item() syncs, pageable
copies) is named by what was planted. --hta-compat against HTA's own
trace_diff output (../shared), every row and every ops_diff list."""
import csv
import io
import os
import subprocess
import sys

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def diff(*args, rc=0):
    p = subprocess.run(["./traceanalyze", "diff", "-q", *args], capture_output=True, text=True)
    if p.returncode != rc:
        print(p.stderr)
    return p


def rows(*args):
    return list(csv.DictReader(io.StringIO(diff("--format", "csv", *args).stdout)))


H, R, S = "testdata/train_healthy", "testdata/healthy_rerun", "testdata/train_stalled"
for extra in ([], ["--base-steps", "3", "--test-steps", "3"], ["--base-steps", "2", "--test-steps", "2"]):
    r = rows(*extra, H, R)
    flagged = [x["name"] for x in r if x["flag"] == "1"]
    check("identical runs %s: nothing flagged (%d names, %s)" % (" ".join(extra) or "all steps", len(r), flagged[:3]),
          r and not flagged)
r = rows(H, S)
by = {(x["kind"], x["name"]): x for x in r}
check("planted: data_loading is new and flagged",
      by[("annotation", "data_loading")]["change"] == "added" and by[("annotation", "data_loading")]["flag"] == "1")
check("planted: the pageable copies are new",
      by[("gpu", "Memcpy HtoD (Pageable -> Device)")]["change"] == "added")
check("planted: .item()'s sync grows by its wait (%s us a step)" % by[("cpu", "aten::_local_scalar_dense")]["diff_us"],
      float(by[("cpu", "aten::_local_scalar_dense")]["diff_us"]) > 15000)
check("sorted by the size of the change",
      len(r) > 1 and all(abs(float(a["diff_us"])) >= abs(float(b["diff_us"])) for a, b in zip(r, r[1:])))
check("every name's change is its counts'", r and all(
    x["change"] == ("added" if float(x["base_count"]) == 0 else "deleted" if float(x["test_count"]) == 0
                    else "increased" if float(x["diff_count"]) > 0 else "decreased" if float(x["diff_count"]) < 0
                    else "unchanged") for x in r))
text = diff(H, S).stdout
lines = [l for l in text.splitlines() if "ms/step self" in l]
check("text: the two largest changes are the planted ones (%s)" % [l.split()[-1] for l in lines[:2]],
      len(lines) >= 2 and "aten::_local_scalar_dense" in lines[0] and "sleep" in lines[1])
check("text: the steps side by side", "compute-bound -> host-stalled" in text)
check("text on identical runs says so", "No change beyond noise" in diff(H, R).stdout)
steps = rows("--steps", H, S)
check("--steps: +%s %% a step" % steps[0]["diff_step_pct"], len(steps) == 1 and float(steps[0]["diff_step_pct"]) > 10)
check("--max-increase on diff's own columns trips on the stalled run",
      diff("--steps", "--max-increase", "step_us=5%", H, S, rc=1).returncode == 1)
check("... and not on the rerun",
      diff("--steps", "--max-increase", "step_us=5%", "--base-steps", "3", "--test-steps", "3", H, R).returncode == 0)
check("--fail-if on flag", diff("--fail-if", "flag == 1", H, S, rc=1).returncode == 1
      and diff("--fail-if", "flag == 1", H, R).returncode == 0)
check("--kind gpu: only GPU work", {x["kind"] for x in rows("--kind", "gpu", H, S)} == {"gpu"})
short = rows("--by", "short", "--kind", "gpu", H, S)
check("--by short: no template arguments", short and all("<" not in x["name"] for x in short))
p = diff(H, rc=2)
check("one path is exit 2, said", p.returncode == 2 and "expected BASE and TEST" in p.stderr)
p = diff("--lists", H, S, rc=2)
check("--lists without --hta-compat is exit 2", p.returncode == 2)

SHARED = os.environ.get("SHARED", "../shared")
C = os.path.join(SHARED, "testdata/hta/trace_diff_control")
T = os.path.join(SHARED, "testdata/hta/trace_diff_test")
E = os.path.join(SHARED, "testdata/hta-expected/trace_diff")
if os.path.isdir(C) and os.path.isdir(E):
    got = {}
    for x in rows("--hta-compat", "--lists", C, T):
        got.setdefault(x["change"], []).append(x["name"])
    for kind in ("added", "deleted", "increased", "decreased", "unchanged"):
        want = open(os.path.join(E, "ops_diff_%s.txt" % kind)).read().split("\n")
        want = [w for w in want if w]
        check("HTA ops_diff %s: %d names, in HTA's order (HTA: %d)" % (kind, len(got.get(kind, [])), len(want)),
              got.get(kind, []) == want)
    for f, extra in (("compare_traces.csv", []), ("compare_traces_short.csv", ["--by", "short"])):
        want = list(csv.DictReader(open(os.path.join(E, f))))
        key = "short_name" if extra else "name"
        mine = {x["name"]: x for x in rows("--hta-compat", *extra, C, T)}
        bad = [w[key] for w in want if w[key] not in mine
               or float(mine[w[key]]["base_count"]) != float(w["control_counts"])
               or float(mine[w[key]]["test_count"]) != float(w["test_counts"])
               or float(mine[w[key]]["base_us"]) != float(w["control_total_duration"])
               or float(mine[w[key]]["test_us"]) != float(w["test_total_duration"])]
        check("HTA %s: %d rows, %d differ (%s)" % (f, len(want), len(bad), bad[:2]),
              not bad and len(mine) == len(want))
else:
    print("diff: HTA's checks skipped: %s not found" % C)

# steps of 35, 1 and 1 ms: a step's share of the busy time is its time's,
# not a third (a mean of the steps' percentages said 61 %, not 7.6 %)
import json
import tempfile
g = tempfile.mkdtemp()
ev, t0 = [], 0
for k, (dur, busy) in enumerate(((35000, 1000), (1000, 900), (1000, 900), (1000, 0))):
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k + 1), "pid": 1,
               "tid": 1, "ts": t0, "dur": dur, "args": {}})
    if busy:
        ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t0 + 20,
                   "dur": busy, "args": {"device": 0, "stream": 7, "correlation": 100 + k}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": t0 + 10, "dur": 2, "args": {"correlation": 100 + k}})
    t0 += dur
with open(os.path.join(g, "rank-0.json"), "w") as f:
    json.dump({"traceEvents": ev}, f)
st = rows("--steps", g, g)
p = subprocess.run(["./traceanalyze", "temporal", "-q", "--format", "csv", g], capture_output=True, text=True)
tm = list(csv.DictReader(io.StringIO(p.stdout)))
if st and tm:
    share = 100 * (float(tm[0]["compute_us"]) + float(tm[0]["non_compute_us"])) / float(tm[0]["window_us"])
    check("--steps on steps of 35, 1 and 1 ms: busy %s %% is temporal's %.2f %%" % (st[0]["base_busy_pct"], share),
          abs(float(st[0]["base_busy_pct"]) - share) <= 0.01)
    check("--steps: idle a step %s us is temporal's idle over 3 steps" % st[0]["base_idle_us"],
          abs(float(st[0]["base_idle_us"]) - float(tm[0]["idle_us"]) / 3) <= 1)  # busy % to 2 places
    check("--steps: the verdict of the 35 ms step (%s)" % st[0]["base_verdict"],
          st[0]["base_verdict"] != "compute-bound")
else:
    check("--steps and temporal run on the generated steps", False)

# a step counts the GPU work launched in it, not work launched before the
# trace began that runs during the first step (grad_accum: 16.5 nt GEMMs
# a step, where each step launched 16); the same counts as kernels', per
# kept step
g = rows("testdata/grad_accum", "testdata/grad_accum")
p = subprocess.run(["./traceanalyze", "kernels", "-q", "--format", "csv", "testdata/grad_accum"],
                   capture_output=True, text=True)
kern = {r["name"]: int(r["count"]) for r in csv.DictReader(io.StringIO(p.stdout))}
p = subprocess.run(["./traceanalyze", "steps", "-q", "--format", "csv", "testdata/grad_accum"],
                   capture_output=True, text=True)
kept = sum(r["kept"] == "1" for r in csv.DictReader(io.StringIO(p.stdout)))
gemms = [r for r in g or [] if r["kind"] == "gpu" and "gemm" in r["name"]]
check("grad_accum: diff's GEMMs a step are kernels' over %d steps (%s)"
      % (kept, [(r["base_count"], kern.get(r["name"])) for r in gemms]),
      gemms and kept and all(float(r["base_count"]) * kept == kern.get(r["name"]) for r in gemms))

# helper-51: a trace with no runtime calls (no first call to compare
# with) keeps its GPU work; a sync's correlation 0 is no first launch
import gzip
import tempfile
def edited(edit):
    d = tempfile.mkdtemp()
    t = json.load(gzip.open("testdata/grad_accum/rank-0.pt.trace.json.gz", "rt"))
    edit(t)
    json.dump(t, open(os.path.join(d, "rank-0.json"), "w"))
    return d


def no_calls(t):
    t["traceEvents"] = [e for e in t["traceEvents"] if e.get("cat") not in ("cuda_runtime", "cuda_driver")]


def sync0(t):
    t["traceEvents"].append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1,
                             "tid": 1, "ts": t["traceEvents"][-1].get("ts", 0), "dur": 1,
                             "args": {"correlation": 0}})


# (without launch calls, work counts by its start: a GPU-bound step's
# last GEMMs start after its host range, 14.5 a step, not none)
for name, edit, want in (("no runtime calls", no_calls, lambda n: 14 <= n <= 16),
                         ("a sync of correlation 0", sync0, lambda n: n == 16)):
    r = rows("--kind", "gpu", "testdata/grad_accum", edited(edit))
    gemm = [x for x in r if "nt_align1" in x["name"]]
    check("grad_accum with %s: its GEMMs a step still counted (%s)"
          % (name, [(x["base_count"], x["test_count"]) for x in gemm]),
          gemm and all(want(float(x["test_count"])) for x in gemm))

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL diff:", n)
print(f"diff: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
