#!/usr/bin/env python3
"""stragglers, diagnose's wait_for_peer and overlap's exposed_us on the
real two-GPU NCCL captures (tools/capture/capture_nccl.py; what was
measured with the profiler off is in testdata/oracle/), and on synthetic
many-rank jobs with planted stragglers and clock offsets (tools/ranks.py)."""
import csv
import io
import gzip
import json
import os
import subprocess
import sys
import tempfile

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def table(cmd, path, *extra):
    out = subprocess.run(["./traceanalyze", cmd, "-q", "--format", "csv", *extra, path],
                         capture_output=True, text=True, check=True).stdout
    return list(csv.DictReader(io.StringIO(out)))


def measured(case):
    return json.load(open("testdata/oracle/%s.measured.json" % case))["ranks"]


# the planted straggler: rank 1 sleeps 30 ms a step in data_loading; with
# the profiler off that made every step 22.2 ms longer (not 30: its GPU
# still ran queued work during part of the sleep), which is what late_us
# must say, not how far behind the first member it arrived (arrival_us)
m = measured("ddp_straggler")
planted = m[1]["sleep_us_per_step"]
cost = m[0]["step_wall_us"] - m[0]["step_wall_us_without_sleep"]
s = table("stragglers", "testdata/ddp_straggler")
r1 = [r for r in s if r["rank"] == "1"]
check("straggler: rank 1 is the straggler in every step", r1 and all(r["straggler"] == "1" for r in r1))
r0 = [r for r in s if r["rank"] == "0"]
check("straggler: rank 0 never is", r0 and all(r["straggler"] == "0" for r in r0))
for r in r1:
    late = float(r["late_us"])
    check("straggler: step %s late_us %.0f within 15%% of the measured cost %.0f (planted sleep %.0f)" % (
          r["step"], late, cost, planted), abs(late - cost) <= 0.15 * cost)
    check("straggler: step %s cause is its data loading" % r["step"], r["cause"] == "host_region: data_loading")
mean = sum(float(r["late_us"]) for r in r1) / max(len(r1), 1)
check("straggler: mean late_us %.0f within 5%% of the measured cost %.0f" % (mean, cost),
      abs(mean - cost) <= 0.05 * cost)
check("straggler: rank 0's waits are rank 1's lateness",
      all(abs(float(a["wait_us"]) - float(b["late_us"])) < 1 and a["waited_for"] == "1" for a, b in
          zip([r for r in s if r["rank"] == "0"], r1)))
check("straggler: arrival_us is the raw lateness, above what the step lost",
      all(float(r["arrival_us"]) > float(r["late_us"]) for r in r1))
text = subprocess.run(["./traceanalyze", "stragglers", "-q", "testdata/ddp_straggler"],
                      capture_output=True, text=True, check=True).stdout
check("straggler: the text leads with the culprit",
      "rank 1 holds the others back: they lose" in text and "host_region: data_loading" in text.split("\n")[2])
notes = subprocess.run(["./traceanalyze", "stragglers", "testdata/ddp_straggler"],
                       capture_output=True, text=True, check=True).stderr
offs = [float(l.split("clock offset ")[1].split(" ms")[0]) for l in notes.splitlines() if "clock offset" in l]
check("one host: both clock offsets within 0.1 ms of zero (%s)" % offs, len(offs) == 2 and all(abs(o) < 0.1 for o in offs))
only1 = table("stragglers", "testdata/ddp_straggler", "--ranks", "1")
check("--ranks 1: its rows only, still matched with rank 0", only1 and all(r["rank"] == "1" and r["straggler"] == "1" for r in only1))

# ddp_dataload (tools/recipes/torchrun_ingest.py): rank 1 sleeps 20 ms a
# step in data_loading, then DDP's forward queries its events (a few
# cudaEventSynchronize that return at once: the GPU was already idle).
# The sleep is the cause, not those calls.
s = table("stragglers", "testdata/ddp_dataload")
r1 = [r for r in s if r["rank"] == "1"]
check("ddp_dataload: rank 1 is the straggler, late by the sleep (%s us)" % [r["late_us"] for r in r1],
      r1 and all(r["straggler"] == "1" and 18000 <= float(r["late_us"]) <= 25000 for r in r1))
check("ddp_dataload: its cause is data loading, not the calls DDP's forward makes after it (%s)" % (
      [r["cause"] for r in r1]), r1 and all(r["cause"] == "host_region: data_loading" for r in r1))
f = [r for r in table("diagnose", "testdata/ddp_dataload", "--findings", "--ranks", "1") if r["kind"] == "sync"]
check("ddp_dataload: no sync finding on rank 1 (%s)" % [(r["where"], r["cost_us"]) for r in f], not f)

# advice reads words, not letters: DistributedDataParallel is not data loading
f = table("diagnose", "testdata/ddp_dataload", "--findings")
ddp = [r for r in f if r["kind"] == "host_region" and r["where"].startswith("DistributedDataParallel")]
data = [r for r in f if r["kind"] == "host_region" and r["where"] == "data_loading"]
check("ddp_dataload: DDP's forward is not given data-loading advice (%s)" % [r["advice"][:40] for r in ddp],
      all("data loading" not in r["advice"] and "other ranks" in r["advice"] for r in ddp))
# its first step's hole in DDP's forward: queued behind warm-up's all-reduce,
# which waited for rank 1 (a collective launched before the trace)
w = [r for r in f if r["rank"] == "0" and r["step"] == "2" and r["kind"] == "wait_for_peer"]
check("ddp_dataload: rank 0's first step waits for rank 1 (%s)" % [(r["where"], r["cost_us"]) for r in w],
      w and w[0]["where"].startswith("rank 1") and float(w[0]["cost_us"]) > 18000)
check("ddp_dataload: data_loading is", data and all(r["advice"].startswith("data loading stalls") for r in data))

# diagnose on the waiting rank names the late one and its cause
d = table("diagnose", "testdata/ddp_straggler")
last = [r for r in d if r["rank"] == "0"][-1]
check("diagnose: rank 0's steady step waits for rank 1 (%s)" % last["main_cause"],
      last["verdict"] == "waiting-for-peer" and last["main_cause"] == "wait_for_peer: rank 1 (host_region: data_loading)")
check("diagnose: no step of rank 0 is communication-bound", all(r["verdict"] != "communication-bound" for r in d))
f = table("diagnose", "testdata/ddp_straggler", "--findings")
check("diagnose: rank 0 has a wait_for_peer finding in every step",
      {r["step"] for r in f if r["rank"] == "0" and r["kind"] == "wait_for_peer" and r["where"].startswith("rank 1")}
      == {r["step"] for r in d if r["rank"] == "0"})

