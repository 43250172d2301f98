#!/usr/bin/env python3
"""Capture a real two-rank trace (run on a machine with a CUDA GPU).

usage: capture_ranks.py OUTDIR

Two processes form a torch.distributed group (gloo: one GPU is enough, so
the ranks share it) and each profiles a few training steps of a small MLP,
with an all_reduce of its gradients through gloo on the CPU every step.
Each writes OUTDIR/two_ranks/rank-R.pt.trace.json.gz, the profiler's own
export with Kineto's distributedInfo (rank, world size, backend). Rank 1
also sleeps 3 ms a step, so the ranks differ and rank 0 waits in the
all_reduce. No NCCL: only single-GPU machines were lent for captures.
"""
import gzip
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule


def worker(rank, world, outdir):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 512)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 512, device="cuda")

    def step():
        with record_function("forward_backward"):
            loss = model(x).square().mean()
            opt.zero_grad()
            loss.backward()
        with record_function("allreduce_grads"):
            grads = [p.grad.cpu() for p in model.parameters()]
            for g in grads:
                dist.all_reduce(g)
            for p, g in zip(model.parameters(), grads):
                p.grad.copy_(g.div_(world))
        opt.step()
        if rank == 1:
            time.sleep(0.003)

    d = os.path.join(outdir, "two_ranks")
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-%d.pt.trace.json" % rank)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 record_shapes=True) as prof:
        for _ in range(5):
            step()
            prof.step()
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    out = sys.argv[1]
    mp.spawn(worker, args=(2, out), nprocs=2, join=True)
