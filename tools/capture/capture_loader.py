#!/usr/bin/env python3
"""Capture a run starved by its DataLoader (one GPU): worker processes
(num_workers=2, pin_memory) that cannot keep up with the GPU, the common
case that no other capture here shows (the others sleep in a
record_function, or load on the main thread).

usage: capture_loader.py OUTDIR

  loader_starved  a small CNN (bf16 autocast, SGD) trained on batches of 64
                  images 3 x 64 x 64 from a Dataset whose __getitem__ spends
                  about 1 ms of CPU a sample (numpy), in 2 worker processes;
                  schedule(wait=2, warmup=2, active=4), record_shapes

Writes OUTDIR/loader_starved/rank-0.pt.trace.json.gz and measured.json
(profiler off, 10 steps after 3 warm-ups): step_wall_us, data_wait_us
(the time next() on the loader took a step) and compute_us (the same
steps' GPU work alone: the model on one batch held on the GPU).
"""
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from torch.profiler import schedule
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import run_profiled, write_measured  # noqa: E402

DEV = "cuda"


class Slow(Dataset):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        rng = np.random.default_rng(i)
        x = rng.standard_normal((3, 64, 64), dtype=np.float32)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 0.001:  # decoding, augmenting
            x = np.tanh(x)
        return torch.from_numpy(x), i % 10


def model():
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 128, 3, padding=1),
        nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10)).to(DEV)


def main(out):
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    loader = DataLoader(Slow(), batch_size=64, num_workers=2, pin_memory=True,
                        persistent_workers=True, prefetch_factor=2)
    it = iter(loader)
    wait = [0.0]

    def train(x, y):
        x, y = x.to(DEV, non_blocking=True), y.to(DEV, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def step():
        t0 = time.perf_counter()
        x, y = next(it)
        wait[0] += time.perf_counter() - t0
        train(x, y)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    wait[0] = 0.0
    t0 = time.perf_counter()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / 10 * 1e6
    data_wait = wait[0] / 10 * 1e6
    xb, yb = next(it)
    for _ in range(3):
        train(xb, yb)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(10):
        train(xb, yb)
    torch.cuda.synchronize()
    compute = (time.perf_counter() - t0) / 10 * 1e6

    d = run_profiled("loader_starved", out, step, 8, key_averages=False,
                     sched=schedule(wait=2, warmup=2, active=4))
    write_measured(d, {"scenario": "loader_starved", "step_wall_us": wall,
                       "data_wait_us": data_wait, "compute_us": compute,
                       "note": "profiler off: mean of 10 steps after 3 warm-ups; data_wait: "
                               "next() on the loader a step; compute: the training step "
                               "on a batch already loaded, back to back"})


if __name__ == "__main__":
    main(sys.argv[1])
    print("loader_starved done", flush=True)