# balanced: nobody is the straggler
b = table("stragglers", "testdata/ddp_balanced")
check("balanced: no straggler", b and all(r["straggler"] == "0" for r in b))
# under --late-pct: no straggler, but the cost is said, not "hidden"
text = subprocess.run(["./traceanalyze", "stragglers", "-q", "--late-pct", "60", "testdata/ddp_straggler"],
                      capture_output=True, text=True, check=True).stdout
check("--late-pct 60: the cost under the threshold is said (%s)" % text.splitlines()[2],
      "no straggler past --late-pct: the most, rank 1, costs the others 21.7 ms" in text)
p = subprocess.run(["./traceanalyze", "stragglers", "-q", "--ranks", "5", "testdata/ddp_straggler"],
                   capture_output=True, text=True)
check("--ranks 5 on two ranks: exit 3, named (%d)" % p.returncode,
      p.returncode == 3 and "rank 5 is not in the trace" in p.stderr)
# gloo (tools/capture/capture_gloo.py; one GPU shared by both ranks): DDP
# through gloo, rank 1 sleeps 30 ms a step in data_loading. gloo's
# collectives are CPU ranges on its worker threads, matched across ranks
# where distributedInfo.pg_config names the one gloo group; with the
# profiler off the sleep made every step 30.1 ms longer
m = measured("gloo_straggler")
cost = m[0]["step_wall_us"] - m[0]["step_wall_us_without_sleep"]
s = table("stragglers", "testdata/gloo_straggler")
r0 = [r for r in s if r["rank"] == "0"]
r1 = [r for r in s if r["rank"] == "1"]
check("gloo: rank 1 is the straggler in every step, rank 0 in none",
      r1 and r0 and all(r["straggler"] == "1" for r in r1) and all(r["straggler"] == "0" for r in r0))
for r in r1:
    check("gloo: step %s late_us %.0f within 15%% of the measured cost %.0f" % (
          r["step"], float(r["late_us"]), cost), abs(float(r["late_us"]) - cost) <= 0.15 * cost)
mean = sum(float(r["late_us"]) for r in r1) / max(len(r1), 1)
check("gloo: mean late_us %.0f within 10%% of the measured cost %.0f" % (mean, cost),
      abs(mean - cost) <= 0.10 * cost)
check("gloo: rank 0's waits are rank 1's lateness, and its cause is the sleep",
      all(abs(float(a["wait_us"]) - float(b["late_us"])) < 1 and a["waited_for"] == "1" and
          b["cause"] == "host_region: data_loading" for a, b in zip(r0, r1)))
d = table("diagnose", "testdata/gloo_straggler")
check("gloo: diagnose says rank 0 waits for rank 1 (%s)" % [r["main_cause"] for r in d if r["rank"] == "0"],
      all(r["verdict"] == "waiting-for-peer" and
          r["main_cause"] == "wait_for_peer: rank 1 (host_region: data_loading)" for r in d if r["rank"] == "0"))
f = table("diagnose", "testdata/gloo_straggler", "--findings", "--ranks", "0")
tr = [r for r in f if r["kind"] == "host_region" and r["where"] == "gloo:all_reduce"]
wb = [r for r in f if r["kind"] == "host_region" and r["where"] == "within backward"]
check("gloo: rank 0's transfer after the wait is the collective's (%s), not 'within backward' (%s)" % (
      [r["cost_us"] for r in tr], [r["cost_us"] for r in wb]),
      tr and all(float(r["cost_us"]) > 5000 for r in tr) and all(float(r["cost_us"]) < 2000 for r in wb))
c = table("critical-path", "testdata/gloo_straggler", "--ranks", "0")
check("gloo: rank 0's critical path runs on rank 1 (%s)" % [(r["on_peers_us"], r["path_us"]) for r in c],
      c and all(float(r["on_peers_us"]) > 0.6 * float(r["path_us"]) for r in c))
cm = table("comms", "testdata/gloo_straggler")
check("gloo: comms lists the all-reduces of group 0 with their waits (%s)" % [(r["rank"], r["wait_us"]) for r in cm],
      len(cm) == 2 and all(r["group"] == "0 (gloo)" and r["name"] == "gloo:all_reduce" and r["in_bytes"]
                           for r in cm) and float(cm[0]["wait_us"]) > 3 * cost)
b = table("stragglers", "testdata/gloo_balanced")
check("gloo balanced: no straggler, waits under 5 %% of a step (%s)" % [r["wait_us"] for r in b],
      b and all(r["straggler"] == "0" and float(r["wait_us"]) < 0.05 * float(r["step_us"]) for r in b))
# a gloo trace that does not name its group: nothing matched, nothing
# measured: empty, and a gate on it trips
nog = tempfile.mkdtemp()
for r in (0, 1):
    d = json.load(gzip.open("testdata/two_ranks/rank-%d.pt.trace.json.gz" % r))
    d["distributedInfo"].pop("pg_config", None)
    json.dump(d, open(os.path.join(nog, "rank-%d.json" % r), "w"))
g = table("stragglers", nog, "--no-cache")
check("gloo without pg_config: comm to straggler empty", g and all(r[c] == "" for r in g for c in
      ("comm_us", "wait_us", "late_us", "arrived_last", "straggler")))
p = subprocess.run(["./traceanalyze", "stragglers", "-q", "--no-cache", "--fail-if", "straggler == 1", nog],
                   capture_output=True, text=True)
check("gloo without pg_config: a gate on straggler does not pass (%d)" % p.returncode, p.returncode != 0)
p = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", nog], capture_output=True, text=True)
check("gloo without pg_config: the warning says why", "names a single gloo group" in p.stderr)
# bucketed DDP, balanced: rank 1 is last to every all-reduce (7.7 ms a step
# behind rank 0), but rank 0's NCCL kernels wait under its backward pass;
# with the profiler off both ranks' steps are equal, so nobody is late
b = table("stragglers", "testdata/ddp_bucketed")
m = measured("ddp_bucketed")
check("bucketed: the measured steps are equal (%.0f, %.0f us)" % (m[0]["step_wall_us"], m[1]["step_wall_us"]),
      abs(m[0]["step_wall_us"] - m[1]["step_wall_us"]) < 0.01 * m[0]["step_wall_us"])
check("bucketed: rank 1 arrives last to every collective, thousands of us behind",
      all(float(r["arrived_last"]) == 1 and float(r["arrival_us"]) > 5000 for r in b if r["rank"] == "1"))
