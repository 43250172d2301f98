#!/usr/bin/env python3
"""Captures unlike the testdata samples, each with a profiler-off measurement.

usage: cap.py OUTDIR [SCENARIO ...]
Writes OUTDIR/<scenario>/trace/... (traces) and OUTDIR/<scenario>/measured.json.
Scenarios: accum stall cpuonly cudaonly repeat tbrepeat ampskip tiny
"""
import json, os, sys, time, gzip, shutil
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule, tensorboard_trace_handler

DEV = "cuda"
D = 4096


def mlp(layers=4, d=D):
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(d, d), nn.ReLU()]
    return nn.Sequential(*mods).to(DEV)


def busy(sec):
    t = time.perf_counter()
    n = 0
    while time.perf_counter() - t < sec:
        n += 1
    return n


def timeit(fn, warm=10, n=30):
    """Mean wall time per call of fn(i), profiler off, GPU synchronized at both ends."""
    for i in range(warm):
        fn(i)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(n):
        fn(warm + i)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e3


def per_step_times(fn, n=20, start=0):
    """Wall time of each call, synchronizing after each (for per-kind step costs)."""
    out = []
    for i in range(n):
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn(start + i)
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def gpu_time_events(fn, n=20, start=0):
    """GPU-side elapsed between CUDA events recorded at the step's edges (ms)."""
    out = []
    for i in range(n):
        torch.cuda.synchronize()
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(start + i); b.record(); torch.cuda.synchronize()
        out.append(a.elapsed_time(b))
    return out


