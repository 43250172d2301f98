#!/usr/bin/env python3
"""A capture for the nn.Module views (testdata/tb_cnn): a small ResNet-like
CNN written with torch.nn (convolutions, batch norm, pooling: cuDNN's
kernels, unlike the transformer captures), trained with SGD in fp16
autocast with a GradScaler, profiled through tensorboard_trace_handler
with a repeating schedule (two spans) and with_modules=True, which on
PyTorch 2.11 names no module of an eager model (testdata/tb_cnn); with
"stack", once (one span of two steps) with with_stack=True, which writes
the nn.Module frames (testdata/cnn_stack).

Ground truth, with the profiler off: CUDA events in forward pre/post hooks
and full backward pre/post hooks of each top-level block give each block's
forward and backward GPU time per step (the mean of 10 steps after 5 of
warm-up), written to OUTDIR/measured.json with the step time.

usage: capture_modules.py OUTDIR [stack]
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        self.stage1 = nn.Sequential(Block(64, 64, 1), Block(64, 64, 1))
        self.stage2 = nn.Sequential(Block(64, 128, 2), Block(128, 128, 1))
        self.stage3 = nn.Sequential(Block(128, 256, 2), Block(256, 256, 1))
        self.head = nn.Linear(256, 100)

    def forward(self, x):
        x = self.stage3(self.stage2(self.stage1(self.stem(x))))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def main():
    out = sys.argv[1]
    stack = len(sys.argv) > 2 and sys.argv[2] == "stack"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    dev = "cuda:0"
    model = Net().to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(256, 3, 64, 64, device=dev).to(memory_format=torch.channels_last)
    y = torch.randint(0, 100, (256,), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    blocks = {"stem": model.stem, "stage1": model.stage1, "stage2": model.stage2,
              "stage3": model.stage3, "head": model.head}
    events = {}

    def hooks(name, m):
        def ev(key):
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            events.setdefault((name, key), []).append(e)
        m.register_forward_pre_hook(lambda *a: ev("f0"))
        m.register_forward_hook(lambda *a: ev("f1"))
        m.register_full_backward_pre_hook(lambda *a: ev("b0"))
        m.register_full_backward_hook(lambda *a: ev("b1"))

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t) * 100
    for n, m in blocks.items():
        hooks(n, m)
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    measured = {"step_ms": step_ms, "torch": torch.__version__, "forward_us": {}, "backward_us": {}}
    for n in blocks:
        f = [a.elapsed_time(b) * 1000 for a, b in zip(events[(n, "f0")], events[(n, "f1")])]
        b = [a.elapsed_time(b) * 1000 for a, b in zip(events.get((n, "b0"), []), events.get((n, "b1"), []))]
        measured["forward_us"][n] = sum(f) / len(f)
        measured["backward_us"][n] = sum(b) / len(b) if b else None
    # the hooks off while profiling
    for m in blocks.values():
        m._forward_pre_hooks.clear()
        m._forward_hooks.clear()
        m._backward_pre_hooks.clear()
        m._backward_hooks.clear()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=1, warmup=1, active=2, repeat=1 if stack else 2),
                 on_trace_ready=tensorboard_trace_handler(os.path.join(out, "run"), worker_name="cnn"),
                 record_shapes=True, with_modules=not stack, with_stack=stack) as p:
        for _ in range(5 if stack else 9):
            step()
            p.step()
    torch.cuda.synchronize()
    with open(os.path.join(out, "measured.json"), "w") as f:
        json.dump(measured, f, indent=1)
    print(json.dumps(measured), flush=True)


if __name__ == "__main__":
    main()