check("bucketed: yet no straggler, late_us under 1 %% of the step (%s)" % [r["late_us"] for r in b],
      b and all(r["straggler"] == "0" and float(r["late_us"]) < 0.01 * float(r["step_us"]) for r in b))
text = subprocess.run(["./traceanalyze", "stragglers", "-q", "testdata/ddp_bucketed"],
                      capture_output=True, text=True, check=True).stdout
check("bucketed: the text says why rank 1 is not the straggler",
      "no straggler: rank 1 arrives late" in text and "under their own work" in text)
ov = {r["rank"]: float(r["wait_us"]) for r in table("overlap", "testdata/ddp_bucketed")}
check("bucketed: stragglers' wait_us over the steps is overlap's wait_us (%s)" % ov,
      all(abs(sum(float(r["wait_us"]) for r in b if r["rank"] == k) - v) < 1 for k, v in ov.items()))

# exposed communication is what computation waits for
one = measured("ddp_onebucket")[0]
steady = [r for r in table("diagnose", "testdata/ddp_onebucket") if r["step"] == "3"]
check("one bucket: communication-bound", steady and all(r["verdict"] == "communication-bound" for r in steady))
for r in steady:
    ex = float(r["cause_us"])
    check("one bucket: rank %s exposed %.0f us within 25%% of the all-reduce alone %.0f us" % (r["rank"], ex, one["allreduce_alone_us"]),
          abs(ex - one["allreduce_alone_us"]) <= 0.25 * one["allreduce_alone_us"])
    check("one bucket: rank %s exposed %.0f us within 25%% of the measured %.0f us" % (r["rank"], ex, one["exposed_comm_us"]),
          abs(ex - one["exposed_comm_us"]) <= 0.25 * one["exposed_comm_us"])
# 25 MB buckets hide 95 % of the all-reduces, yet cost 11.1 ms of a 78.4 ms
# step (the step less the step under no_sync): NCCL slows the GEMMs beside
# it and DDP's reducer scales every bucket. diagnose says what overlap says
bk = [r for r in table("diagnose", "testdata/ddp_bucketed") if r["step"] == "3"]
want = measured("ddp_bucketed")[0]["exposed_comm_us"]
check("bucketed: the steady step's communication costs %s us, measured %.0f (25 %%)" % (
      [r["cause_us"] for r in bk], want), bk and all(r["verdict"] == "communication-bound" and
                                                  abs(float(r["cause_us"]) - want) <= 0.25 * want for r in bk))
ov = table("overlap", "testdata/ddp_onebucket")
check("overlap: one bucket's exposed_us is all its communication (HTA's overlap 0 %)",
      ov and all(abs(float(r["exposed_us"]) - float(r["comm_us"])) < 1 for r in ov))
# exposed_us is what communication cost the step: waited for, or slowing
# the computation beside it (slowed_us); per kept step against the step
# less the step without gradient sync, measured with the profiler off
for case in ("ddp_onebucket", "ddp_bucketed"):
    m = measured(case)
    for r in table("overlap", "testdata/" + case):
        nsteps = len([s for s in table("steps", "testdata/" + case) if s["rank"] == r["rank"] and s["kept"] == "1"])
        per = float(r["exposed_us"]) / nsteps
        want = m[int(r["rank"])]["exposed_comm_us"]
        check("overlap: %s rank %s exposed %.0f us a step against the measured %.0f (25 %% or 2 ms)" % (
              case, r["rank"], per, want), abs(per - want) <= max(0.25 * want, 2000))
check("overlap --hta-compat keeps HTA's columns",
      list(table("overlap", "testdata/ddp_bucketed", "--hta-compat")[0]) ==
      ["rank", "comm_us", "compute_us", "overlap_us", "overlap_pct"])

# synthetic: 8 ranks with clocks 1.5 ms apart, rank 5 planted 20 ms late
d = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", d, "8", "5", "20000"], check=True)
s = table("stragglers", d, "--no-cache")
check("synthetic: rank 5 and only it is the straggler, every step",
      s and all((r["straggler"] == "1") == (r["rank"] == "5") for r in s))
check("synthetic: its lateness is the planted 20 ms (+ the others' few us)",
      all(19990 <= float(r["late_us"]) <= 20100 for r in s if r["rank"] == "5"))
notes = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", d], capture_output=True, text=True).stderr
check("synthetic: offsets 1.5 ms apart recovered",
      all("rank %d: clock offset %+.3f ms" % (r, 1.5 * r) in notes for r in range(8)))

# 40 ranks as torch writes them: the member list cut after 30 ("[0, ...,
# 29, ...]"), the group's size in "Group size". With 5 ranks' traces
# missing the job is still known to have 40: warned, and a gate fails
# (the cut list's length, 31, once hid the missing ranks)
g = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", g, "40", "7", "20000", "2", "2"], check=True)
t = json.load(gzip.open(os.path.join(g, "rank-0.json.gz"), "rt"))
check("ranks.py writes torch's cut list and the group's size",
      any(e["name"] == "record_param_comms" and e["args"]["Process Group Ranks"].endswith("29, ...]")
          and e["args"]["Group size"] == 40 for e in t["traceEvents"]))
for r in range(35, 40):
    os.remove(os.path.join(g, "rank-%d.json.gz" % r))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--fail-if", "late_us > 1e9", g],
                   capture_output=True, text=True)
check("40 ranks, 5 missing: warned (%s)" % r.stderr.strip().splitlines()[:1],
      "name 5 ranks with no collective here" in r.stderr)