def profiled(fn, steps, sched, handler, activities=None, **kw):
    """Run fn(i) for steps steps under the profiler, prof.step() after each; host wall time per step."""
    acts = activities or [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    walls = []
    with profile(activities=acts, schedule=sched, on_trace_ready=handler, **kw) as prof:
        for i in range(steps):
            t = time.perf_counter()
            fn(i)
            prof.step()
            walls.append((time.perf_counter() - t) * 1e3)
    torch.cuda.synchronize()
    return walls


def save(out, name, meas):
    os.makedirs(os.path.join(out, name), exist_ok=True)
    meas["gpu"] = torch.cuda.get_device_name()
    meas["torch"] = torch.__version__
    with open(os.path.join(out, name, "measured.json"), "w") as f:
        json.dump(meas, f, indent=1)
    print(name, json.dumps(meas), flush=True)


# ---------------------------------------------------------------- accum
def sc_accum(out):
    torch.manual_seed(0)
    m = mlp(); opt = torch.optim.Adam(m.parameters(), lr=1e-5)
    xs = [torch.randn(256, D, device=DEV) for _ in range(4)]

    def step(i, micro=4):
        for k in range(micro):
            with record_function("microbatch"):
                loss = m(xs[k]).pow(2).mean() / micro
                loss.backward()
        with record_function("optimizer"):
            opt.step(); opt.zero_grad(set_to_none=True)

    meas = {"what": "4 micro-batches of 256 x 4096 through a 4x Linear(4096) MLP, fp32, Adam; one optimizer step (and one prof.step()) per 4 micro-batches",
            "step_ms": timeit(step)}
    meas["microbatch_only_ms"] = timeit(lambda i: [m(xs[0]).pow(2).mean().backward()])
    meas["step_gpu_ms_events"] = sorted(gpu_time_events(step))[10]
    d = os.path.join(out, "accum", "trace")
    meas["profiled_host_wall_ms"] = profiled(step, 6, schedule(wait=1, warmup=1, active=3),
                                            tensorboard_trace_handler(d, worker_name="accum", use_gzip=True))
    save(out, "accum", meas)


# ---------------------------------------------------------------- stall
def make_stall():
    torch.manual_seed(0)
    m = mlp(); opt = torch.optim.Adam(m.parameters(), lr=1e-5)
    x = torch.randn(1024, D, device=DEV)

    def step(i, sleep=True, pysync=True):
        if sleep:
            time.sleep(0.010)  # planted: no record_function around it
        with record_function("forward"):
            loss = m(x).pow(2).mean()
        with record_function("backward"):
            loss.backward()
        if pysync:
            torch.cuda.synchronize()  # planted: drains the GPU
            busy(0.005)               # then 5 ms of pure Python, GPU idle
        with record_function("optimizer"):
            opt.step(); opt.zero_grad(set_to_none=True)
    return step


def stall_meas(step):
    meas = {"what": "4x Linear(4096) MLP, batch 1024, fp32, Adam. Planted each step: time.sleep(10 ms) at the step's start outside any record_function; after backward, torch.cuda.synchronize() then 5 ms busy Python loop (no record_function), then optimizer",
            "step_ms": timeit(step),
            "step_ms_no_sleep": timeit(lambda i: step(i, sleep=False)),
            "step_ms_no_sync_python": timeit(lambda i: step(i, pysync=False)),
            "step_ms_neither": timeit(lambda i: step(i, sleep=False, pysync=False))}
    meas["gpu_work_ms_per_step_events_neither"] = sorted(gpu_time_events(lambda i: step(i, sleep=False, pysync=False)))[10]
    meas["true_cost_sleep_ms"] = meas["step_ms"] - meas["step_ms_no_sleep"]
    meas["true_cost_sync_python_ms"] = meas["step_ms"] - meas["step_ms_no_sync_python"]
    return meas


def sc_stall(out, name="stall", acts=None):
    step = make_stall()
    meas = stall_meas(step)
    if acts is not None:
        meas["activities"] = [str(a) for a in acts]
    d = os.path.join(out, name, "trace")
    meas["profiled_host_wall_ms"] = profiled(step, 6, schedule(wait=1, warmup=1, active=3),
                                            tensorboard_trace_handler(d, worker_name=name, use_gzip=True),
                                            activities=acts, record_shapes=True, with_stack=(name == "stall"))
    save(out, name, meas)


# ---------------------------------------------------------------- repeat
def make_plain():
    torch.manual_seed(0)
    m = mlp(); opt = torch.optim.Adam(m.parameters(), lr=1e-5)
    x = torch.randn(1024, D, device=DEV)

    def step(i):
        with record_function("forward"):
            loss = m(x).pow(2).mean()
        with record_function("backward"):
            loss.backward()
        with record_function("optimizer"):
            opt.step(); opt.zero_grad(set_to_none=True)
    return step


def sc_repeat(out):
    step = make_plain()
    meas = {"what": "4x Linear(4096) MLP, batch 1024, fp32, Adam, GPU-bound; schedule(wait=0, warmup=0, active=1, repeat=3), on_trace_ready exports test_trace_<step_num>.json (the torch.profiler docs' handler): three one-step traces of one process in one directory",
            "step_ms": timeit(step)}
    d = os.path.join(out, "repeat", "trace"); os.makedirs(d, exist_ok=True)

    def handler(p):
        p.export_chrome_trace(os.path.join(d, "test_trace_" + str(p.step_num) + ".json"))
    meas["profiled_host_wall_ms"] = profiled(step, 4, schedule(wait=0, warmup=0, active=1, repeat=3), handler)
    save(out, "repeat", meas)


def sc_tbrepeat(out):
    step = make_plain()
    meas = {"what": "same model as repeat; schedule(wait=1, warmup=1, active=2, repeat=3) with tensorboard_trace_handler(worker_name='w'): three spans of one worker",
            "step_ms": timeit(step)}
    d = os.path.join(out, "tbrepeat", "trace")
    meas["profiled_host_wall_ms"] = profiled(step, 13, schedule(wait=1, warmup=1, active=2, repeat=3),
                                            tensorboard_trace_handler(d, worker_name="w", use_gzip=True))
    save(out, "tbrepeat", meas)


# ---------------------------------------------------------------- ampskip
def sc_ampskip(out):
    torch.manual_seed(0)
    m = mlp(); opt = torch.optim.Adam(m.parameters(), lr=1e-5)
    scaler = torch.amp.GradScaler("cuda", growth_interval=1000000)
    x_ok = torch.randn(1024, D, device=DEV)
    x_bad = x_ok.clone(); x_bad[0, 0] = float("inf")

    def step(i, bad=None):
        b = (i % 2 == 1) if bad is None else bad
        with torch.autocast("cuda", dtype=torch.float16):
            with record_function("forward"):
                loss = m(x_bad if b else x_ok).float().pow(2).mean()
        with record_function("backward"):
            scaler.scale(loss).backward()
        with record_function("optimizer"):
            scaler.step(opt)   # skips opt.step() on inf grads (syncs on found_inf every step)
            scaler.update()
            opt.zero_grad(set_to_none=True)

    meas = {"what": "4x Linear(4096) MLP, batch 1024, fp16 autocast + GradScaler, Adam; every odd step's input holds an inf so its grads are inf and scaler.step skips Adam",
            "step_ms_alternating": timeit(step, warm=10, n=40)}
    meas["good_step_ms_each_synced"] = sorted(per_step_times(lambda i: step(i, bad=False)))[10]
    meas["skipped_step_ms_each_synced"] = sorted(per_step_times(lambda i: step(i, bad=True)))[10]
    meas["good_step_ms_back_to_back"] = timeit(lambda i: step(i, bad=False))
    meas["skipped_step_ms_back_to_back"] = timeit(lambda i: step(i, bad=True))
    scaler2 = torch.amp.GradScaler("cuda", growth_interval=1000000)
    scaler.__dict__.update(scaler2.__dict__)
    d = os.path.join(out, "ampskip", "trace")
    meas["profiled_host_wall_ms"] = profiled(step, 8, schedule(wait=1, warmup=1, active=5),
                                            tensorboard_trace_handler(d, worker_name="amp", use_gzip=True))
    meas["profiled_steps_bad"] = "profiler steps 2..6 are active (ProfilerStep#2..#6); odd ones (#3, #5) skip; #6 is cut by the tool"
    save(out, "ampskip", meas)


# ---------------------------------------------------------------- tiny
def sc_tiny(out):
    x = torch.randn(1024, device=DEV)

    def step(i):
        with record_function("tiny_ops"):
            for k in range(100):
                x.mul_(0.9999)
                x.add_(0.0001)

    meas = {"what": "200 in-place elementwise kernels on a 1024-float tensor per step (x.mul_, x.add_ x100), launch-bound",
            "step_ms": timeit(step, warm=20, n=100)}
    # GPU time alone: the same 200 kernels replayed as one CUDA graph
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        for _ in range(3):
            step(0)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for k in range(100):
            x.mul_(0.9999); x.add_(0.0001)
    meas["gpu_only_ms_graph_replay"] = timeit(lambda i: g.replay(), warm=20, n=100)
    d = os.path.join(out, "tiny", "trace")
    meas["profiled_host_wall_ms"] = profiled(step, 6, schedule(wait=1, warmup=1, active=3),
                                            tensorboard_trace_handler(d, worker_name="tiny", use_gzip=True))
    save(out, "tiny", meas)


SC = {"accum": sc_accum, "stall": sc_stall,
      "cpuonly": lambda o: sc_stall(o, "cpuonly", [ProfilerActivity.CPU]),
      "cudaonly": lambda o: sc_stall(o, "cudaonly", [ProfilerActivity.CUDA]),
      "repeat": sc_repeat, "tbrepeat": sc_tbrepeat, "ampskip": sc_ampskip, "tiny": sc_tiny}

if __name__ == "__main__":
    out = sys.argv[1]
    names = sys.argv[2:] or list(SC)
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for n in names:
        t = time.time()
        SC[n](out)
        print(f"[{n} took {time.time()-t:.1f}s]", flush=True)
