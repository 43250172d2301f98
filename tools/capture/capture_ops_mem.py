#!/usr/bin/env python3
"""Capture testdata/ops_mem: torch.profiler's own memory columns per op, as
ground truth for `traceanalyze ops`'s memory columns (run on a CUDA machine).

usage: capture_ops_mem.py OUTDIR

A small convolutional network (conv, batch norm, ReLU, pooling, linear)
trained with SGD and momentum, whose inputs are made on the CPU each step
and copied to the GPU (CPU allocations too), profiled with
profile_memory=True and record_shapes=True (schedule wait 1, warmup 1,
active 2). Writes OUTDIR/ops_mem/rank-0.pt.trace.json.gz and
OUTDIR/ops_mem/key_averages.json: key_averages() plain and grouped by input
shape, with the profiler's times and its memory columns
(self_cpu_memory_usage, cpu_memory_usage, self_device_memory_usage,
device_memory_usage), dumped in on_trace_ready.
"""
import os
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import dump_key_averages, gzip_move  # noqa: E402

DEV = "cuda"


def main():
    out = os.path.join(sys.argv[1], "ops_mem")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(DEV)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    lossf = nn.CrossEntropyLoss()

    def step():
        with record_function("load"):
            x = torch.randn(32, 3, 64, 64)          # on the CPU
            y = torch.randint(0, 10, (32,))
            x, y = x.to(DEV), y.to(DEV)
        with record_function("forward"):
            loss = lossf(model(x), y)
        with record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            opt.step()

    raw = os.path.join(out, "rank-0.pt.trace.json")

    def ready(prof):
        prof.export_chrome_trace(raw)
        dump_key_averages(prof, os.path.join(out, "key_averages.json"))

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=ready, profile_memory=True, record_shapes=True) as prof:
        for _ in range(4):
            step()
            prof.step()
    torch.cuda.synchronize()
    gzip_move(raw)


if __name__ == "__main__":
    main()