check("... and the gate does not pass (exit %d)" % r.returncode, r.returncode != 0)
# without "Group size", a cut list says nothing of the group's size, but
# distributedInfo.world_size says the job's; without either, no claim
for name in os.listdir(g):
    path = os.path.join(g, name)
    t = json.load(gzip.open(path, "rt"))
    for e in t["traceEvents"]:
        if e["name"] == "record_param_comms":
            del e["args"]["Group size"]
    json.dump(t, gzip.open(path, "wt"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--fail-if", "late_us > 1e9", g],
                   capture_output=True, text=True)
check("no Group size, a cut list, world_size 40: 5 missing (exit %d)" % r.returncode,
      "name 5 ranks with no collective here" in r.stderr and r.returncode != 0)
for name in os.listdir(g):
    path = os.path.join(g, name)
    t = json.load(gzip.open(path, "rt"))
    del t["distributedInfo"]["world_size"]
    json.dump(t, gzip.open(path, "wt"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", g], capture_output=True, text=True)
check("no Group size, a cut list, no world_size: no missing ranks claimed (exit %d)" % r.returncode,
      r.returncode == 0 and "no collective here" not in r.stderr)
h = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", h, "8", "5", "20000", "2", "2"], check=True)
for name in os.listdir(h):
    path = os.path.join(h, name)
    t = json.load(gzip.open(path, "rt"))
    for e in t["traceEvents"]:
        if e["name"] == "record_param_comms":
            del e["args"]["Group size"]
    json.dump(t, gzip.open(path, "wt"))
os.remove(os.path.join(h, "rank-6.json.gz"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", h], capture_output=True, text=True)
check("no Group size, an uncut list of 8, 7 traces: 1 rank missing (%s)" % r.stderr.strip().splitlines()[:1],
      "name 1 rank with no collective here" in r.stderr)

# a 2-D mesh (tensor-parallel pairs x data-parallel fours, no world-wide
# collective) with rank 7's trace missing: its pair's group says 2 and
# holds one rank, though the job's largest group (4) is smaller than the 7
# traces (once compared with those alone: the gate passed)
m = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", m, "8", "2", "20000", "2", "2"], check=True)
for r in range(8):
    path = os.path.join(m, "rank-%d.json.gz" % r)
    t = json.load(gzip.open(path, "rt"))
    for e in t["traceEvents"]:
        if e["name"] == "record_param_comms":
            a = e["args"]
            tp = a["External id"] % 2 == 1
            g = [r // 2 * 2, r // 2 * 2 + 1] if tp else [r % 2, r % 2 + 2, r % 2 + 4, r % 2 + 6]
            a["Process Group Name"] = ("tp%d" % (r // 2)) if tp else ("dp%d" % (r % 2))
            a["Group size"], a["Process Group Ranks"] = len(g), str(g)
    json.dump(t, gzip.open(path, "wt"))
os.remove(os.path.join(m, "rank-7.json.gz"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--fail-if", "late_us > 1e9", m],
                   capture_output=True, text=True)
check("a 2-D mesh, rank 7 missing: its pair's group names it (exit %d)" % r.returncode,
      "name 1 rank with no collective here" in r.stderr and r.returncode != 0)

# a collective whose size differs on one rank is not paired
path = os.path.join(d, "rank-3.json.gz")
import gzip
t = json.load(gzip.open(path, "rt"))
for e in t["traceEvents"]:
    if e["name"] == "record_param_comms":
        e["args"]["In msg nelems"] = 7
        break
json.dump(t, gzip.open(path, "wt"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--format", "csv", d], capture_output=True, text=True)
check("mismatched sizes: warned about and left out",
      r.returncode == 0 and "1 collectives disagree across ranks" in r.stderr)

# one rank: a collective runs while computation is idle; computation
# resumes 10 us after it ends (waited: exposed) or 5 ms after (the host
# was late: not exposed, the time is the host's)
def one_rank(resume_at):
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % i, "pid": 1, "tid": 1,
           "ts": 20000 * i, "dur": 20000} for i in (1, 2)]
    k = {"ph": "X", "pid": 0, "tid": 7, "cat": "kernel"}
    ev += [dict(k, name="gemm", ts=20000, dur=1000, args={"stream": 7, "correlation": 1}),
           dict(k, name="ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts=21000, dur=2000, tid=17,
                args={"stream": 17, "correlation": 2}),
           dict(k, name="gemm", ts=23000 + resume_at, dur=1000, args={"stream": 7, "correlation": 3})]
    path = os.path.join(tempfile.mkdtemp(), "rank-0.json")
    json.dump({"traceEvents": ev}, open(path, "w"))
    return path
for resume, want in ((10, 2000), (5000, 0)):
    ov = table("overlap", one_rank(resume), "--no-cache")
    check("a collective computation resumes %d us after: exposed_us %s, want %d" % (resume, ov[0]["exposed_us"], want),
          abs(float(ov[0]["exposed_us"]) - want) < 0.01)
v = table("diagnose", one_rank(5000), "--no-cache")
check("computation idle for the host while a collective runs: host-stalled, not communication-bound",
      v and v[0]["verdict"] == "host-stalled")

# the host blocked on the collective (all_reduce, then .item()): a sync
# that returns as it ends makes it exposed whenever computation resumes,
# from when the sync began (before, the host was busy with other work);
# one that began as or after it ended waited for nothing of it
def with_sync(path, ts, end):
    t = json.load(open(path))
    t["traceEvents"].append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                             "pid": 1, "tid": 1, "ts": ts, "dur": end - ts})
    json.dump(t, open(path, "w"))
    return path
for ts, end, want in ((20500, 23004, 2000), (21500, 23004, 1500), (23000, 23100, 0),
                      (23010, 23100, 0)):
    ov = table("overlap", with_sync(one_rank(5000), ts, end), "--no-cache")
    check("a sync from %d to %d us, the collective ending at 23000: exposed_us %s, want %d"
          % (ts, end, ov[0]["exposed_us"], want), abs(float(ov[0]["exposed_us"]) - want) < 0.01)

# every rank reads each collective back and runs 300 us of Python before
# its next launch (ranks.py sync): no queued work shows the wait, the
# sync does; the waits were once all read as host time (no straggler)
y = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", y, "8", "5", "20000", "3", "3", "sync"], check=True)
s = table("stragglers", y, "--no-cache")
check("sync: rank 5 and only it is the straggler, every step",
      s and all((r["straggler"] == "1") == (r["rank"] == "5") for r in s))
check("sync: every other rank loses the planted 20 ms to it (%s)"
      % sorted({round(float(r["waited_for_us"])) for r in s if r["rank"] != "5"}),
      all(19990 <= float(r["waited_for_us"]) <= 20100 and r["waited_for"] == "5"
          for r in s if r["rank"] != "5"))
ov = {r["rank"]: float(r["wait_us"]) for r in table("overlap", y, "--no-cache")}
check("sync: stragglers' wait_us summed is overlap's wait_us, rank by rank",
      all(abs(sum(float(r["wait_us"]) for r in s if r["rank"] == k) - ov[k]) < 0.01 for k in ov))

# a rotating straggler: each collective waits for another rank's 20 ms
# (ranks.py -1), so a rank waits for several peers a step; each is
# credited with what was lost to it, not with the waiter's whole wait
# (once "40 ms" for 20)
w = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", w, "4", "-1", "20000", "3", "4"], check=True)
s = table("stragglers", w, "--no-cache")
check("rotating: no rank's late_us is more than one planted 20 ms (%s)"
      % sorted({round(float(r["late_us"])) for r in s}),
      s and all(float(r["late_us"]) <= 20100 for r in s))
check("rotating: each step has a straggler, at 20 ms",
      {r["step"] for r in s} == {r["step"] for r in s if r["straggler"] == "1" and
                                 19990 <= float(r["late_us"]) <= 20100})
check("rotating: waited_for_us is a part of wait_us",
      all(float(r["waited_for_us"]) <= float(r["wait_us"]) + 0.001 for r in s))
f = table("diagnose", w, "--no-cache", "--findings")
for r in s:
    got = sum(float(x["cost_us"]) for x in f if x["kind"] == "wait_for_peer" and
              x["rank"] == r["rank"] and x["step"] == r["step"])
    if abs(got - float(r["wait_us"])) > 0.01:
        check("rotating: diagnose's wait_for_peer findings of rank %s step %s sum to %s, wait_us %s"
              % (r["rank"], r["step"], got, r["wait_us"]), False)

# --ranks shows rank 0 alone: the headline says whom it waits for, not
# "no straggler" from the one rank's rows
r = subprocess.run(["./traceanalyze", "stragglers", "--ranks", "0", "testdata/ddp_straggler"],
                   capture_output=True, text=True)
check("--ranks 0: the headline names rank 1, left out (%s)" % r.stdout.splitlines()[2:3],
      "waiting for rank 1, which --ranks leaves out" in r.stdout)
# the straggler's trace deleted: no "no straggler" without saying why
x = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", x, "8", "5", "20000", "2", "2"], check=True)
os.remove(os.path.join(x, "rank-5.json.gz"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", x], capture_output=True, text=True)
check("the straggler's trace missing: the headline says a wait for it is not measured (%s)"
      % r.stdout.splitlines()[2:3], "1 rank the process groups name has no trace" in r.stdout)
# the same job through overlap and critical-path, with -j 1 (one database)
# and -j 3 (shards): the wait for the missing straggler is not measured,
# so it is empty, not 0 (helper-55: overlap's wait_us 43.4 ms read 0.0,
# critical-path's peer_wait_us too), and a gate trips
for cmd, col in (("overlap", "wait_us"), ("critical-path", "peer_wait_us")):
    for j in ("1", "3"):
        r = subprocess.run(["./traceanalyze", cmd, "--no-cache", "-j", j, "--format", "csv",
                            "--fail-if", "%s > 1e12" % col, x], capture_output=True, text=True)
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        check("%s -j %s, the straggler's trace missing: %s empty on every row, warned, a gate"
              " trips (exit %d)" % (cmd, j, col, r.returncode),
              rows and all(w[col] == "" for w in rows) and r.returncode == 1
              and "no collective here" in r.stderr and "not measured" in r.stderr)
r = subprocess.run(["./traceanalyze", "overlap", "--no-cache", "--format", "csv", "testdata/ddp_straggler"],
                   capture_output=True, text=True)
check("overlap on the whole job: rank 0's wait_us measured (%s)" % r.stdout.splitlines()[1:2],
      r.returncode == 0 and all(w["wait_us"] != "" for w in csv.DictReader(io.StringIO(r.stdout))))
# one rank's collective kernels with no length: its ends are not clock
# readings (its offset once read -6.5 ms for +4.5), the others' stay right
z = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", z, "4", "2", "20000", "2", "2"], check=True)
path = os.path.join(z, "rank-3.json.gz")
t = json.load(gzip.open(path, "rt"))
for e in t["traceEvents"]:
    if e["name"].startswith("ncclDevKernel"):
        e["dur"] = 0
json.dump(t, gzip.open(path, "wt"))
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--format", "csv", z],
                   capture_output=True, text=True)
rows = list(csv.DictReader(io.StringIO(r.stdout)))
r = subprocess.run(["./traceanalyze", "stragglers", z], capture_output=True, text=True)
check("zero-length collectives on rank 3: the others' offsets stay right",
      all("rank %d: clock offset %+.3f ms" % (k, 1.5 * k) in r.stderr for k in range(3)))
check("... and rank 3's is no wild guess from arrival times, but said to be unknown",
      "rank 3: clock offset" not in r.stderr and "1 rank's clock offset is not known" in r.stderr)
check("... and rank 2 is still the straggler",
      rows and {x["rank"] for x in rows if x["straggler"] == "1"} == {"2"})
check("... and rank 3's waits are not measured, not 0 (%s)" % [x["wait_us"] for x in rows],
      rows and all((x["wait_us"] == "" and x["coll_wait_us"] == "") == (x["rank"] == "3") for x in rows))
r = subprocess.run(["./traceanalyze", "comms", "--format", "csv", z], capture_output=True, text=True)
c = list(csv.DictReader(io.StringIO(r.stdout)))
check("... comms leaves rank 3's wait empty, the others' measured (%s)" % [x["wait_us"] for x in c],
      c and all((x["wait_us"] == "") == (x["rank"] == "3") for x in c))

# two collectives waiting at once on two streams of rank 0: group A
# (ranks 0, 1) waits 12 ms for rank 1, group B (0, 2) 20 ms for rank 2.
# Had rank 1 been on time rank 0 still waits 20 ms: rank 2 is the
# straggler, at 20 ms (credited to the wait that began first, rank 1 was)
def two_streams(out, thread_sync=False):
    evs = {r: [] for r in range(3)}
    corr = [0]

    def coll(r, pg, members, ts, end, stream, ext):
        corr[0] += 1
        evs[r] += [{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
                    "ts": ts - 50, "dur": 10, "args": {"External id": ext, "Collective name": "allreduce",
                    "Process Group Name": pg, "Group size": 2, "Process Group Ranks": str(members),
                    "In msg nelems": 1024, "Out msg nelems": 1024, "dtype": "Float"}},
                   {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 1,
                    "ts": ts - 40, "dur": 5, "args": {"External id": ext, "correlation": corr[0]}},
                   {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                    "pid": 0, "tid": stream, "ts": ts, "dur": end - ts,
                    "args": {"stream": stream, "correlation": corr[0]}}]
    for step in (1, 2, 3):
        t0 = 1000.0 + (step - 1) * 30000
        a = t0 + 2110
        ea, eb = a + 13000, a + 21000
        for r in range(3):
            evs[r] += [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                        "pid": 1, "tid": 1, "ts": t0, "dur": 29900},
                       {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t0 + 100,
                        "dur": 2000, "args": {"stream": 7}}]
        coll(0, "A", [0, 1], a, ea, 17, 10 * step)
        coll(0, "B", [0, 2], a, eb, 18, 10 * step + 1)
        evs[0].append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": eb,
                       "dur": 2000, "args": {"stream": 7}})
        for r, late, end, pg in ((1, 12000, ea, "A"), (2, 20000, eb, "B")):
            evs[r].append({"ph": "X", "cat": "user_annotation", "name": "data_loading", "pid": 1,
                           "tid": 1, "ts": a - 10, "dur": late})
            coll(r, pg, [0, r] if r == 1 else [0, 2], a + late, end, 17, 10 * step)
    for r in range(3):
        json.dump({"distributedInfo": {"rank": r, "world_size": 3}, "traceEvents": evs[r]},
                  open(os.path.join(out, "rank-%d.json" % r), "w"))
    return out
s = table("stragglers", two_streams(tempfile.mkdtemp()), "--no-cache")
r0 = [r for r in s if r["rank"] == "0"]
check("two collectives at once: rank 0 lost its 20 ms to rank 2 (%s)"
      % [(r["waited_for"], r["waited_for_us"]) for r in r0],
      r0 and all(r["waited_for"] == "2" and abs(float(r["waited_for_us"]) - 20000) < 1 for r in r0))
check("two collectives at once: rank 2 is the straggler at 20 ms, every step",
      {(r["step"], r["late_us"]) for r in s if r["straggler"] == "1" and r["rank"] == "2"} ==
      {(st, "20000.0") for st in {r["step"] for r in s}})

# a sync on a thread that issues no collective returns as the collective
# ends, while the thread that does is busy elsewhere: no wait lost
def side_thread(path):
    t = json.load(open(path))
    t["traceEvents"] += [{"ph": "X", "cat": "user_annotation", "name": "data_prep", "pid": 1, "tid": 1,
                          "ts": 22000, "dur": 6000},
                         {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                          "tid": 1, "ts": 20900, "dur": 10, "args": {"correlation": 2}},
                         {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1,
                          "tid": 2, "ts": 21500, "dur": 1504}]
    json.dump(t, open(path, "w"))
    return path
ov = table("overlap", side_thread(one_rank(5000)), "--no-cache")
check("a sync on a thread that issues no collective: exposed_us %s, want 0" % ov[0]["exposed_us"],
      float(ov[0]["exposed_us"]) == 0)

# a rotating straggler under --ranks: the headline names the left-out
# peer the shown rank lost the most to, at what it lost to that peer
x = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", x, "4", "-1", "20000", "4", "1", "sync"], check=True)
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", "--ranks", "3", x],
                   capture_output=True, text=True)
check("rotating, --ranks 3: one peer's share in the headline, not every left-out peer's (%s)"
      % r.stdout.splitlines()[2:3], "loses 6.7 ms per step" in r.stdout)

# DDP issues its all-reduces on the autograd thread; .item() syncs on the
# main thread, which launches the computation: that sync waited too
def ddp_threads(path):
    t = json.load(open(path))
    t["traceEvents"] += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                          "tid": tid, "ts": ts, "dur": 10, "args": {"correlation": corr}}
                         for tid, ts, corr in ((1, 19900, 1), (2, 20900, 2), (1, 21400, 3))]
    t["traceEvents"].append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                             "pid": 1, "tid": 1, "ts": 21500, "dur": 1504})
    json.dump(t, open(path, "w"))
    return path
