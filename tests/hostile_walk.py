#!/usr/bin/env python3
"""Hostile input for the critical path's walk, exposed communication and
memory sums: traces whose times contradict each other (a launch call
stamped after its kernel began, collectives missing on one rank, times
before the epoch, absurd byte counts) and options at their limits. Each
case once crashed under UBSan, ran the walk forward in time, stopped a
whole run with exit 4, or gave parts that do not add up; each must now
give a table whose parts add up, or a usage error.

Prints one line per failed check and a count; exit 1 on any failure."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./traceanalyze")
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
PARTS = ["cpu_us", "launch_us", "kernel_compute_us", "kernel_comm_us", "kernel_memory_us",
         "gap_us", "sync_us", "peer_wait_us"]
checks = []
TMP = tempfile.mkdtemp()


def check(name, cond):
    checks.append((name, bool(cond)))


def X(cat, name, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def K(name, ts, dur, corr, stream=7):
    return X("kernel", name, ts, dur, pid=0, tid=stream, stream=stream, correlation=corr)


def R(name, ts, dur, corr):
    return X("cuda_runtime", name, ts, dur, correlation=corr)


def STEP(n, ts, dur):
    return X("user_annotation", "ProfilerStep#%d" % n, ts, dur)


def write(name, ranks):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    for i, ev in enumerate(ranks):
        t = {"traceEvents": ev}
        if len(ranks) > 1:
            t["distributedInfo"] = {"backend": "nccl", "rank": i, "world_size": len(ranks)}
        json.dump(t, open(os.path.join(d, "rank-%d.pt.trace.json" % i), "w"))
    return d


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True,
                       env=dict(os.environ, TRACEANALYZE_CACHE_DIR=os.path.join(TMP, "cache")))
    return p.returncode, p.stdout, p.stderr


def path_adds_up(name, d):
    rc, out, err = run("critical-path", "-q", "--format", "csv", d)
    rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
    check("%s: critical-path gives a table (exit %d: %s)" % (name, rc, err.strip()[:80]), rc == 0 and rows)
    for r in rows:
        parts = sum(float(r[c] or 0) for c in PARTS)
        check("%s rank %s step %s: the parts %.1f add up to path_us %s" % (
              name, r["rank"], r["step"], parts, r["path_us"]), abs(parts - float(r["path_us"])) < 0.01)
    rc, _, err = run("diagnose", "-q", d)
    check("%s: diagnose runs (exit %d: %s)" % (name, rc, err.strip()[:80]), rc == 0)


# a launch call stamped 300 us after its kernel began, and a sync that
# returned while the kernel ran: the walk went forward and round
path_adds_up("launch after its kernel", write("loop", [[
    STEP(1, 1000, 2000), STEP(2, 3000, 2000),
    R("cudaLaunchKernel", 1010, 10, 1), K("gemmA", 1100, 200, 1),
    K("gemmB", 1400, 200, 2), R("cudaDeviceSynchronize", 1450, 170, 3),
    R("cudaLaunchKernel", 1700, 10, 2),
    R("cudaLaunchKernel", 3010, 10, 4), K("gemmC", 3100, 200, 4)]]))
path_adds_up("launch after its kernel, sync over its end", write("fwd", [[
    STEP(1, 1000, 2000), STEP(2, 3000, 2000),
    R("cudaLaunchKernel", 1010, 10, 1), K("gemmA", 1100, 200, 1),
    K("gemmB", 1400, 400, 2), R("cudaLaunchKernel", 1500, 10, 2),
    R("cudaDeviceSynchronize", 1520, 300, 3),
    R("cudaLaunchKernel", 3010, 10, 4), K("gemmC", 3100, 200, 4)]]))

# a job whose rank 1 lacks one collective: the rest are paired wrongly
g = os.path.join(TMP, "drop")
subprocess.run([sys.executable, "tools/ranks.py", g, "2", "1", "20000", "2", "2"], check=True)
import gzip  # noqa: E402
f = os.path.join(g, "rank-1.json.gz")
t = json.load(gzip.open(f))
nccl = [i for i, e in enumerate(t["traceEvents"]) if e["name"].startswith("ncclDev")]
del t["traceEvents"][nccl[0]]
json.dump(t, gzip.open(f, "wt"))
path_adds_up("a collective missing on one rank", g)
rc, out, _ = run("stragglers", "-q", "--format", "csv", g)
rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
check("a collective missing on one rank: wait_us <= comm_us (%s)" % [
      (r["wait_us"], r["comm_us"]) for r in rows],
      rows and all(float(r["wait_us"]) <= float(r["comm_us"]) + 0.001 for r in rows))

# times before the epoch: the same exposure as after it (an overflow
# once made the collective exposed)
B = -5000000
ev = lambda b: [STEP(1, b, 3000), STEP(2, b + 3000, 3000),  # noqa: E731
                R("cudaLaunchKernel", b + 10, 5, 1), K("gemm", b + 20, 1000, 1),
                R("cudaLaunchKernel", b + 20, 5, 2), K(NCCL, b + 1100, 1500, 2, stream=17),
                R("cudaLaunchKernel", b + 3010, 5, 3), K("gemm", b + 3020, 1000, 3)]
neg = run("overlap", "-q", "--format", "csv", write("neg", [ev(B)]))[1]
pos = run("overlap", "-q", "--format", "csv", write("pos", [ev(-B)]))[1]
check("negative times: overlap as with positive ones (%r, %r)" % (neg, pos), neg == pos and neg)

# [memory] events with absurd Bytes: no overflow, a table
M = lambda ts, b, addr: {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",  # noqa: E731
                         "pid": 1, "tid": 1, "ts": ts,
                         "args": {"Total Reserved": 0, "Total Allocated": b, "Bytes": b,
                                  "Device Id": 0, "Device Type": 1, "Addr": addr}}
d = write("memhuge", [[STEP(1, 1000, 1000), R("cudaLaunchKernel", 1010, 5, 1), K("gemm", 1020, 100, 1),
                        M(1100, 2**63 - 1, 4096), M(1200, 2**63 - 1, 8192)]])
rc, _, err = run("memory", "-q", d)
check("absurd Bytes: memory runs (exit %d: %s)" % (rc, err.strip()[:80]), rc == 0)

# options at their limits: usage errors, never a changed value or a loop
for args, why in ((["temporal", "--ranks", "9223372036854775807"], "a rank at INT64_MAX"),
                  (["temporal", "--ranks", "0-99999999999999999999"], "a rank past INT64_MAX"),
                  (["critical-path", "--step", "99999999999999999999"], "a step past INT64_MAX"),
                  (["critical-path", "--what-if", "kernel:" + "*" * 600 + "=0.5"], "a 600-byte --what-if"),
                  (["critical-path", "--what-if", "kernel:*=inf"], "an infinite factor"),
                  (["critical-path", "--what-if", "kernel:*=1e308"], "a factor of 1e308")):
    rc, _, err = run(*args, "testdata/spin")
    check("%s is a usage error (exit %d)" % (why, rc), rc == 2)
# --trace of a step that is not there: the error naming the kept steps,
# and no trace written (an empty path was once written unmarked)
rc, _, err = run("critical-path", "-q", "--ranks", "0", "--step", "99", "--trace",
                 os.path.join(TMP, "o.json"), "testdata/ddp_straggler")
check("--trace of a step that is not there (exit %d: %s)" % (rc, err.strip()[:80]),
      rc == 3 and "kept steps" in err and not os.path.exists(os.path.join(TMP, "o.json")))

# an edited database: gradient-sync ops (torch::distributed::*) whose
# start is text ("123z", read as 123) came after every number in SQL's
# order, and a scan that stopped at the first later start missed them:
# exposed communication must be what the undamaged trace gives
import sqlite3  # noqa: E402
plain, damaged = os.path.join(TMP, "sync.db"), os.path.join(TMP, "sync_text.db")
subprocess.run([BIN, "ingest", "-q", "testdata/ddp_balanced", "-o", plain], check=True)
subprocess.run([BIN, "ingest", "-q", "testdata/ddp_balanced", "-o", damaged], check=True)
with sqlite3.connect(damaged) as c:
    c.execute("UPDATE events SET ts_ns = ts_ns || 'z' WHERE role = 4 AND idx % 4 != 0 AND name IN"
              " (SELECT name_id FROM names WHERE name GLOB 'torch::distributed::*')")
a = run("overlap", "-q", "--format", "csv", plain)
b = run("overlap", "-q", "--format", "csv", damaged)
# (a time no ingestion writes: the database is refused, naming it, since
# its values are checked against ingestion's bounds)
check("sync ops with text starts: refused, naming the column (exit %d: %s)"
      % (b[0], b[2].strip()[:80]), a[0] == 0 and b[0] == 3 and "events.ts_ns of row" in b[2])

# an edited database: kernels of the largest duration ingestion keeps
# (2^50 ns); each command that adds times answers without overflowing
# (UBSan, under make sanitize, stops at the first signed overflow:
# roofline, diagnose, overview, ops, modules and temporal's span each had
# some); and near int64's largest, beyond ingestion's bounds: refused
for dur, want in (("1125899906842624", 0), ("9223372036854775000", 3)):
    huge = os.path.join(TMP, "huge%d.db" % want)
    subprocess.run([BIN, "ingest", "-q", "testdata/gpt2_train", "-o", huge], check=True)
    with sqlite3.connect(huge) as c:
        c.execute("UPDATE events SET dur_ns = " + dur + " WHERE role = 1 AND correlation IN"
                  " (SELECT correlation FROM events WHERE role = 1 ORDER BY dur_ns DESC"
                  " LIMIT 2)")
    for cmd in (["diagnose"], ["roofline"], ["roofline", "--by", "step"], ["overview"], ["ops"],
                ["modules"], ["critical-path"], ["temporal", "--window", "span"],
                ["report", "--html", os.path.join(TMP, "huge.html")]):
        rc, _, err = run(*cmd, "-q", huge)
        check("durations of %s ns: %s (exit %d%s)" % (dur, " ".join(cmd), rc,
                                                      ": " + err.strip()[:80] if rc else ""),
              rc == want and "runtime error" not in err and
              (want == 0 or "events.dur_ns of row" in err))

# 9000 kernels of the longest duration ingestion keeps (2^50 ns) under
# one op: their sum is past int64 (a sequence's kernel time and diff's
# per-name sums overflowed; SQLite's sum() stopped ops --kernels with
# "integer overflow", exit 4); sums saturate instead (ta_sum() in SQL).
# The second trace launches them all from one call (one correlation, as
# a CUDA graph's kernels), which GPU time per correlation sums.
LONG = 1125899906842.624  # 2^50 ns in us
for name, one_corr in (("many_long", False), ("one_launch", True)):
    ev = [STEP(1, 1000, 20000), X("cpu_op", "aten::mm", 1010, 19000)]
    if one_corr:
        ev.append(R("cudaGraphLaunch", 1011, 1, 100))
    for i in range(9000):
        if not one_corr:
            ev.append(R("cudaLaunchKernel", 1011 + i * 2, 1, 100 + i))
        ev.append(K("gemm", 5000 + i, LONG, 100 if one_corr else 100 + i))
    many = write(name, [ev])
    for cmd in (["ops"], ["ops", "--kernels"], ["kernels", "--sequences"], ["diff", many],
                ["modules"], ["roofline"], ["roofline", "--by", "kernel"]):
        rc, out, err = run(*cmd, "-q", many)
        check("9000 kernels of 2^50 ns%s: %s (exit %d: %s)" %
              (" from one launch" if one_corr else "", " ".join(cmd[:2]), rc, err.strip()[:80]),
              rc == 0 and "runtime error" not in err and out.strip())

# two launch calls and a sync that overlap on one thread (a thread is in
# one call at a time: a damaged trace): the launch time was counted for
# both calls, and the parts came to 12.8 ms of a 10 ms path (diagnose's
# path_pct to 9000 %)
path_adds_up("runtime calls that overlap on one thread", write("overlap_calls", [[
    STEP(1, 1000, 10000), X("cpu_op", "aten::mm", 1010, 50),
    R("cudaLaunchKernel", 1020, 3000, 1), K("gemm", 1100, 3000, 1),
    R("cudaLaunchKernel", 1205, 3000, 2), R("cudaDeviceSynchronize", 1300, 9600, 3),
    K(NCCL, 4200, 2000, 2, stream=17)]]))

# HTA's critical path with five launches sharing one correlation id and
# five kernels: HTA's merge pairs them 25 ways, which overran the queue's
# points (a heap overflow, cpgraph.c); and 9000 copies of 2^50 ns, whose
# path length overflowed
ev = [STEP(1, 1000, 20000)]
for i in range(5):
    ev += [R("cudaLaunchKernel", 1010 + i * 10, 5, 7), K("gemm", 2000 + i * 100, 50, 7)]
shared = write("corr_shared", [ev])
ev = [STEP(1, 1000, 20000)]
for i in range(9000):
    ev += [R("cudaMemcpyAsync", 1010 + i, 1, 100 + i),
           X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 5000 + i, LONG, pid=0, tid=7,
             stream=7, correlation=100 + i)]
copies = write("long_copies", [ev])
for name, d in (("a correlation id shared by five launches", shared),
                ("9000 copies of 2^50 ns", copies)):
    rc, out, err = run("critical-path", "--hta-compat", "-q", d)
    check("%s: critical-path --hta-compat (exit %d: %s)" % (name, rc, err.strip()[:80]),
          rc == 0 and out and "runtime error" not in err and "Sanitizer" not in err)

# 9000 collectives of 2^50 ns: comms' total per group saturates (it
# overflowed to -8.3e15 us)
ev = [STEP(1, 1000, 20000)]
for i in range(9000):
    ev += [R("cudaLaunchKernel", 1010 + i, 1, 100 + i), K(NCCL, 5000 + i, LONG, 100 + i, stream=17)]
rc, out, err = run("comms", "-q", "--format", "csv", write("long_colls", [ev]))
rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
check("9000 collectives of 2^50 ns: comms' totals not negative (exit %d: %s)" % (rc, err.strip()[:80]),
      rows and all(float(r["total_us"]) >= 0 for r in rows) and "runtime error" not in err)

# 20000 [memory] events of 2^62 bytes: the sums per site saturate (they
# wrapped to 1.8e18 bytes, UBSan: memory.c)
ev = [STEP(1, 1000, 30000), R("cudaLaunchKernel", 1010, 5, 1), K("gemm", 1020, 100, 1)]
ev += [M(1100 + i, 2**62, 4096 * (i + 1)) for i in range(20000)]
d = write("mem_many", [ev])
for cmd in (["memory"], ["memory", "--by", "op"], ["memory", "--findings"], ["diagnose"]):
    rc, out, err = run(*cmd, "-q", "--format", "csv", d)
    check("20000 allocations of 2^62 bytes: %s (exit %d: %s)" % (" ".join(cmd), rc, err.strip()[:80]),
          rc == 0 and "runtime error" not in err and ",-" not in out)

# said, not silent: a trace with no event, which measured nothing, is
# refused in every mode (the plugin's step of -2^64 us was shown as it
# shows it; a rank of zeros passed gates), and ops that overlap without
# nesting (a negative self time, as the profiler's own table has it)
rc, _, err = run("overview", "--tb-compat", write("empty", [[]]))
check("overview --tb-compat on an empty trace: refused, no trace events (exit %d: %s)" % (
      rc, err.strip()[:120]), rc == 3 and "no trace events" in err)
rc, _, err = run("ops", write("ops_overlap", [[STEP(1, 0, 1000), X("cpu_op", "aten::a", 10, 600),
                                                X("cpu_op", "aten::b", 500, 490)]]))
check("ops whose times overlap without nesting: a negative self time is said (exit %d: %s)" % (
      rc, err.strip()[:120]), rc == 0 and "negative self_cpu_us" in err)

# a launch call recorded twice (one kernel of 300 us): its time counted
# once, in ops (aten::mm's device_us was 600) and in modules
d = write("dup_launch", [[STEP(1, 0, 1000), X("python_function", "nn.Module: Net_0", 5, 900),
                          X("cpu_op", "aten::mm", 10, 50), R("cudaLaunchKernel", 20, 10, 1),
                          R("cudaLaunchKernel", 20, 10, 1), K("gemm", 100, 300, 1)]])
rc, out, err = run("ops", "-q", "--format", "csv", d)
mm = [r for r in csv.DictReader(io.StringIO(out)) if r["name"] == "aten::mm"] if rc == 0 else []
check("a launch recorded twice: ops counts its kernel once (%s)" % mm,
      mm and float(mm[0]["device_us"]) == 300)
rc, out, err = run("modules", "-q", "--format", "csv", d)
net = [r for r in csv.DictReader(io.StringIO(out)) if r["module"] == "Net_0"] if rc == 0 else []
check("a launch recorded twice: modules counts its kernel once (%s)" % net,
      net and float(net[0]["device_us"]) == 300)

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL hostile_walk:", n)
print("hostile_walk: %d passed, %d failed" % (len(checks) - len(failed), len(failed)))
sys.exit(1 if failed else 0)
