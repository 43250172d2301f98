#!/usr/bin/env python3
"""Capture the small real traces in testdata/ (run on a machine with a CUDA GPU).

usage: capture.py OUTDIR [SCENARIO ...]

Each scenario writes OUTDIR/<name>/rank-0.pt.trace.json.gz (the profiler's own
export, gzipped), <name>/measured.json (what was measured with the profiler
off: step wall time, GPU time from CUDA events) and <name>/key_averages.json
(torch.profiler's key_averages(), plain and grouped by input shape, dumped in
on_trace_ready). Scenarios are small on purpose: a few hundred KB gzipped.
"""
import gzip
import json
import os
import shutil
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule

DEV = "cuda"
WAIT, WARMUP, ACTIVE = 1, 1, 3


def gzip_move(raw):
    """raw -> raw.gz (level 9), raw removed."""
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)


def dump_key_averages(prof, path):
    def mem(e, name):  # the profiler's memory columns (0 without profile_memory)
        for n in (name, name.replace("device", "cuda")):
            v = getattr(e, n, None)
            if v is not None:
                return int(v)
        return 0

    def rows(ka):
        out = []
        for e in ka:
            out.append({
                "key": e.key, "count": e.count,
                "self_cpu_time_total": e.self_cpu_time_total,
                "cpu_time_total": e.cpu_time_total,
                "self_device_time_total": getattr(e, "self_device_time_total", 0),
                "device_time_total": getattr(e, "device_time_total", 0),
                "input_shapes": str(e.input_shapes) if e.input_shapes else "",
                "self_cpu_memory_usage": mem(e, "self_cpu_memory_usage"),
                "cpu_memory_usage": mem(e, "cpu_memory_usage"),
                "self_device_memory_usage": mem(e, "self_device_memory_usage"),
                "device_memory_usage": mem(e, "device_memory_usage"),
            })
        return out
    data = {"key_averages": rows(prof.key_averages()),
            "by_input_shape": rows(prof.key_averages(group_by_input_shape=True))}
    with open(path, "w") as f:
        json.dump(data, f, indent=0)


def run_profiled(name, outdir, step_fn, steps=WAIT + WARMUP + ACTIVE, with_stack=False,
                 sched=None, shapes=True, key_averages=True):
    """OUTDIR/NAME/rank-0.pt.trace.json.gz of steps steps under sched (this
    file's schedule by default), and the profiler's key_averages.json."""
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    raw = os.path.join(d, "rank-0.pt.trace.json")

    def ready(prof):
        prof.export_chrome_trace(raw)
        if key_averages:
            dump_key_averages(prof, os.path.join(d, "key_averages.json"))

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=sched or schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=ready, record_shapes=shapes, with_stack=with_stack) as prof:
        for _ in range(steps):
            step_fn()
            prof.step()
    torch.cuda.synchronize()
    gzip_move(raw)
    return d


def write_measured(d, info):
    """d/measured.json: what was measured with the profiler off."""
    with open(os.path.join(d, "measured.json"), "w") as f:
        json.dump(info, f, indent=1)