ov = table("overlap", ddp_threads(one_rank(5000)), "--no-cache")
check("a sync on the launching thread, the collective issued on another: exposed_us %s, want 1500"
      % ov[0]["exposed_us"], abs(float(ov[0]["exposed_us"]) - 1500) < 0.01)

# a 2-D mesh: tensor-parallel pairs (0, 1) and (2, 3), six collectives a
# step, data-parallel pairs (0, 2) and (1, 3), one; ranks 2 and 3 run on
# a clock 1.5 ms ahead, nobody is late. Offsets from each rank against
# each group's mean let the many pairs on one clock outvote the few
# across (once +0.000 for both, and a phantom wait)
def mesh(out):
    evs = {r: [] for r in range(4)}
    corr = [0]
    for step in (1, 2, 3):
        t0 = 1000.0 + (step - 1) * 20000
        for r in range(4):
            evs[r].append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                           "pid": 1, "tid": 1, "ts": t0 + (1500 if r >= 2 else 0), "dur": 19000})
        groups = [("tp", k, [[0, 1], [2, 3]]) for k in range(6)] + [("dp", 0, [[0, 2], [1, 3]])]
        for c, (kind, k, pairs) in enumerate(groups):
            start, end = t0 + 100 + 2000 * c, t0 + 100 + 2000 * c + 1500
            for members in pairs:
                for r in members:
                    corr[0] += 1
                    skew = 1500 if r >= 2 else 0
                    pg = "%s%d" % (kind, members[0])
                    evs[r] += [{"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1,
                                "tid": 1, "ts": start - 50 + skew, "dur": 10,
                                "args": {"External id": corr[0], "Collective name": "allreduce",
                                         "Process Group Name": pg, "Group size": 2,
                                         "Process Group Ranks": str(members), "In msg nelems": 1024,
                                         "Out msg nelems": 1024, "dtype": "Float"}},
                               {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1,
                                "tid": 1, "ts": start - 40 + skew, "dur": 5,
                                "args": {"External id": corr[0], "correlation": corr[0]}},
                               {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                                "pid": 0, "tid": 17, "ts": start + skew, "dur": end - start,
                                "args": {"stream": 17, "correlation": corr[0]}}]
    for r in range(4):
        json.dump({"distributedInfo": {"rank": r, "world_size": 4}, "traceEvents": evs[r]},
                  open(os.path.join(out, "rank-%d.json" % r), "w"))
    return out
