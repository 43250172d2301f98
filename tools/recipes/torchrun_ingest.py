#!/usr/bin/env python3
"""README's torchrun recipe, runnable: each rank profiles a few DDP steps,
writes its trace, parses it into a shard right there (the job's own node
does the parsing, while its GPU is done anyway), and after a barrier rank
0 asks for the straggler report over all shards.

usage: NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \\
       NVSHMEM_DISABLE_NVLS=1 torchrun --nproc_per_node=2 \\
       torchrun_ingest.py OUTDIR [TRACEANALYZE]

OUTDIR/traces/rank-R.json.gz, OUTDIR/shards/rank-R.tadb, and on rank 0's
stdout the stragglers table (rank 1 sleeps 20 ms a step: it is the one).
"""
import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.profiler import ProfilerActivity, profile, record_function, schedule

out = sys.argv[1]
ta = sys.argv[2] if len(sys.argv) > 2 else "traceanalyze"
rank = int(os.environ["RANK"])
dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
model = DDP(nn.Sequential(nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 2048)).cuda())
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(256, 2048, device="cuda")
os.makedirs(out + "/traces", exist_ok=True)
trace = "%s/traces/rank-%d.json.gz" % (out, rank)
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
             schedule=schedule(wait=1, warmup=1, active=3),
             on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
    for _ in range(5):
        with record_function("data_loading"):
            if rank == 1:
                time.sleep(0.02)
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
        prof.step()
# the recipe: this rank's trace into a shard, on this node
subprocess.run([ta, "ingest", "-q", trace, "-o", out + "/shards/"], check=True)
dist.barrier()
if rank == 0:
    subprocess.run([ta, "stragglers", out + "/shards"], check=True)
dist.destroy_process_group()
