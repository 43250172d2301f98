#!/usr/bin/env python3
"""Captures with FLOP truth for `traceanalyze roofline` (one GPU).

usage: capture_roofline.py OUTDIR [SCENARIO ...]

Each scenario writes OUTDIR/<name>/ with the trace as the profiler tutorial
makes it (tensorboard_trace_handler, gzipped: <worker>.<ts>.pt.trace.json.gz,
also copied to rank-0.pt.trace.json.gz) and measured.json: what
torch.utils.flop_counter.FlopCounterMode counts for one step (total and per
aten op) and the step's wall time with the profiler off (mean of 10 after 3
warm-ups, CUDA-synchronised).

  gpt2_prefill   transformers GPT-2 small (12 layers, 768) in fp16 (.half()),
                 batch 1 x 512, one prefill forward a step under no_grad;
                 schedule(wait=1, warmup=3, active=3), record_shapes,
                 profile_memory, with_stack, as the tutorial does
  gpt2_decode    the same model, one token a step with the KV cache of the
                 512-token prompt (cropped back to 512 after each step so
                 every step does the same work)
  gpt2_train     GPT-2 (4 layers), bf16 autocast, batch 8 x 512, AdamW: a
                 training step (forward, backward, optimizer); record_shapes.
                 Under the profiler its host needs ~30 ms a step against
                 ~19 ms of GPU work: host-bound in the trace, GPU-bound without
  gpt2_train_big the same at batch 16 x 1024: GPU-bound under the profiler too
  formulas       every other formula on real calls, forward and backward:
                 conv2d, conv_transpose2d (groups 2), flash attention (causal),
                 efficient attention (a mask), bmm, baddbmm, in bf16
  resnet_infer   torchvision ResNet-18, fp16, channels_last, batch 32,
                 inference: convolutions
"""
import glob
import json
import os
import shutil
import sys
import time

import torch
from torch.profiler import (ProfilerActivity, profile, schedule,
                            tensorboard_trace_handler)
from torch.utils.flop_counter import FlopCounterMode

DEV = "cuda"


def measure(step, n=10):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def flops(step):
    with FlopCounterMode(display=False) as fc:
        step()
    torch.cuda.synchronize()
    per_op = {str(k): v for k, v in fc.get_flop_counts().get("Global", {}).items()}
    return fc.get_total_flops(), per_op


def profiled(out, name, step, sched, steps, stack=True, memory=True):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=sched,
                 on_trace_ready=tensorboard_trace_handler(d, use_gzip=True),
                 record_shapes=True, profile_memory=memory, with_stack=stack) as prof:
        for _ in range(steps):
            step()
            prof.step()
    torch.cuda.synchronize()
    got = sorted(glob.glob(os.path.join(d, "*.pt.trace.json.gz")))
    shutil.copy(got[-1], os.path.join(d, "rank-0.pt.trace.json.gz"))
    return d


def write(d, name, step, extra=None):
    total, per_op = flops(step)
    info = {"scenario": name, "flops_per_step": total, "flops_per_op": per_op,
            "step_wall_us": measure(step),
            "device": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "note": "FlopCounterMode over one step; wall: profiler off, mean of 10 "
                    "steps after 3 warm-ups"}
    info.update(extra or {})
    with open(os.path.join(d, "measured.json"), "w") as f:
        json.dump(info, f, indent=1)


def gpt2(layers):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(n_layer=layers, n_embd=768, n_head=12, n_positions=1024)
    return cfg, GPT2LMHeadModel(cfg).to(DEV)


TUTORIAL = dict(wait=1, warmup=3, active=3)


def gpt2_prefill(out):
    cfg, model = gpt2(12)
    model = model.half().eval()
    x = torch.randint(0, cfg.vocab_size, (1, 512), device=DEV)

    @torch.no_grad()
    def step():
        model(input_ids=x, use_cache=True)
    d = profiled(out, "gpt2_prefill", step, schedule(**TUTORIAL), 7)
    write(d, "gpt2_prefill", step)


def gpt2_decode(out):
    cfg, model = gpt2(12)
    model = model.half().eval()
    x = torch.randint(0, cfg.vocab_size, (1, 512), device=DEV)
    with torch.no_grad():
        cache = model(input_ids=x, use_cache=True).past_key_values
    tok = torch.randint(0, cfg.vocab_size, (1, 1), device=DEV)
    pos = torch.tensor([[512]], device=DEV)

    @torch.no_grad()
    def step():
        model(input_ids=tok, past_key_values=cache, position_ids=pos, use_cache=True)
        cache.crop(512)
    d = profiled(out, "gpt2_decode", step, schedule(**TUTORIAL), 7)
    write(d, "gpt2_decode", step)


def gpt2_train(out, name="gpt2_train", batch=8, seq=512):
    cfg, model = gpt2(4)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, cfg.vocab_size, (batch, seq), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    d = profiled(out, name, step, schedule(wait=1, warmup=1, active=3), 5,
                 stack=False, memory=False)
    write(d, name, step)


def gpt2_train_big(out):
    gpt2_train(out, "gpt2_train_big", 16, 1024)


def formulas(out):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    torch.manual_seed(0)
    bf = dict(device=DEV, dtype=torch.bfloat16)
    conv = torch.nn.Conv2d(64, 128, 3, stride=2, padding=1).to(**bf)
    deconv = torch.nn.ConvTranspose2d(128, 64, 4, stride=2, padding=1, groups=2).to(**bf)
    img = torch.randn(16, 64, 56, 56, **bf, requires_grad=True)
    q, k, v = (torch.randn(4, 8, 1024, 64, **bf, requires_grad=True) for _ in range(3))
    mask = torch.randn(4, 8, 1024, 1024, **bf) > 0
    a, b = torch.randn(32, 256, 512, **bf), torch.randn(32, 512, 128, **bf)
    c = torch.randn(32, 256, 128, **bf)

    def step():
        deconv(conv(img)).sum().backward()
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward()
        torch.bmm(a, b)
        torch.baddbmm(c, a, b)
    d = profiled(out, "formulas", step, schedule(wait=1, warmup=1, active=3), 5,
                 stack=False, memory=False)
    write(d, "formulas", step)


def resnet_infer(out):
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18().to(DEV, memory_format=torch.channels_last)
    model = model.half().eval()
    x = torch.randn(32, 3, 224, 224, device=DEV, dtype=torch.half)
    x = x.to(memory_format=torch.channels_last)

    @torch.no_grad()
    def step():
        model(x)
    d = profiled(out, "resnet_infer", step, schedule(wait=1, warmup=1, active=3), 5,
                 stack=False, memory=False)
    write(d, "resnet_infer", step)


SCENARIOS = {"gpt2_prefill": gpt2_prefill, "gpt2_decode": gpt2_decode,
             "gpt2_train": gpt2_train, "gpt2_train_big": gpt2_train_big,
             "formulas": formulas, "resnet_infer": resnet_infer}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in sys.argv[2:] or SCENARIOS:
        t0 = time.time()
        try:
            SCENARIOS[name](out)
        except Exception as e:  # one broken scenario must not lose the others
            print(f"{name}: FAILED {type(e).__name__}: {e}", flush=True)
            continue
        torch.cuda.empty_cache()
        print(f"{name}: {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
