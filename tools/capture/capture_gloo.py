#!/usr/bin/env python3
"""Capture real two-rank gloo traces (one GPU shared by both ranks, or two).

usage: torchrun --nproc_per_node=2 capture_gloo.py OUTDIR

gloo's collectives run on the CPU (the gradients are copied to the host,
reduced there and copied back): no collective kernel. Scenarios write
OUTDIR/<name>/rank-R.pt.trace.json.gz (3 active steps) and measured.json
(profiler off, every rank's):

  gloo_straggler  DDP (gloo) of a small MLP; rank 1 sleeps 30 ms a step in
                  data_loading, so rank 0 waits for it in each all-reduce
  gloo_balanced   the same without the sleep
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, record_function, schedule

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
dist.init_process_group("gloo")


def step_times_us(step_fn, n=10):
    for _ in range(3):
        step_fn()
    torch.cuda.synchronize()
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(n):
        step_fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def profiled(name, outdir, step_fn):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-%d.pt.trace.json" % RANK)
    torch.cuda.synchronize()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 record_shapes=True) as prof:
        for _ in range(5):
            step_fn()
            prof.step()
    torch.cuda.synchronize()
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    dist.barrier()
    return d


def write_measured(d, info):
    every = [None] * WORLD
    dist.all_gather_object(every, info)
    if RANK == 0:
        json.dump({"ranks": every}, open(os.path.join(d, "measured.json"), "w"), indent=1)


def train_step(model, opt, x_cpu, sleep_s):
    def step():
        with record_function("data_loading"):
            if sleep_s:
                time.sleep(sleep_s)
            x = x_cpu.to("cuda", non_blocking=True)
        with record_function("forward"):
            loss = model(x).square().mean()
        with record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            opt.step()
    return step


def ddp_gloo(outdir, straggle):
    name = "gloo_straggler" if straggle else "gloo_balanced"
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(256, 1024), nn.ReLU(),
                              *[m for _ in range(4) for m in (nn.Linear(1024, 1024), nn.ReLU())]).cuda(),
                bucket_cap_mb=8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(4096, 256).pin_memory()
    sleep = 0.030 if straggle and RANK == 1 else 0.0
    faulty = step_times_us(train_step(model, opt, x, sleep))
    clean = step_times_us(train_step(model, opt, x, 0.0))
    d = profiled(name, outdir, train_step(model, opt, x, sleep))
    write_measured(d, {"rank": RANK, "step_wall_us": faulty,
                       "step_wall_us_without_sleep": clean,
                       "sleep_us_per_step": sleep * 1e6,
                       "gpus": torch.cuda.device_count(),
                       "note": "profiler off; mean wall time of 10 steps after "
                               "3 warm-ups; DDP (gloo) MLP 256->1024 + 4x1024, "
                               "batch 4096, 8 MB buckets"})


if __name__ == "__main__":
    out = sys.argv[1]
    ddp_gloo(out, True)
    ddp_gloo(out, False)
    dist.destroy_process_group()
