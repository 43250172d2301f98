#!/usr/bin/env python3
"""Capture real traces of other model libraries and schedules (one GPU).

usage: capture_hf.py OUTDIR [SCENARIO ...]

Unlike capture.py's hand-written models, these run what users run:
transformers' GPT2LMHeadModel (its own causal-mask code, which syncs the
host once a step through aten::is_nonzero) and torchvision's ResNet-18,
under other profiler schedules. Each writes OUTDIR/<name>/rank-0.pt.trace.json.gz
and OUTDIR/<name>/measured.json (profiler off, the same script):

  gpt2_train    GPT-2 (2 layers) training step, bf16 autocast, batch 16 x 1024,
                model(input_ids=x, labels=x): GPU-bound; record_shapes and
                with_stack; schedule(wait=1, warmup=1, active=3)
  gpt2_sync     the same with a data check at the start of every step
                (`if (x == pad).any():`, as attention-mask code does): the host
                blocks in cudaStreamSynchronize while the GPU drains the last
                step, then launches this one
  gpt2_stalled  gpt2_sync with a ~40 ms pure-Python "fake_tokenize" after the
                check, with no record_function around it: the GPU has drained,
                so the stall is exposed
  gpt2_long     a 1-layer GPT-2 (fused AdamW), 30 active steps (schedule(wait=2, warmup=2,
                active=30)); large: kept out of testdata/
  mlp_long      a GPU-bound 4-layer MLP (8192 wide, bf16): few kernels a step, so
                30 active steps (schedule(wait=1, warmup=1, active=30)) stay small
  resnet_train  torchvision ResNet-18, channels_last, bf16, SGD, batch 128;
                schedule(skip_first=2, wait=1, warmup=2, active=4)

measured.json: step_wall_us (mean of 10 steps after 3 warm-ups, profiler
off) and for gpt2_stalled fake_tokenize_us (the stall alone) and
step_wall_us_no_stall. (NVML's utilization, sampled from a thread, read 0
to 100 % on the same GPU-bound loop: it is not recorded.)
"""
import os
import sys
import time

import torch
from torch.profiler import schedule

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture import measure as wall_us, run_profiled, write_measured  # noqa: E402  (wall_us: mean step, profiler off)

DEV = "cuda"
LAYERS = 2  # the LM head (50257 x 768) keeps it GPU-bound; the trace small
torch.backends.cuda.matmul.allow_tf32 = True


def profiled(outdir, name, step_fn, sched, steps, with_stack=True, shapes=True):
    return run_profiled(name, outdir, step_fn, steps, with_stack=with_stack, sched=sched,
                        shapes=shapes, key_averages=False)


def gpt2_step(layers, batch, seq, stall=None, check=False, fused=False):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=layers, n_embd=768, n_head=12, n_positions=seq)
    model = GPT2LMHeadModel(cfg).to(DEV)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused)
    x = torch.randint(0, cfg.vocab_size, (batch, seq), device=DEV)

    def step():
        if check and (x == -1).any():  # aten::is_nonzero: a sync
            raise ValueError("padding in the batch")
        if stall:  # after the sync: the GPU has drained, the stall shows
            stall()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


SPIN = [0]


def fake_tokenize():
    """About 40 ms of pure Python, launching nothing and calling nothing (a
    loop of bytecode: with_stack records every call, a loop of calls would
    make the trace huge)."""
    i, n = 0, SPIN[0]
    while i < n:
        i += 1
    return i


def calibrate_spin():
    n = 200000
    t0 = time.perf_counter()
    SPIN[0] = n
    fake_tokenize()
    SPIN[0] = int(n * 0.040 / (time.perf_counter() - t0))


write = write_measured


def gpt2_train(out):
    step = gpt2_step(LAYERS, 16, 1024)
    d = profiled(out, "gpt2_train", step, schedule(wait=1, warmup=1, active=3), 5)
    us = wall_us(step)
    write(d, {"scenario": "gpt2_train", "step_wall_us": us,
              "note": "profiler off: mean of 10 steps after 3 warm-ups"})


def gpt2_sync(out):
    step = gpt2_step(LAYERS, 16, 1024, check=True)
    d = profiled(out, "gpt2_sync", step, schedule(wait=1, warmup=1, active=3), 5)
    us = wall_us(step)
    write(d, {"scenario": "gpt2_sync", "step_wall_us": us,
              "note": "profiler off: mean of 10 steps after 3 warm-ups"})


def gpt2_stalled(out):
    calibrate_spin()
    step = gpt2_step(LAYERS, 16, 1024, stall=fake_tokenize, check=True)
    plain = gpt2_step(LAYERS, 16, 1024, check=True)
    d = profiled(out, "gpt2_stalled", step, schedule(wait=1, warmup=1, active=3), 5)
    us = wall_us(step)
    no_stall = wall_us(plain)
    t0 = time.perf_counter()
    for _ in range(5):
        fake_tokenize()
    tok = (time.perf_counter() - t0) / 5 * 1e6
    write(d, {"scenario": "gpt2_stalled", "step_wall_us": us,
              "step_wall_us_no_stall": no_stall, "fake_tokenize_us": tok,
              "note": "profiler off: the step with the Python stall, without it, and the "
                      "stall alone"})


def gpt2_long(out):
    step = gpt2_step(1, 8, 1024, fused=True)
    d = profiled(out, "gpt2_long", step, schedule(wait=2, warmup=2, active=30), 34,
                 with_stack=False, shapes=False)
    us = wall_us(step)
    write(d, {"scenario": "gpt2_long", "step_wall_us": us})


def mlp_long(out):
    torch.manual_seed(0)
    w = 8192
    model = torch.nn.Sequential(*[torch.nn.Linear(w, w) for _ in range(4)]).to(DEV, torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(4096, w, device=DEV, dtype=torch.bfloat16)

    def step():
        model(x).float().pow(2).mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    d = profiled(out, "mlp_long", step, schedule(wait=1, warmup=1, active=30), 32,
                 with_stack=False)
    us = wall_us(step)
    write(d, {"scenario": "mlp_long", "step_wall_us": us})


def resnet_train(out):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18().to(DEV, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(128, 3, 224, 224, device=DEV).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (128,), device=DEV)
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    d = profiled(out, "resnet_train", step,
                 schedule(skip_first=2, wait=1, warmup=2, active=4), 10, with_stack=False)
    us = wall_us(step)
    write(d, {"scenario": "resnet_train", "step_wall_us": us})


SCENARIOS = {"gpt2_train": gpt2_train, "gpt2_sync": gpt2_sync, "gpt2_stalled": gpt2_stalled,
             "gpt2_long": gpt2_long, "mlp_long": mlp_long, "resnet_train": resnet_train}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in sys.argv[2:] or SCENARIOS:
        t0 = time.time()
        SCENARIOS[name](out)
        torch.cuda.empty_cache()
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
