#!/usr/bin/env python3
"""Capture traces of torch.compile'd models (one GPU): what most training
runs look like today, and unlike every other capture here (Inductor's
Triton kernels, CompiledFunction and "Torch-Compiled Region" ranges, CUDA
graphs replayed by the compiled code).

usage: capture_compile.py OUTDIR [SCENARIO ...]

  compiled_train   transformers' GPT2LMHeadModel (2 layers, batch 16 x 1024,
                   bf16 autocast) under torch.compile (Inductor, default
                   mode), AdamW; schedule(wait=2, warmup=2, active=4),
                   record_shapes, no with_stack
  compiled_graphs  a 12-layer MLP decoded one token at a time under
                   torch.compile(mode="reduce-overhead"): Inductor's CUDA graphs,
                   8 tokens a step; schedule(wait=1, warmup=1, active=3)

Each writes OUTDIR/<name>/rank-0.pt.trace.json.gz, key_averages.json (the
profiler's own table, as capture.py dumps it) and measured.json:
step_wall_us (profiler off, mean of 10 steps after 3 warm-ups) and
events_step_us (CUDA events around 10 steps launched back to back, a
tenth: the GPU's time a step where the GPU bounds it, the host's where
the host does).
"""
import os
import sys

import torch
from torch.profiler import schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import gpu_time_us, measure, run_profiled, write_measured  # noqa: E402

DEV = "cuda"
torch.backends.cuda.matmul.allow_tf32 = True


def profiled_and_measured(out, name, step, sched, steps):
    """The trace of step under sched, then its time with the profiler off."""
    d = run_profiled(name, out, step, steps, sched=sched)
    write_measured(d, {"scenario": name, "step_wall_us": measure(step),
                       "events_step_us": gpu_time_us(step),
                       "note": "profiler off: mean of 10 steps after 3 warm-ups; "
                               "events_step_us: CUDA events around 10 steps back to "
                               "back, a tenth"})


def compiled_train(out):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=2, n_embd=768, n_head=12, n_positions=1024)
    model = torch.compile(GPT2LMHeadModel(cfg).to(DEV))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (16, 1024), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(5):  # compile (forward, backward) outside the trace
        step()
    torch.cuda.synchronize()
    profiled_and_measured(out, "compiled_train", step, schedule(wait=2, warmup=2, active=4), 8)


def compiled_graphs(out):
    torch.manual_seed(0)
    d_model = 1024
    layers = torch.nn.Sequential(*[torch.nn.Sequential(
        torch.nn.Linear(d_model, d_model), torch.nn.GELU()) for _ in range(12)]).to(DEV).half()
    fn = torch.compile(layers, mode="reduce-overhead")
    x = torch.randn(1, d_model, device=DEV, dtype=torch.half)

    @torch.no_grad()
    def step():
        h = x
        for _ in range(8):
            h = fn(h).clone()
        return h
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    profiled_and_measured(out, "compiled_graphs", step, schedule(wait=1, warmup=1, active=3), 5)


SCENARIOS = {"compiled_train": compiled_train, "compiled_graphs": compiled_graphs}

if __name__ == "__main__":
    outdir = sys.argv[1]
    for name in sys.argv[2:] or SCENARIOS:
        SCENARIOS[name](outdir)
        print(name, "done", flush=True)
