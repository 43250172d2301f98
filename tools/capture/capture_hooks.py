#!/usr/bin/env python3
"""Captures (helper-59, 2026-12-06) (one GPU, PyTorch 2.11): two runs whose backward or side
work runs off the main thread, with ground truth measured with the profiler off.

usage: capture_hooks.py OUTDIR

  hooks        MLP 6 x Linear(2048) fp32, batch 512 from a DataLoader (whole batches,
               batch_size=None; num_workers=2, pin_memory=True, persistent_workers); every
               parameter carries tensor.register_hook whose body spins
               HOOK_SPIN_S of CPU inside record_function('grad_hook');
               2 micro-batches per step (two loss.backward()), SGD.
  hooks_bare   the same, but the hooks do not open a record_function
               (their time is unnamed in the trace).
  ema_thread   MLP 16 x (Linear(1024), GELU), batch 256 on the GPU, AdamW;
               after opt.step() the main thread records a CUDA event and
               puts the step on a queue; a side threading.Thread waits for
               the event on its own CUDA stream, does a per-tensor EMA
               (mul_, add_) inside record_function('ema_update'), then the
               EMA's norm with .item() (a sync of the side stream); the main
               thread waits (threading.Event) for the previous EMA before
               its next opt.step().  No with_stack.

Each writes OUTDIR/<name>/rank-0.pt.trace.json.gz (schedule wait=1,
warmup=2, active=5) and OUTDIR/measured.json has, profiler off: per-step wall
(free-running median and mean; per-step deltas of perf_counter), and a synced
breakdown (forward, backward: loss.backward() bracketed by
torch.cuda.synchronize(), hooks' total per step), with and without the
hooks / the side thread's work.
"""
import json
import os
import queue
import statistics as st
import sys
import threading
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import gzip_move  # noqa: E402

DEV = "cuda"
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
sync = torch.cuda.synchronize
HOOK_SPIN_S = 0.0004
M = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
     "hook_spin_s": HOOK_SPIN_S}


def med(xs):
    return round(st.median(xs) * 1e3, 4)


def profiled(name, step_fn, n_steps=8, shapes=True):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-0.pt.trace.json")
    ends = []
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=2, active=5, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 record_shapes=shapes) as prof:
        t0 = time.perf_counter()
        for _ in range(n_steps):
            step_fn()
            prof.step()
            ends.append(time.perf_counter() - t0)
    sync()
    gzip_move(raw)
    deltas = [ends[0]] + [ends[i] - ends[i - 1] for i in range(1, len(ends))]
    return [round(x * 1e3, 3) for x in deltas]


def free_running(step_fn, n=30, warm=5):
    for _ in range(warm):
        step_fn()
    sync()
    ts = [time.perf_counter()]
    for _ in range(n):
        step_fn()
        ts.append(time.perf_counter())
    sync()
    t_end = time.perf_counter()
    d = [ts[i + 1] - ts[i] for i in range(n)]
    return {"median_ms": med(d), "mean_ms_incl_final_sync": round((t_end - ts[0]) / n * 1e3, 4),
            "deltas_ms": [round(x * 1e3, 3) for x in d]}


# ---------------------------------------------------------------- (a) hooks
class Rand(Dataset):
    """Whole batches (batch_size=None): a clone of one of 8 pre-made ones."""
    def __init__(self):
        g = torch.Generator().manual_seed(0)
        self.X = torch.randn(8, 512, 2048, generator=g)
        self.Y = torch.randint(0, 10, (8, 512), generator=g)

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return self.X[i % 8].clone(), self.Y[i % 8].clone()


def hooks_run():
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(2048, 2048), nn.ReLU()]
    net = nn.Sequential(*layers, nn.Linear(2048, 10)).to(DEV)
    opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9)
    loader = DataLoader(Rand(), batch_size=None, num_workers=2, pin_memory=True,
                        persistent_workers=True, prefetch_factor=4)
    it = iter(loader)
    hook_t = [0.0]
    named = [True]

    def spin():
        t0 = time.perf_counter()
        x = 0
        while time.perf_counter() - t0 < HOOK_SPIN_S:
            x += 1
        hook_t[0] += time.perf_counter() - t0

    def hook(g):
        if named[0]:
            with record_function("grad_hook"):
                spin()
        else:
            spin()
        return None

    handles = []

    def add_hooks():
        for p in net.parameters():
            handles.append(p.register_hook(hook))

    def remove_hooks():
        for h in handles:
            h.remove()
        handles.clear()

    tm = {}

    def step(timed=False):
        for _ in range(2):
            x, y = next(it)
            x, y = x.to(DEV, non_blocking=True), y.to(DEV, non_blocking=True)
            if timed:
                sync(); t0 = time.perf_counter()
            loss = nn.functional.cross_entropy(net(x), y) / 2
            if timed:
                sync(); t1 = time.perf_counter()
            loss.backward()
            if timed:
                sync(); t2 = time.perf_counter()
                tm["fwd"] += t1 - t0
                tm["bwd"] += t2 - t1
        if timed:
            t0 = time.perf_counter()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if timed:
            sync(); tm["opt"] += time.perf_counter() - t0

    def breakdown(n=15):
        fw, bw, op, hk = [], [], [], []
        for _ in range(n):
            tm.update(fwd=0.0, bwd=0.0, opt=0.0)
            h0 = hook_t[0]
            step(True)
            fw.append(tm["fwd"]); bw.append(tm["bwd"]); op.append(tm["opt"]); hk.append(hook_t[0] - h0)
        return {"forward_ms_per_step(2 microbatches)": med(fw),
                "backward_ms_per_step(2 loss.backward)": med(bw),
                "opt_ms": med(op), "hooks_ms_per_step": med(hk)}

    for _ in range(5):
        step()
    sync()
    R = {"params": len(list(net.parameters())), "n_hooks_per_backward": len(list(net.parameters()))}
    add_hooks()
    h0 = hook_t[0]
    R["with_hooks_free_running"] = free_running(step)
    R["with_hooks_hook_ms_per_step_free_running"] = round((hook_t[0] - h0) / 35 * 1e3, 4)
    R["with_hooks_synced_breakdown"] = breakdown()
    remove_hooks()
    R["no_hooks_free_running"] = free_running(step)
    R["no_hooks_synced_breakdown"] = breakdown()
    add_hooks()
    R["with_hooks_free_running_again"] = free_running(step)
    h0 = hook_t[0]
    R["hooks_profiled_host_step_ms"] = profiled("hooks", step)
    R["hooks_profiled_hook_ms_total_8_steps"] = round((hook_t[0] - h0) * 1e3, 3)
    named[0] = False
    R["hooks_bare_profiled_host_step_ms"] = profiled("hooks_bare", step)
    named[0] = True
    remove_hooks()
    R["no_hooks_profiled_host_step_ms"] = profiled("hooks_off", step)
    M["hooks"] = R
    print("HOOKS", json.dumps(R)[:4000])
    del it, loader


