#!/usr/bin/env python3
"""Capture the CUDA allocator snapshots in testdata/ (run on a machine with
a CUDA GPU).

usage: capture_snapshot.py OUTDIR

Four scenarios, the first three recorded with
torch.cuda.memory._record_memory_history from before the model is made,
and dumped with _dump_snapshot (then gzipped); the first two with
stacks="python" through 2 warm-up steps and 3 measured ones:
  snap_train  a small transformer training step (AdamW);
  snap_leak   the same, keeping a 4 MiB tensor a step in a Python list;
  snap_profiled  the training step recorded (the recorder's defaults: C++
              frames too) and profiled at once, 5 steps (its trace of
              steps 1-4 beside the snapshot), each step's window kept;
  snap_late   snap_train recorded only from after the model, its
              gradients and its optimizer state exist (after the warm-up).
Each writes OUTDIR/<name>/snapshot.pickle.gz and measured.json: per
recorded step max_memory_allocated() after reset_peak_memory_stats() and
memory_allocated() before and after, and the bytes of the parameters,
their gradients and the optimizer state (the baseline).
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import gzip_move, make_model  # noqa: E402

DEV = "cuda"
LEAK = 4 << 20


def nbytes(ts):
    return sum(t.numel() * t.element_size() for t in ts if torch.is_tensor(t))


def keep_leak(kept):  # its own frame: the site memory --by stack names
    kept.append(torch.empty(LEAK, dtype=torch.uint8, device=DEV))


def scenario(out, name, leak, late=False):
    # recorded from before the model is made: every block has the frames
    # of its allocation, the parameters' included; late: from after the
    # model, its optimizer state and its gradients exist (the common case)
    if not late:
        torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    model = make_model(d=512, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    B, T, V = 8, 256, 1000
    x = torch.randint(0, V, (B, T), device=DEV)
    y = torch.randint(0, V, (B, T), device=DEV)
    kept = []

    def step():
        loss = lossf(model(x).view(-1, V), y.view(-1))
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        if leak:
            keep_leak(kept)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    if late:
        torch.cuda.memory._record_memory_history(max_entries=100000, stacks="python")
    steps = []
    for i in range(3):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        steps.append({"step": i, "allocated_before": before,
                      "allocated_after": torch.cuda.memory_allocated(),
                      "peak": torch.cuda.max_memory_allocated(),
                      "reserved": torch.cuda.memory_reserved()})
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "snapshot.pickle")
    torch.cuda.memory._dump_snapshot(raw)
    torch.cuda.memory._record_memory_history(enabled=None)
    gzip_move(raw)
    params = list(model.parameters())
    state = [t for s in opt.state.values() for t in s.values()]
    info = {"scenario": name, "leak_bytes_per_step": LEAK if leak else 0, "steps": steps,
            "params_bytes": nbytes(params), "grads_bytes": nbytes([p.grad for p in params]),
            "optimizer_state_bytes": nbytes(state), "recorded_from": "after the model" if late
            else "before the model",
            "note": "per recorded step: memory_allocated() before and after (synchronised), "
                    "max_memory_allocated() over it; the baseline is params + grads + optimizer "
                    "state (grads kept: zero_grad(set_to_none=False))"}
    with open(os.path.join(d, "measured.json"), "w") as f:
        json.dump(info, f, indent=1)
    del model, opt, kept
    torch.cuda.empty_cache()


def profiled(out):
    """snap_profiled: the training step recorded and profiled at once, so
    that the snapshot's peak can be placed in the trace's steps; each
    step's wall-clock window (epoch µs, the recorder's clock) is kept."""
    from torch.profiler import ProfilerActivity, profile, schedule
    d = os.path.join(out, "snap_profiled")
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-0.pt.trace.json")
    # the recorder's defaults (stacks="all": C++ frames too), as users run it
    torch.cuda.memory._record_memory_history(max_entries=100000)
    model = make_model(d=512, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    B, T, V = 8, 256, 1000
    x = torch.randint(0, V, (B, T), device=DEV)
    y = torch.randint(0, V, (B, T), device=DEV)
    windows = []
    # steps 1-4 profiled (step 0 the warm-up: a schedule is what marks
    # ProfilerStep#N), with memory events: an allocation's Addr and time in
    # the trace check the clocks against the recorder's
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=4, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw),
                 profile_memory=True) as prof:
        for i in range(5):
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            t0 = time.time_ns() // 1000
            loss = lossf(model(x).view(-1, V), y.view(-1))
            opt.zero_grad(set_to_none=False)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            windows.append({"step": i, "start_us": t0, "end_us": time.time_ns() // 1000,
                            "allocated_before": before,
                            "allocated_after": torch.cuda.memory_allocated(),
                            "peak": torch.cuda.max_memory_allocated()})
            torch.cuda.reset_peak_memory_stats()
            prof.step()
    snap = os.path.join(d, "snapshot.pickle")
    torch.cuda.memory._dump_snapshot(snap)
    torch.cuda.memory._record_memory_history(enabled=None)
    for f in (raw, snap):
        gzip_move(f)
    with open(os.path.join(d, "measured.json"), "w") as f:
        params = list(model.parameters())
        state = [t for s in opt.state.values() for t in s.values()]
        json.dump({"scenario": "snap_profiled", "steps": windows,
                   "params_bytes": nbytes(params), "grads_bytes": nbytes([p.grad for p in params]),
                   "optimizer_state_bytes": nbytes(state),
                   "note": "per step (ProfilerStep#N = step N): its wall-clock window in "
                           "epoch us, the recorder's clock, and max_memory_allocated() "
                           "over it"}, f, indent=1)


def main():
    scenario(sys.argv[1], "snap_train", leak=False)
    scenario(sys.argv[1], "snap_leak", leak=True)
    profiled(sys.argv[1])
    scenario(sys.argv[1], "snap_late", leak=False, late=True)


if __name__ == "__main__":
    main()