r = subprocess.run(["./traceanalyze", "stragglers", "--no-cache", mesh(tempfile.mkdtemp())],
                   capture_output=True, text=True)
check("a 2-D mesh: ranks 2 and 3 read 1.5 ms ahead (%s)" % [l for l in r.stderr.splitlines() if "offset" in l],
      all("rank %d: clock offset %+.3f ms" % (k, 1.5 if k >= 2 else 0.0) in r.stderr for k in range(4)))
check("... and nobody waits", "no straggler: no rank keeps the others waiting" in r.stdout)

# a wait ended by computation queued behind it while another collective
# runs on (FSDP: an all-gather beside an all-reduce): the all-reduce waits
# 12 ms for rank 1, rank 0's computation waits behind it on its own stream
def beside(out, copy=False):
    evs = {0: [], 1: []}
    corr = [0]

    def ev(r, cat, name, ts, dur, tid=1, **args):
        evs[r].append({"ph": "X", "cat": cat, "name": name, "pid": 0 if cat == "kernel" else 1,
                       "tid": tid, "ts": ts, "dur": dur, "args": args})

    def coll(r, pg, ts, end, stream, ext):
        corr[0] += 1
        ev(r, "cpu_op", "record_param_comms", ts - 50, 10, **{"External id": ext,
           "Collective name": "allreduce", "Process Group Name": pg, "Group size": 2,
           "Process Group Ranks": "[0, 1]", "In msg nelems": 1024, "Out msg nelems": 1024,
           "dtype": "Float"})
        ev(r, "cuda_driver", "cuLaunchKernelEx", ts - 40, 5, **{"External id": ext,
           "correlation": corr[0]})
        ev(r, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", ts, end - ts, tid=stream,
           stream=stream, correlation=corr[0])

    def gemm(r, ts, dur, launched):
        corr[0] += 1
        ev(r, "cuda_runtime", "cudaLaunchKernel", launched, 5, correlation=corr[0])
        ev(r, "kernel", "gemm", ts, dur, tid=7, stream=7, correlation=corr[0])
    t0 = 1000.0
    for step in (1, 2, 3):
        a = t0 + 2110
        for r in (0, 1):
            ev(r, "user_annotation", "ProfilerStep#%d" % step, t0, 40000)
            gemm(r, t0 + 100, 2000, t0 + 70)
            # nobody late, or (copy) rank 1 10 ms late
            coll(r, "A", a + (10000 if copy and r == 1 else 0), a + 21000, 18, 10 * step)
        if copy:   # B on time; the computation waits for a pageable copy
            coll(0, "B", a + 10, a + 12995, 17, 10 * step + 1)
            coll(1, "B", a + 10, a + 12995, 17, 10 * step + 1)
            ev(0, "kernel", "Memcpy HtoD (Pageable -> Device)", a + 7000, 6000, tid=7, stream=7)
            gemm(0, a + 13000, 15000, a + 20)
            gemm(1, a + 13000, 15000, a + 20)
        else:
            coll(0, "B", a + 10, a + 13000, 17, 10 * step + 1)
            gemm(0, a + 13000, 15000, a + 20)             # queued behind B
            ev(1, "user_annotation", "data_loading", a - 10, 12000)
            coll(1, "B", a + 12000, a + 13000, 17, 10 * step + 1)
            gemm(1, a + 13000, 15000, a + 11990)
        t0 += 40100
    for r in (0, 1):
        json.dump({"distributedInfo": {"rank": r, "world_size": 2}, "traceEvents": evs[r]},
                  open(os.path.join(out, "rank-%d.json" % r), "w"))
    return out
