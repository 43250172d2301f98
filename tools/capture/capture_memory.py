#!/usr/bin/env python3
"""Capture the memory traces in testdata/ (run on a machine with a CUDA GPU).

usage: capture_memory.py OUTDIR

Two scenarios, profiled with profile_memory=True (schedule wait 1, warmup 1,
active 3), each writing OUTDIR/<name>/rank-0.pt.trace.json.gz and
OUTDIR/<name>/measured.json with what the CUDA caching allocator itself
said, step by step, in the profiled run:
  mem_train  a small transformer training step;
  mem_leak   the same, and every step a 4 MiB tensor kept in a Python list
             inside record_function("leaky_cache"): a leak of 4 MiB a step.
measured.json: per profiled step, memory_allocated() before the step and
after it (synchronised), and max_memory_allocated() over the step after
reset_peak_memory_stats() just before it; the step numbers are the
profiler's (ProfilerStep#N).
"""
import json
import os
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import gzip_move, make_model  # noqa: E402

DEV = "cuda"
WAIT, WARMUP, ACTIVE = 1, 1, 3
LEAK_BYTES = 4 << 20


def scenario(outdir, name, leak):
    model = make_model(d=512, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    B, T, V = 8, 256, 1000
    x = torch.randint(0, V, (B, T), device=DEV)
    y = torch.randint(0, V, (B, T), device=DEV)
    kept = []

    def step():
        with record_function("forward"):
            loss = lossf(model(x).view(-1, V), y.view(-1))
        with record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        if leak:
            with record_function("leaky_cache"):
                kept.append(torch.empty(LEAK_BYTES, dtype=torch.uint8, device=DEV))

    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-0.pt.trace.json")
    steps = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 profile_memory=True, record_shapes=True, with_stack=True) as prof:
        for i in range(WAIT + WARMUP + ACTIVE):
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            step()
            torch.cuda.synchronize()
            steps.append({"step": i, "allocated_before": before,
                          "allocated_after": torch.cuda.memory_allocated(),
                          "peak": torch.cuda.max_memory_allocated(),
                          "reserved": torch.cuda.memory_reserved()})
            prof.step()
    gzip_move(raw)
    info = {"scenario": name, "leak_bytes_per_step": LEAK_BYTES if leak else 0,
            "steps": steps,
            "note": "profiled run; per step (ProfilerStep#N = step N): memory_allocated() "
                    "before and after (synchronised) and max_memory_allocated() over it"}
    with open(os.path.join(d, "measured.json"), "w") as f:
        json.dump(info, f, indent=1)


def main():
    out = sys.argv[1]
    scenario(out, "mem_train", leak=False)
    scenario(out, "mem_leak", leak=True)


if __name__ == "__main__":
    main()
