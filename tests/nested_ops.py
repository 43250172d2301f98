#!/usr/bin/env python3
"""A hostile nesting for linear.sh: one step whose launching thread holds
N nested aten::mm calls of N different shapes, inside them N nested
record_function ranges, and at the bottom N kernel launches. A walk that looks
down the whole stack for each launch, or along every open op for each
op it closes, is quadratic here (the roofline's walk was: 8.5 s at
N = 50 000).

usage: nested_ops.py OUT.json N"""
import json
import sys

out, n = sys.argv[1], int(sys.argv[2])
base, span = 1_000_000, 10 * n + 10_000
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
       "ts": base, "dur": span}]
for k in range(n):   # ops, then ranges, each inside the one before
    ev.append({"ph": "X", "cat": "user_annotation", "name": "range%d" % (k % 10), "pid": 1,
               "tid": 1, "ts": base + 10 + k * 0.001, "dur": span - 20 - 2 * k * 0.001})
for k in range(n):
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
               "ts": base + 5 + k * 0.001, "dur": span - 10 - 2 * k * 0.001,
               "args": {"Input Dims": [[64, 64 + k], [64 + k, 64]],
                        "Input type": ["float", "float"]}})
for k in range(n):
    ts = base + 100 + k * 5
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
               "tid": 1, "ts": ts, "dur": 1, "args": {"correlation": 1000 + k}})
    ev.append({"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7,
               "ts": ts + 1, "dur": 2,
               "args": {"correlation": 1000 + k, "stream": 7, "device": 0}})
json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA H100", "computeMajor": 9,
                                 "computeMinor": 0}], "traceEvents": ev}, open(out, "w"))
