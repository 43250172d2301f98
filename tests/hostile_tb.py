#!/usr/bin/env python3
"""Hostile input on the TensorBoard plugin's views and their counterparts
(overlap --by step, comms and memory under --tb-compat): the cases a
review found, each with what the plugin's own code gives (run once with
tb_oracle.py) or what a gate must do. Prints "N passed, M failed"."""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./traceanalyze")
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL hostile_tb: %s %s" % (name, detail))


def X(name, ts, dur, cat="cpu_op", tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": args}


def K(name, ts, dur, corr, ext=None, stream=7):
    args = {"device": 0, "stream": stream, "correlation": corr}
    if ext is not None:
        args["External id"] = ext
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts,
            "dur": dur, "args": args}


def RT(ts, dur, corr):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": ts, "dur": dur, "args": {"correlation": corr}}


def MEM(ts, nbytes, devtype=1, devid=0, addr=1):
    return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Device Type": devtype, "Device Id": devid, "Addr": addr, "Bytes": nbytes,
                     "Total Allocated": 0, "Total Reserved": 0}}


def job(ranks):
    d = tempfile.mkdtemp()
    for r, ev in enumerate(ranks):
        with open(os.path.join(d, "worker%d.pt.trace.json" % r), "w") as f:
            json.dump({"traceEvents": ev, "distributedInfo": {"rank": r}}, f)
    return d


def run(args, path):
    env = dict(os.environ, TRACEANALYZE_CACHE_DIR=tempfile.mkdtemp())
    p = subprocess.run([BIN] + args + ["--format", "csv", path], capture_output=True,
                       text=True, env=env)
    return p.returncode, list(csv.DictReader(io.StringIO(p.stdout))), p.stderr


def comm_rank(dims, types, r):
    a = {"External id": 100, "Input Dims": dims, "Input type": types}
    return [X("ProfilerStep#1", 0, 10000), X("nccl:all_reduce", 100, 50 + 10 * r, **a),
            RT(105, 5, 500), K("ncclKernel_AllReduce", 120, 300 + 100 * r, 500, 100, 16)]


def main():
    # sizes past 2^63: no overflow (UBSan), the limit, said
    d = job([[X("aten::empty", 10, 100), MEM(20, 1 << 62), MEM(30, 1 << 62, addr=2)]])
    rc, rows, err = run(["memory", "--by", "op", "--tb-compat"], d)
    check("memory 2^62 twice: runs", rc == 0 and "runtime error" not in err, err)
    check("memory 2^62 twice: the sum at the limit, said",
          rows and rows[0]["alloc_bytes"] == str(2**63 - 1) and "past 2^63" in err, str(rows))
    # the plugin's bytes (tb_oracle.py): negative dims count, a string of
    # types is indexed by character, a dim that is no number fails it
    for dims, types, want in (([[-5, 3]], ["float"], "-60.0"), ([[4]], "float", "0.0"),
                              ([[4]], [["float"]], "0.0"), ([[True, 3]], ["int"], "12.0"),
                              ([[2], [4]], ["float"], ""), ([[None]], ["int"], "")):
        d = job([comm_rank(dims, types, 0), comm_rank(dims, types, 1)])
        rc, rows, err = run(["comms", "--tb-compat"], d)
        got = rows[0]["size_bytes"] if rows else None
        check("comms --tb-compat Input Dims %s, Input type %s: %r" % (dims, types, want),
              rc == 0 and got == want, "got %r %s" % (got, err))
    # a rank with no step and no GPU work: no rows, said, a gate trips
    d = job([[X("ProfilerStep#1", 0, 1000), RT(5, 5, 1), K("gemm", 20, 100, 1)],
             [X("gloo:all_reduce", 10, 500)]])
    rc, rows, err = run(["overlap", "--by", "step", "--fail-if", "communication_us > 100"], d)
    check("overlap --by step, a rank without steps: a gate trips", rc == 1 and "rank 1" in err,
          "rc %d %s" % (rc, err))
    # a ProfilerStep twice: one row per rank and step name, as the plugin
    ev = [X("ProfilerStep#1", 0, 1000), X("ProfilerStep#1", 0, 1000, cat="user_annotation"),
          X("nccl:all_reduce", 100, 50, **{"External id": 7}), RT(105, 5, 1),
          K("ncclKernel_AllReduce", 120, 300, 1, 7, 16)]
    d = job([ev, ev])
    rc, rows, err = run(["overlap", "--by", "step", "--tb-compat"], d)
    keys = [(r["rank"], r["step"]) for r in rows]
    check("overlap --by step --tb-compat, a step twice: one row each",
          rc == 0 and len(keys) == len(set(keys)) and len(keys) == 4, str(keys))
    # External ids that are text: two ops, as the plugin's dict keys them
    ev = [X("ProfilerStep#1", 0, 10000), X("gloo:all_reduce", 100, 50, **{"External id": "a"}),
          X("gloo:all_reduce", 200, 50, **{"External id": "b"})]
    rc, rows, err = run(["comms", "--tb-compat"], job([ev, ev]))
    check("comms --tb-compat, text External ids: two calls",
          rc == 0 and rows and rows[0]["calls"] == "2", str(rows))
    # a Device Type of no device: not GPU0
    d = job([[X("aten::empty", 10, 100), MEM(20, 64, devtype=4294967297)]])
    rc, rows, err = run(["memory", "--by", "op", "--tb-compat"], d)
    check("memory --tb-compat, Device Type 2^32 + 1: no device", rc == 0 and not rows,
          str(rows))
    # a module whose own name holds the path's separator: one module, a
    # level under its parent, not a parent and a child
    ev = [X("ProfilerStep#1", 0, 1000, cat="user_annotation"),
          X("nn.Module: Outer_0", 10, 900, cat="python_function", **{"Python module id": 0}),
          X("nn.Module: a/b_0", 20, 500, cat="python_function", **{"Python module id": 1}),
          X("nn.Module: Inner_0", 30, 100, cat="python_function", **{"Python module id": 2})]
    rc, rows, err = run(["modules"], job([ev]))
    check("modules, a '/' in a name: escaped, the depths right",
          rc == 0 and [(r["module"], r["depth"]) for r in rows] ==
          [("Outer_0", "0"), ("Outer_0/a%2Fb_0", "1"), ("Outer_0/a%2Fb_0/Inner_0", "2")], str(rows))
    print("hostile_tb: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