s = table("stragglers", beside(tempfile.mkdtemp()), "--no-cache")
check("a wait ended by queued computation beside another collective: rank 1 at 12 ms (%s)"
      % sorted({(r["rank"], r["late_us"]) for r in s if r["straggler"] == "1"}),
      s and all((r["straggler"] == "1") == (r["rank"] == "1") for r in s) and
      all(11900 <= float(r["late_us"]) <= 12100 for r in s if r["rank"] == "1"))
# ... but computation held by a pageable copy, as an unrelated collective
# ends 5 us before it starts, waited for the copy, not for the all-gather
# that waits 10 ms for rank 1 meanwhile: nothing lost to a peer
s = table("stragglers", beside(tempfile.mkdtemp(), copy=True), "--no-cache")
check("computation held by a copy as a collective ends beside: no wait (%s)"
      % sorted({r["wait_us"] for r in s}), s and all(float(r["wait_us"]) == 0 for r in s))

# helper-49's gloo cases, from gloo_straggler
def gloo_case(edit):
    out = tempfile.mkdtemp()
    for r in (0, 1):
        d = json.load(gzip.open("testdata/gloo_straggler/rank-%d.pt.trace.json.gz" % r))
        edit(r, d)
        json.dump(d, open(os.path.join(out, "rank-%d.json" % r), "w"))
    return out


