#!/usr/bin/env python3
"""Capture real two-rank NCCL traces (two GPUs of one host).

usage: torchrun --nproc_per_node=2 capture_nccl.py OUTDIR [SCENARIO ...]

Keep NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
NVSHMEM_DISABLE_NVLS=1 in the environment (NVLink multicast off).

Each scenario writes OUTDIR/<name>/rank-R.pt.trace.json.gz (the profiler's
own export, gzipped; 3 active steps) and rank 0 writes OUTDIR/<name>/
measured.json: what was measured with the profiler off, every rank's.

  ddp_straggler  DDP, small GPU-bound MLP; rank 1 sleeps 30 ms a step in
                 data_loading
  ddp_balanced   the same without the sleep
  ddp_bucketed   DDP of a 1.6 B-parameter MLP, 25 MB buckets: step time
                 with and without gradient sync (no_sync), all-reduce alone
  ddp_onebucket  the same with one bucket (bucket_cap_mb large)
  fsdp2          fully_shard of a small MLP: all-gather, reduce-scatter and
                 cudaStreamWaitEvent between streams
  metric_sync    no DDP: each step all-reduces its loss and reads it back
                 with .item() (the host blocks on the collective), then 2 ms
                 of host work before the optimizer; rank 1 sleeps 30 ms in
                 data_loading, so rank 0 waits in the all-reduce with its
                 GPU queue empty and its host in a sync
"""
import gzip
import json
import os
import shutil
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, record_function, schedule

for v in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
    assert os.environ.get(v) == ("0" if v == "NCCL_NVLS_ENABLE" else "1"), v

RANK = int(os.environ["RANK"])
WORLD = int(os.environ["WORLD_SIZE"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
torch.backends.cuda.matmul.allow_tf32 = True


def step_times_us(step_fn, n=10):
    """Wall time of each of n steps after 3 warm-ups, all ranks in step."""
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


def mlp(d, layers, d_in=None):
    torch.manual_seed(0)
    first = [nn.Sequential(nn.Linear(d_in, d), nn.ReLU())] if d_in else []
    return nn.Sequential(*first, *[nn.Sequential(nn.Linear(d, d), nn.ReLU())
                                   for _ in range(layers)]).cuda()


def train_step(model, opt, x_cpu, sleep_s, after_backward=None):
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
        if after_backward:
            after_backward(loss)
        with record_function("optimizer"):
            opt.step()
    return step


def ddp_small(outdir, straggle):
    """GPU-bound (about 10 ms of GPU work a step, the host runs ahead), so
    that a balanced run is balanced under the profiler too: a host-bound
    toy model's ranks drift apart by the profiler's own overhead."""
    name = "ddp_straggler" if straggle else "ddp_balanced"
    model = DDP(mlp(2048, 8, d_in=256))
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(16384, 256).pin_memory()
    sleep = 0.030 if straggle and RANK == 1 else 0.0
    faulty = step_times_us(train_step(model, opt, x, sleep))
    clean = step_times_us(train_step(model, opt, x, 0.0))
    d = profiled(name, outdir, train_step(model, opt, x, sleep))
    write_measured(d, {"rank": RANK, "step_wall_us": faulty,
                       "step_wall_us_without_sleep": clean,
                       "sleep_us_per_step": sleep * 1e6,
                       "note": "profiler off; mean wall time of 10 steps after "
                               "3 warm-ups; DDP MLP 256->2048 + 8x2048, batch 16384, "
                               "25 MB buckets"})


def ddp_big(outdir, one_bucket):
    name = "ddp_onebucket" if one_bucket else "ddp_bucketed"
    model = DDP(mlp(8192, 24), bucket_cap_mb=100000 if one_bucket else 25,
                gradient_as_bucket_view=True)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    x = torch.randn(2048, 8192).pin_memory()
    step = train_step(model, opt, x, 0.0)

    def step_nosync():
        with model.no_sync():
            step()
    with_sync = step_times_us(step, n=8)
    without = step_times_us(step_nosync, n=8)
    flat = torch.zeros(sum(p.numel() for p in model.parameters()), device="cuda")
    ar = step_times_us(lambda: dist.all_reduce(flat), n=5)
    del flat
    d = profiled(name, outdir, step)
    write_measured(d, {"rank": RANK, "step_wall_us": with_sync,
                       "step_wall_us_no_sync": without,
                       "exposed_comm_us": with_sync - without,
                       "allreduce_alone_us": ar,
                       "params": sum(p.numel() for p in model.parameters()),
                       "note": "profiler off; mean wall time of 8 steps after 3 "
                               "warm-ups; with gradient sync against no_sync(); "
                               "allreduce_alone = one all_reduce of all gradients "
                               "(fp32) by itself"})
    del model, opt
    torch.cuda.empty_cache()


def fsdp2(outdir):
    from torch.distributed.fsdp import fully_shard
    model = mlp(2048, 6)
    for layer in model:
        fully_shard(layer)
    fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(512, 2048).pin_memory()
    step = train_step(model, opt, x, 0.0)
    wall = step_times_us(step)
    d = profiled("fsdp2", outdir, step)
    write_measured(d, {"rank": RANK, "step_wall_us": wall,
                       "note": "profiler off; mean wall time of 10 steps after 3 "
                               "warm-ups; fully_shard per layer, MLP 6x2048"})


def metric_sync(outdir):
    """The wait for a late peer ends in a host sync, not in queued work:
    rank 0's GPU is idle after the all-reduce while its host does 2 ms of
    Python, yet the whole wait is step time lost (measured: the step with
    and without rank 1's sleep)."""
    model = mlp(2048, 8, d_in=256)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x_cpu = torch.randn(16384, 256).pin_memory()

    def log_loss(loss):
        with record_function("log_loss"):
            m = loss.detach().clone()
            dist.all_reduce(m)
            m.item()
            time.sleep(0.002)

    def make(sleep_s):
        return train_step(model, opt, x_cpu, sleep_s, log_loss)
    sleep = 0.030 if RANK == 1 else 0.0
    faulty = step_times_us(make(sleep))
    clean = step_times_us(make(0.0))
    d = profiled("metric_sync", outdir, make(sleep))
    write_measured(d, {"rank": RANK, "step_wall_us": faulty,
                       "step_wall_us_without_sleep": clean,
                       "sleep_us_per_step": sleep * 1e6,
                       "note": "profiler off; mean wall time of 10 steps after 3 "
                               "warm-ups; MLP 256->2048 + 8x2048, batch 16384, no DDP; "
                               "all_reduce(loss) + .item() + 2 ms sleep a step"})


SCENARIOS = {
    "ddp_straggler": lambda o: ddp_small(o, True),
    "ddp_balanced": lambda o: ddp_small(o, False),
    "ddp_bucketed": lambda o: ddp_big(o, False),
    "ddp_onebucket": lambda o: ddp_big(o, True),
    "fsdp2": fsdp2,
    "metric_sync": metric_sync,
}

if __name__ == "__main__":
    out = sys.argv[1]
    for n in sys.argv[2:] or list(SCENARIOS):
        t = time.time()
        SCENARIOS[n](out)
        if RANK == 0:
            print(f"{n}: {time.time() - t:.1f}s", flush=True)
    dist.destroy_process_group()
