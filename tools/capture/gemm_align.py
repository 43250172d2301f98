#!/usr/bin/env python3
"""Measure what a misaligned GEMM costs (run on a machine with a CUDA GPU).

usage: gemm_align.py OUT.json

For a few shapes with one dimension not a multiple of 8, time the product
as given and padded to the next multiple of 8 (CUDA events, launches back
to back, profiler off), and record the kernel cuBLAS picked for each from a
short profile. diagnose costs a misaligned_gemm finding as an estimated
saving: the smallest share of the kernel's time that padding saved here
(see the man page, DIFFERENCES FROM HTA / diagnose).
"""
import json
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from capture import gpu_time_us  # the same CUDA-event timing as the captures


def kernel_of(fn):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type.name == "CUDA"]
    return max(names, key=len) if names else ""


def pad8(x):
    return (x + 7) // 8 * 8


rows = []
for dtype in (torch.bfloat16, torch.float16, torch.float32):
    torch.backends.cuda.matmul.allow_tf32 = dtype == torch.float32
    for (m, k, n) in ((4096, 768, 50257), (8192, 1023, 4096), (4096, 4095, 4095),
                      (2048, 1001, 1001), (16384, 777, 3072), (1024, 4097, 1024)):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(k, n, device="cuda", dtype=dtype)
        ap = torch.randn(m, pad8(k), device="cuda", dtype=dtype)
        bp = torch.randn(pad8(k), pad8(n), device="cuda", dtype=dtype)
        t_mis = gpu_time_us(lambda: a @ b, n=20, warmup=5)
        t_pad = gpu_time_us(lambda: ap @ bp, n=20, warmup=5)
        rows.append({"dtype": str(dtype), "m": m, "k": k, "n": n,
                     "misaligned_us": t_mis, "padded_us": t_pad,
                     "saving_share": 1 - t_pad / t_mis,
                     "misaligned_kernel": kernel_of(lambda: a @ b),
                     "padded_kernel": kernel_of(lambda: ap @ bp)})
        print(rows[-1], flush=True)
json.dump({"note": "profiler off; CUDA events over 20 back-to-back products "
                   "after 5 warm-ups; padded = every odd dimension rounded up "
                   "to a multiple of 8 (more work, aligned kernel)",
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "rows": rows}, open(sys.argv[1], "w"), indent=1)