def run_rc(*args):
    p = subprocess.run(["./traceanalyze", *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# a pg_config element that is not an object: read past, not a damaged database
d = gloo_case(lambda r, t: t["distributedInfo"]["pg_config"].append("x"))
rc, out, _ = run_rc("stragglers", "-q", "--no-cache", "--format", "csv", d)
check("gloo: a pg_config element that is text is read past (rc %d)" % rc,
      rc == 0 and any(l.split(",")[12] == "1" for l in out.splitlines()[1:]))
# a backend named like gloo is not gloo
d = gloo_case(lambda r, t: t["distributedInfo"]["pg_config"][0].update(backend_config="cpu:gloox"))
rc, out, err = run_rc("stragglers", "--no-cache", d)
check("gloo: backend 'gloox' is not gloo: nothing measured, said (rc %d)" % rc,
      rc == 0 and "single gloo group" in err)


# rank 1's ranges half as long: the clocks disagree with the ends; -j 1
# and shards decide alike, and the parts add up to the path
def halve(r, t):
    for e in t["traceEvents"]:
        if r == 1 and e.get("name") == "gloo:all_reduce" and e.get("cat") == "user_annotation":
            e["dur"] *= 0.5


d = gloo_case(halve)
a = run_rc("critical-path", "-q", "--no-cache", "-j", "1", "--format", "csv", d)[1]
b = run_rc("critical-path", "-q", "--no-cache", "-j", "2", "--format", "csv", d)[1]
rows = list(csv.DictReader(io.StringIO(b)))
check("gloo: critical-path alike with -j 1 and -j 2 where clocks disagree", a == b and rows)
check("gloo: ... its parts add up to the path (%s)" % [(r["path_us"], r["on_peers_us"]) for r in rows],
      rows and all(abs(sum(float(r[c]) for c in r if c.endswith("_us") and c not in
                           ("path_us", "on_peers_us")) - float(r["path_us"])) < 0.01 and
                   float(r["on_peers_us"]) <= float(r["path_us"]) + 0.01 for r in rows))


# no steps: nothing matched; comms' waits empty, not 0, and a gate trips
def no_steps(r, t):
    t["traceEvents"] = [e for e in t["traceEvents"] if not str(e.get("name", "")).startswith("ProfilerStep#")]


d = gloo_case(no_steps)
rc, out, _ = run_rc("comms", "-q", "--no-cache", "--format", "csv", d)
c = list(csv.DictReader(io.StringIO(out)))
check("no steps: comms' wait and transfer empty (%s)" % [r["wait_us"] for r in c],
      rc == 0 and c and all(r["wait_us"] == "" and r["transfer_us"] == "" for r in c))
rc = run_rc("comms", "-q", "--no-cache", "--fail-if", "wait_us > 1000", d)[0]
check("no steps: a gate on comms' wait does not pass (%d)" % rc, rc != 0)



# gloo ranges (or kernels) with no length, or a negative one: the exchange
# ends before its last member came, no wait is bounded; left out and said,
# and a gate on lateness trips (it passed on waits of 0)
def lengthless(dur):
    def edit(r, t):
        for e in t["traceEvents"]:
            if e.get("name") == "gloo:all_reduce" and e.get("cat") == "user_annotation":
                e["dur"] = dur
    return edit


for dur in (0, -5):
    d = gloo_case(lengthless(dur))
    for j in ("1", "2"):
        rc, out, err = run_rc("stragglers", "-q", "--no-cache", "-j", j, "--format", "csv", d)
        s = list(csv.DictReader(io.StringIO(out)))
        check("gloo dur %s -j %s: nothing measured, not 0 (%s)" % (dur, j, [r["late_us"] for r in s]),
              rc == 0 and s and all(r["late_us"] == "" and r["wait_us"] == "" for r in s))
    rc, _, err = run_rc("stragglers", "--no-cache", "--fail-if", "late_us > 1000", d)
    check("gloo dur %s: a gate on lateness does not pass (%d)" % (dur, rc), rc == 1)
    check("gloo dur %s: the warning says why" % dur, "have no length (a damaged trace)" in err)


# helper-51's cases, from ddp_straggler: collectives of one step without a
# length on one rank (dur 0, or a dur that is not a number)
def ddp_case(rank, dur):
    out = tempfile.mkdtemp()
    for r in (0, 1):
        raw = gzip.open("testdata/ddp_straggler/rank-%d.pt.trace.json.gz" % r, "rt").read()
        t = json.loads(raw)
        if r == rank:
            ev = t["traceEvents"]
            s3 = next(e for e in ev if e.get("name") == "ProfilerStep#3" and e.get("cat") == "user_annotation")
            corr = {e["args"].get("correlation") for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")
                    and s3["ts"] <= e["ts"] < s3["ts"] + s3["dur"]}
            for e in ev:
                if e.get("cat") == "kernel" and "nccl" in e["name"].lower() and \
                        e["args"].get("correlation") in corr:
                    e["dur"] = dur
        json.dump(t, open(os.path.join(out, "rank-%d.json" % r), "w"))
    return out


def rows_of(out):
    return {(r["rank"], r["step"]): r for r in csv.DictReader(io.StringIO(out))}


# the straggler's kernels with a dur that is not a number: a member with
# no length (not missing: its peers' then read "on one rank only", 0)
d = ddp_case(1, "abc")
rc, out, err = run_rc("stragglers", "-q", "--no-cache", "--format", "csv", d)
s = rows_of(out)
check("ddp dur 'abc' on rank 1 step 3: its waits empty, rank 0's measured (%s)"
      % [(k, v["wait_us"]) for k, v in s.items()],
      s and s[("1", "3")]["wait_us"] == "" and float(s[("0", "3")]["wait_us"]) > 15000
      and s[("1", "3")]["straggler"] == "1")
# the waiting rank's kernels untimed: what the straggler cost it is not
# known, and a gate on late does not pass on 0
d = ddp_case(0, 0)
for j in ("1", "2"):
    rc, out, err = run_rc("stragglers", "-q", "--no-cache", "-j", j, "--format", "csv", d)
    s = rows_of(out)
    check("ddp rank 0 untimed in step 3 -j %s: rank 1's late there empty, not 0 (%s)"
          % (j, s.get(("1", "3"), {}).get("late_us")),
          s and s[("1", "3")]["late_us"] == "" and s[("1", "3")]["straggler"] == "" and
          float(s[("1", "2")]["late_us"]) > 15000)
rc = run_rc("stragglers", "-q", "--no-cache", "--fail-if", "late_us > 1000 && step == 3", d)[0]
check("ddp rank 0 untimed in step 3: a gate on late there trips (rc %d)" % rc, rc == 1)
rc, out, _ = run_rc("overlap", "-q", "--no-cache", "--format", "csv", d)
o = {r["rank"]: r for r in csv.DictReader(io.StringIO(out))}
check("ddp rank 0 untimed: overlap's wait_us for rank 0 empty, not a part (%s)"
      % (o.get("0", {}).get("wait_us")), o and o["0"]["wait_us"] == "")
rc, out, err = run_rc("diagnose", "--no-cache", d)
check("ddp rank 0 untimed: diagnose warns", "have no length (a damaged trace)" in err)
rc, out, _ = run_rc("stragglers", "--no-cache", d)
check("ddp rank 0 untimed: the means leave the unmeasured step out (%s)" % out.splitlines()[2:3],
      "they lose 2" in out.splitlines()[2])
# one untimed collective among timed ones in a step: the rank's step empty
# (a part of its wait is no measure of it)
z = tempfile.mkdtemp()
subprocess.run([sys.executable, "tools/ranks.py", z, "3", "1", "30000"], check=True)
for r in (0, 2):
    path = os.path.join(z, "rank-%d.json.gz" % r)
    t = json.load(gzip.open(path, "rt"))
    st = next(e for e in t["traceEvents"] if e.get("name") == "ProfilerStep#2")
    k = next(e for e in sorted(t["traceEvents"], key=lambda e: e.get("ts", 0))
             if e["name"].startswith("ncclDevKernel") and st["ts"] <= e["ts"] < st["ts"] + st["dur"])
    k["dur"] = 0
    json.dump(t, gzip.open(path, "wt"))
rc, out, _ = run_rc("stragglers", "-q", "--no-cache", "--format", "csv", z)
s = list(csv.DictReader(io.StringIO(out)))
second = "2"
check("one untimed collective of four in a step: those ranks' step empty, rank 1's late too (%s)"
      % [(r["rank"], r["wait_us"], r["late_us"]) for r in s if r["step"] == second],
      s and all((r["wait_us"] == "") == (r["rank"] in ("0", "2")) for r in s if r["step"] == second)
      and all(r["late_us"] == "" for r in s if r["step"] == second and r["rank"] == "1"))

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL stragglers:", n)
print(f"stragglers: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