# ---------------------------------------------------------------- (b) EMA thread
def ema_run():
    torch.manual_seed(0)
    layers = []
    for _ in range(16):
        layers += [nn.Linear(1024, 1024), nn.GELU()]
    net = nn.Sequential(*layers).to(DEV)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
    ema = [p.detach().clone() for p in net.parameters()]
    params = list(net.parameters())
    x = torch.randn(256, 1024, device=DEV)
    y = torch.randn(256, 1024, device=DEV)
    side = torch.cuda.Stream()
    q = queue.Queue()
    done = threading.Event()
    done.set()
    state = {"ev_done": None, "norms": [], "ema_t": 0.0, "on": True}

    def worker():
        while True:
            item = q.get()
            if item is None:
                return
            ev = item
            t0 = time.perf_counter()
            with torch.cuda.stream(side):
                side.wait_event(ev)
                with record_function("ema_update"):
                    with torch.no_grad():
                        for e, p in zip(ema, params):
                            e.mul_(0.999).add_(p.detach(), alpha=0.001)
                        n = torch.stack([e.norm() for e in ema]).sum()
                state["norms"].append(n.item())
                evd = torch.cuda.Event()
                evd.record(side)
            state["ev_done"] = evd
            state["ema_t"] += time.perf_counter() - t0
            done.set()

    th = threading.Thread(target=worker, daemon=True, name="ema")
    th.start()
    tm = {}

    def step(timed=False):
        if timed:
            sync(); t0 = time.perf_counter()
        out = net(x)
        loss = nn.functional.mse_loss(out, y)
        if timed:
            sync(); t1 = time.perf_counter()
        loss.backward()
        if timed:
            sync(); t2 = time.perf_counter()
        if state["on"]:
            done.wait()              # the previous EMA must have read the weights
            if state["ev_done"] is not None:
                torch.cuda.current_stream().wait_event(state["ev_done"])
        opt.step()
        opt.zero_grad(set_to_none=True)
        if state["on"]:
            ev = torch.cuda.Event()
            ev.record()
            done.clear()
            q.put(ev)
        if timed:
            sync(); t3 = time.perf_counter()
            tm["fwd"] = t1 - t0; tm["bwd"] = t2 - t1; tm["opt+wait"] = t3 - t2

    def breakdown(n=15):
        fw, bw, op = [], [], []
        for _ in range(n):
            step(True)
            fw.append(tm["fwd"]); bw.append(tm["bwd"]); op.append(tm["opt+wait"])
        return {"forward_ms": med(fw), "backward_ms": med(bw), "opt_incl_ema_wait_ms": med(op)}

    def ema_alone(n=15):
        ts = []
        for _ in range(n):
            sync()
            done.wait()
            t0 = time.perf_counter()
            ev = torch.cuda.Event(); ev.record(); done.clear(); q.put(ev); done.wait()
            sync()
            ts.append(time.perf_counter() - t0)
        return med(ts)

    for _ in range(5):
        step()
    sync(); done.wait()
    R = {}
    e0 = state["ema_t"]
    R["with_ema_free_running"] = free_running(step)
    R["ema_thread_ms_per_step_free_running"] = round((state["ema_t"] - e0) / 35 * 1e3, 4)
    R["with_ema_synced_breakdown"] = breakdown()
    done.wait(); sync()
    R["ema_alone_synced_ms"] = ema_alone()
    state["on"] = False
    R["no_ema_free_running"] = free_running(step)
    R["no_ema_synced_breakdown"] = breakdown()
    state["on"] = True
    R["with_ema_free_running_again"] = free_running(step)
    done.wait(); sync()
    R["ema_profiled_host_step_ms"] = profiled("ema_thread", step)
    done.wait(); sync()
    state["on"] = False
    R["no_ema_profiled_host_step_ms"] = profiled("ema_off", step)
    q.put(None)
    M["ema"] = R
    print("EMA", json.dumps(R)[:4000])


hooks_run()
ema_run()
with open(os.path.join(OUT, "measured.json"), "w") as f:
    json.dump(M, f, indent=1)
os.system("ls -la %s/*" % OUT)