def measure(step_fn, gpu_region=None, n=10):
    """Wall time per step, and (if given) GPU time of the part under CUDA events."""
    for _ in range(3):
        step_fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step_fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def gpu_time_us(fn, n=10, warmup=3):
    """GPU time of fn from CUDA events, launched back to back (queue full)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / n * 1e3


def slow_python():
    """A few ms of pure Python: host time with no launch and no wait."""
    t = 0
    for i in range(60000):
        t += i * i
    return t


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def make_model(d=1024, layers=2, vocab=1000):
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(vocab, d), *[Block(d) for _ in range(layers)],
                         nn.Linear(d, vocab)).to(DEV)


def training(outdir, stalled):
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    lossf = nn.CrossEntropyLoss()
    B, T, V = 16, 512, 1000  # big enough that the GPU, not Python, sets the pace
    gpu_x = torch.randint(0, V, (B, T), device=DEV)
    gpu_y = torch.randint(0, V, (B, T), device=DEV)

    def compute(x, y):
        with record_function("forward"):
            out = model(x)
            loss = lossf(out.view(-1, V), y.view(-1))
        with record_function("backward"):
            opt.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        return loss

    def step():
        if stalled:
            with record_function("data_loading"):
                time.sleep(0.015)  # a slow Python data step
                x = torch.randint(0, V, (B, T))  # pageable host memory
                y = torch.randint(0, V, (B, T))
            x, y = x.to(DEV), y.to(DEV)
            loss = compute(x, y)
            with record_function("logging"):
                loss.item()  # per-step sync
        else:
            compute(gpu_x, gpu_y)

    name = "train_stalled" if stalled else "train_healthy"
    wall = measure(step)
    gpu = gpu_time_us(lambda: compute(gpu_x, gpu_y))
    d = run_profiled(name, outdir, step, with_stack=stalled)
    info = {"scenario": name, "step_wall_us": wall, "gpu_compute_us_per_step": gpu,
            "expected_idle_share": max(0.0, 1 - gpu / wall),
            "sleep_us_per_step": 15000 if stalled else 0,
            "note": "profiler off; GPU time of forward+backward+optimizer from CUDA "
                    "events with launches back to back (GPU-bound, so this is the "
                    "GPU's busy time); expected_idle_share = 1 - gpu/wall"}
    json.dump(info, open(os.path.join(d, "measured.json"), "w"), indent=1)


def decode(outdir, graphed):
    """Batch-1 decode of a small MLP stack: short kernels, launch-bound."""
    torch.manual_seed(0)
    d, L = 512, 12
    layers = [nn.Linear(d, d).to(DEV) for _ in range(L)]
    x = torch.randn(1, d, device=DEV)

    def token():
        h = x
        for lin in layers:
            h = torch.relu(lin(h))
        return h

    steps_tokens = 8
    if graphed:
        static_in = x
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                token()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_out = token()

        def one():
            g.replay()
    else:
        def one():
            token()

    def step():
        for _ in range(steps_tokens):
            one()
        torch.cuda.synchronize()  # each step returns its tokens

    name = "decode_graph" if graphed else "decode_eager"
    wall = measure(step)
    gpu = gpu_time_us(lambda: [one() for _ in range(steps_tokens)])
    dd = run_profiled(name, outdir, step)
    info = {"scenario": name, "step_wall_us": wall, "gpu_us_per_step_back_to_back": gpu,
            "tokens_per_step": steps_tokens, "expected_idle_share": max(0.0, 1 - gpu / wall)}
    json.dump(info, open(os.path.join(dd, "measured.json"), "w"), indent=1)


def copies(outdir):
    """Host-to-device copies on a side stream, pinned then pageable, under compute."""
    n = 8 << 20
    pinned = torch.empty(n, dtype=torch.float32).pin_memory()
    pageable = torch.empty(n, dtype=torch.float32)
    dst = torch.empty(n, dtype=torch.float32, device=DEV)
    a = torch.randn(2048, 2048, device=DEV)
    side = torch.cuda.Stream()

    def step():
        with record_function("pinned_copy"):
            with torch.cuda.stream(side):
                dst.copy_(pinned, non_blocking=True)
            for _ in range(4):
                a @ a
        torch.cuda.synchronize()
        with record_function("pageable_copy"):
            with torch.cuda.stream(side):
                dst.copy_(pageable, non_blocking=True)
            for _ in range(4):
                a @ a
        torch.cuda.synchronize()

    def copy_time(src):
        return gpu_time_us(lambda: dst.copy_(src, non_blocking=True), n=5)

    wall = measure(step)
    info = {"scenario": "copies", "step_wall_us": wall,
            "pinned_copy_us": copy_time(pinned), "pageable_copy_us": copy_time(pageable),
            "bytes_per_copy": n * 4}
    d = run_profiled("copies", outdir, step)
    json.dump(info, open(os.path.join(d, "measured.json"), "w"), indent=1)


def autocast(outdir):
    """A bf16-autocast training step: the dispatcher records an op inside
    an op of the same name (layer_norm, scaled_dot_product_attention, ...),
    which the profiler's key_averages() counts once (_remove_dup_nodes)."""
    import torch.nn.functional as F
    model = make_model(d=512, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    B, T, V = 8, 256, 1000
    x = torch.randint(0, V, (B, T), device=DEV)
    y = torch.randint(0, V, (B, T), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            h = model[0](x)
            for blk in model[1:-1]:
                a = blk.ln1(h)
                q = a.view(B, T, 4, -1).transpose(1, 2)
                o = F.scaled_dot_product_attention(q, q, q, is_causal=True)
                h = h + o.transpose(1, 2).reshape(B, T, -1)
                h = h + blk.mlp(blk.ln2(h))
            out = model[-1](h)
            logp = torch.log_softmax(out.float(), -1)
            loss = F.nll_loss(logp.view(-1, V), y.view(-1))
            loss = loss + 0 * torch.cumsum(out, -1).float().mean() * 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    wall = measure(step)
    d = run_profiled("autocast", outdir, step)
    info = {"scenario": "autocast", "step_wall_us": wall,
            "note": "profiler off; bf16 autocast training step of a 2-layer "
                    "transformer (d=512): wall time per step"}
    json.dump(info, open(os.path.join(d, "measured.json"), "w"), indent=1)


def multistream(outdir):
    """Two streams joined by cudaStreamWaitEvent (wait_stream), and a slow
    Python host between launches, no blocking call inside the step: the
    GPU's holes are host time, not a sync."""
    a = torch.randn(1024, 1024, device=DEV)
    b = torch.randn(1024, 1024, device=DEV)
    side = torch.cuda.Stream()
    main = torch.cuda.current_stream()

    def burst():
        side.wait_stream(main)
        with torch.cuda.stream(side):
            for _ in range(4):
                b @ b
        main.wait_stream(side)  # cudaStreamWaitEvent: the host goes on
        for _ in range(4):
            a @ a

    def step():
        for _ in range(3):
            burst()
            with record_function("python_work"):
                slow_python()

    def gpu_part():
        for _ in range(3):
            burst()

    wall = measure(step)
    gpu = gpu_time_us(gpu_part)
    d = run_profiled("multistream", outdir, step)
    info = {"scenario": "multistream", "step_wall_us": wall,
            "gpu_us_per_step_back_to_back": gpu,
            "expected_idle_share": max(0.0, 1 - gpu / wall),
            "note": "profiler off; the step's GPU work launched back to back "
                    "(CUDA events) against its wall time: the rest is the "
                    "Python host between launches, with no blocking call"}
    json.dump(info, open(os.path.join(d, "measured.json"), "w"), indent=1)


def spin(outdir):
    """The host waits for the GPU by spinning on cudaEventQuery (a Python
    loop on Event.query()), then does Python work: each hole after the
    spin is a sync's, though no blocking call was made."""
    a = torch.randn(2048, 2048, device=DEV)  # short: every spin is a call

    def compute():
        for _ in range(2):
            a @ a

    def step():
        with record_function("compute"):
            compute()
        e = torch.cuda.Event()
        e.record()
        with record_function("wait_for_gpu"):
            while not e.query():
                pass
        with record_function("python_work"):
            slow_python()

    wall = measure(step)
    gpu = gpu_time_us(compute)
    d = run_profiled("spin", outdir, step)
    info = {"scenario": "spin", "step_wall_us": wall,
            "gpu_us_per_step_back_to_back": gpu,
            "expected_idle_share": max(0.0, 1 - gpu / wall),
            "note": "profiler off; the step's GPU work launched back to back "
                    "(CUDA events) against its wall time: the rest is the "
                    "Python work after the host spun until the GPU was done"}
    json.dump(info, open(os.path.join(d, "measured.json"), "w"), indent=1)


SCENARIOS = {
    "spin": spin,
    "multistream": multistream,
    "autocast": autocast,
    "train_healthy": lambda o: training(o, False),
    "train_stalled": lambda o: training(o, True),
    "decode_eager": lambda o: decode(o, False),
    "decode_graph": lambda o: decode(o, True),
    "copies": copies,
}

if __name__ == "__main__":
    out = sys.argv[1]
    names = sys.argv[2:] or list(SCENARIOS)
    for n in names:
        t = time.time()
        SCENARIOS[n](out)
        print(f"{n}: {time.time() - t:.1f}s", flush=True)
