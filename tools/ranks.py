#!/usr/bin/env python3
"""Write N small synthetic rank traces of a data-parallel job, with one
planted straggler and a clock offset per rank, for stragglers' tests and
its many-rank benchmark.

usage: ranks.py OUTDIR N [STRAGGLER [LATE_US [STEPS [COLLS [gpu|sync]]]]]

Each rank has STEPS ProfilerStep#N ranges (default 4); in each, COLLS
all-reduces (default 4), each issued by record_param_comms (process group
"0" of every rank, 1M floats) through a launch call carrying its External
id and correlation, as torch 2.11 writes them. Each rank computes 2 ms
(rank r: r us more) before each collective, which ends 1 ms after its
last member arrives; the next computation was queued behind it and starts
as it ends; the straggler spends LATE_US (default 30000) in a
"data_loading" range at each step's start, so everyone waits for it at
the step's first collective. Rank r's clock is shifted by r * 1.5 ms, so
the offsets must be estimated to find the straggler.

gpu: the straggler's LATE_US is kernel time, not host time (extra
matmuls launched at once: its GPU, not its CPU, is what the others wait
for).

sync: each collective is read back at once (all_reduce, then .item()):
the host blocks in cudaStreamSynchronize until it ends, then runs 300 us
of Python before it launches the next computation, so every GPU idles
after each collective and no queued work shows that it waited.

STRAGGLER -1: a different rank is late at every collective (the k-th of
the job waits for rank k mod N's data loading), so a critical path hops
from rank to rank and comes back.
"""
import gzip
import json
import os
import sys


SYNC_GAP_US = 300.0  # sync: the Python between a read-back and the next launch


def trace(rank, n, straggler, late_us, steps, colls, gpu=False, sync=False):
    ev = []
    skew = rank * 1500.0
    corr = ext = 0
    t = 1000.0  # the job's clock: every member starts the step together
    for s in range(1, steps + 1):
        step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s,
                "pid": 1, "tid": 1, "ts": t + skew, "dur": 0}
        ev.append(step)
        ready = t  # when every member may start computing
        for c in range(colls):
            # the first collective waits for the straggler's data loading
            # (STRAGGLER -1: each collective for another rank's)
            slow = ((s - 1) * colls + c) % n if straggler < 0 else \
                straggler if c == 0 else -1
            if rank == slow and gpu:
                corr += 1
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": 1, "tid": 1, "ts": ready - 20.0 + skew, "dur": 10,
                           "args": {"correlation": 100000 + corr}})
                ev.append({"ph": "X", "cat": "kernel", "name": "gemm_extra", "pid": 0,
                           "tid": 7, "ts": ready + skew, "dur": late_us - 5.0,
                           "args": {"stream": 7, "correlation": 100000 + corr}})
            elif rank == slow:
                ev.append({"ph": "X", "cat": "user_annotation", "name": "data_loading",
                           "pid": 1, "tid": 1, "ts": ready + skew, "dur": late_us})
            # 2 ms of compute, a little longer on higher ranks
            def arrive(r):
                return ready + (late_us if r == slow else 0.0) + 2000.0 + r
            # the last member: the highest rank or the slow one (not a
            # list of every rank: 8192 ranks took 87 s to write)
            kend = max(arrive(n - 1), arrive(slow) if slow >= 0 else 0.0) + 1000.0
            me = arrive(rank)
            corr += 1
            ext += 1
            # starts when the step's work may (queued), runs r us longer
            ev.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                       "ts": me - 2000.0 - rank + skew, "dur": 1990.0 + rank,
                       "args": {"stream": 7, "correlation": 100000 + corr}})
            ev.append({"ph": "X", "cat": "cpu_op", "name": "record_param_comms",
                       "pid": 1, "tid": 1, "ts": me - 1950.0 + skew, "dur": 40,
                       "args": {"External id": ext, "Collective name": "allreduce",
                                "Process Group Name": "0",
                                "Process Group Ranks": group_ranks(n),
                                "Group size": n,
                                "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20,
                                "dtype": "Float"}})
            ev.append({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx",
                       "pid": 1, "tid": 1, "ts": me - 1930.0 + skew, "dur": 10,
                       "args": {"External id": ext, "correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel",
                       "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                       "pid": 0, "tid": 17, "ts": me + skew, "dur": kend - me,
                       "args": {"stream": 17, "correlation": corr}})
            ready = kend
            if sync:
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize",
                           "pid": 1, "tid": 1, "ts": me - 1900.0 + skew,
                           "dur": kend + 3.0 - (me - 1900.0), "args": {"correlation": 0}})
                ready = kend + SYNC_GAP_US
        step["dur"] = ready - t
        t = ready + 100.0
    return {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": n},
            "traceEvents": ev}


def group_ranks(n):
    """The member list as torch writes it: cut after 30 ranks
    (format_list in torch/csrc/profiler/util.cpp), so that a rank's trace
    does not grow with the size of the job."""
    if n <= 30:
        return "[" + ", ".join(map(str, range(n))) + "]"
    return "[" + ", ".join(map(str, range(30))) + ", ...]"


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    straggler = int(sys.argv[3]) if len(sys.argv) > 3 else n // 2
    late_us = float(sys.argv[4]) if len(sys.argv) > 4 else 30000.0
    steps = int(sys.argv[5]) if len(sys.argv) > 5 else 4
    colls = int(sys.argv[6]) if len(sys.argv) > 6 else 4
    gpu = len(sys.argv) > 7 and sys.argv[7] == "gpu"
    sync = len(sys.argv) > 7 and sys.argv[7] == "sync"
    os.makedirs(out, exist_ok=True)
    for r in range(n):
        with gzip.open(os.path.join(out, "rank-%d.json.gz" % r), "wt", compresslevel=1) as f:
            json.dump(trace(r, n, straggler, late_us, steps, colls, gpu, sync), f)


if __name__ == "__main__":
    main()
