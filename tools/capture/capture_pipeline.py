#!/usr/bin/env python3
"""Capture two-rank traces of point-to-point and all-to-all traffic.

usage: capture_pipeline.py OUTDIR

Two processes share one GPU and talk through gloo (send/recv and
all_to_all of CPU tensors): only single-GPU machines were lent when these
were made, and gloo records the same `gloo:*` ops and Kineto
distributedInfo as a two-GPU job would. Each scenario writes
OUTDIR/<name>/rank-R.pt.trace.json.gz (3 active steps) and measured.json
(profiler off, both ranks: the step's wall time and the time each rank
spent inside each kind of call, a step):

  pipe_gpipe  a 2-stage pipeline (GPipe, 4 micro-batches): rank 0 runs the
              first half of an MLP and sends activations to rank 1, which
              runs the second half and the loss and sends the gradients
              back. Rank 1 also sleeps 2 ms a micro-batch in a
              `stage1_prep` range: the slow stage the other waits for.
  moe_a2a     a mixture-of-experts layer, 4 times a step, forward only:
              tokens to each rank's expert by all_to_all with uneven
              splits (3/4 of every rank's tokens go to rank 1's expert),
              and back. Rank 1's expert runs 3x the tokens and sleeps
              1 ms a layer in `expert_prep`.
"""
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import gzip_move  # noqa: E402

MICRO = 4


class Timers:
    """Wall time inside each kind of call, profiler off."""

    def __init__(self):
        self.on = False
        self.t = {}

    def time(self, kind, fn):
        t0 = time.perf_counter()
        r = fn()
        if self.on:
            self.t[kind] = self.t.get(kind, 0.0) + time.perf_counter() - t0
        return r


def measure(rank, world, step, timers, n=10):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    dist.barrier()
    timers.t = {}
    timers.on = True
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / n * 1e6
    timers.on = False
    return {"rank": rank, "step_wall_us": wall,
            "in_call_us_per_step": {k: v / n * 1e6 for k, v in timers.t.items()}}


def profiled(rank, d, step):
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-%d.pt.trace.json" % rank)
    torch.cuda.synchronize()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 record_shapes=True) as prof:
        for _ in range(5):
            step()
            prof.step()
    torch.cuda.synchronize()
    gzip_move(raw)
    dist.barrier()


def with_and_without(rank, world, step, timers, sleep):
    """measure()'s figures with the planted sleep (sleep[0], which step
    reads), and under "without_sleep" the same with none."""
    info = measure(rank, world, step, timers)
    saved, sleep[0] = sleep[0], 0.0
    info["without_sleep"] = measure(rank, world, step, timers)
    sleep[0] = saved
    return info


def write_measured(rank, world, d, info, note):
    every = [None] * world
    dist.all_gather_object(every, info)
    if rank == 0:
        json.dump({"ranks": every, "note": note},
                  open(os.path.join(d, "measured.json"), "w"), indent=1)


def pipe_gpipe(rank, world, outdir, sleep_s):
    timers = Timers()
    sleep = [sleep_s]
    torch.manual_seed(rank)
    width, batch = 2048, 1024
    stage = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(width, width), nn.ReLU())]).cuda()
    opt = torch.optim.SGD(stage.parameters(), lr=1e-4)
    x = torch.randn(MICRO, batch, width, device="cuda")
    buf = torch.empty(batch, width)

    def step():
        opt.zero_grad(set_to_none=True)
        acts, ins = [], []
        for mb in range(MICRO):
            with record_function("forward_mb%d" % mb):
                if rank == 0:
                    a = stage(x[mb])
                    acts.append(a)
                    cpu = a.detach().cpu()
                    timers.time("send", lambda: dist.send(cpu, 1))
                else:
                    timers.time("recv", lambda: dist.recv(buf, 0))
                    inp = buf.to("cuda").requires_grad_()
                    with record_function("stage1_prep"):
                        time.sleep(sleep[0])
                    ins.append(inp)
                    acts.append(stage(inp).square().mean())
        for mb in reversed(range(MICRO)):
            with record_function("backward_mb%d" % mb):
                if rank == 0:
                    timers.time("recv", lambda: dist.recv(buf, 1))
                    acts[mb].backward(buf.to("cuda"))
                else:
                    acts[mb].backward()
                    g = ins[mb].grad.cpu()
                    timers.time("send", lambda: dist.send(g, 0))
        with record_function("optimizer"):
            opt.step()

    info = with_and_without(rank, world, step, timers, sleep)
    info["sleep_us_per_step"] = sleep_s * 1e6 * MICRO if rank == 1 else 0.0
    d = os.path.join(outdir, "pipe_gpipe")
    profiled(rank, d, step)
    write_measured(rank, world, d, info,
                   "profiler off; mean of 10 steps after 3 warm-ups; 2-stage GPipe, "
                   "4 micro-batches of 1024 x 2048, 3 Linear+ReLU a stage, gloo "
                   "send/recv of CPU tensors; rank 1 sleeps 2 ms a micro-batch "
                   "(without_sleep: the same with no sleep); in_call_us_per_step: "
                   "wall time inside dist.send/dist.recv")


def moe_a2a(rank, world, outdir, sleep_s):
    timers = Timers()
    sleep = [sleep_s]
    torch.manual_seed(rank)
    tokens, width, layers = 2048, 512, 4
    # every rank sends 1/4 of its tokens to rank 0's expert, 3/4 to rank 1's
    send_splits = [tokens // 4, tokens - tokens // 4]
    recv_splits = [send_splits[rank]] * world
    expert = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)).cuda()
    gate = nn.Linear(width, width).cuda()
    x = torch.randn(tokens, width, device="cuda")

    @torch.no_grad()
    def step():
        h = x
        for layer in range(layers):
            with record_function("moe_layer%d" % layer):
                routed = gate(h).cpu()
                got = torch.empty(sum(recv_splits), width)
                timers.time("all_to_all", lambda: dist.all_to_all_single(
                    got, routed, recv_splits, send_splits))
                with record_function("expert_prep"):
                    time.sleep(sleep[0])
                out = expert(got.to("cuda")).cpu()
                back = torch.empty(tokens, width)
                timers.time("all_to_all", lambda: dist.all_to_all_single(
                    back, out, send_splits, recv_splits))
                h = h + back.to("cuda")
        return h

    info = with_and_without(rank, world, step, timers, sleep)
    info["sleep_us_per_step"] = sleep_s * 1e6 * layers
    d = os.path.join(outdir, "moe_a2a")
    profiled(rank, d, step)
    write_measured(rank, world, d, info,
                   "profiler off; mean of 10 steps after 3 warm-ups; 4 MoE layers a "
                   "step (forward only, no_grad), 2048 tokens x 512 a rank, all_to_all_single "
                   "(gloo, CPU tensors) with splits [512, 1536] from every rank; rank 1 "
                   "sleeps 1 ms a layer (without_sleep: none); in_call_us_per_step: wall "
                   "time inside the two all_to_all calls of every layer")


def worker(rank, world, outdir):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.cuda.set_device(0)
    pipe_gpipe(rank, world, outdir, 0.002 if rank == 1 else 0.0)
    moe_a2a(rank, world, outdir, 0.001 if rank == 1 else 0.0)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(2, sys.argv[1]), nprocs=2, join=True)
