# Capture 1 (tester hA): embedding + 2-layer cuDNN LSTM + checkpointed MLP block + linear head,
# bf16 autocast, AdamW; a side CUDA stream prefetches the NEXT pinned batch (tokens int64,
# targets int64, features fp32 [B,T,F]) with non_blocking copies.
# Profiled with schedule(skip_first=3, wait=1, warmup=2, active=4, repeat=2): two trace files.
# Ground truth measured with the profiler OFF (same loop).  Usage: python3 capture_lstm.py OUTDIR
import torch, time, json, sys, os
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
from torch.profiler import profile, schedule, ProfilerActivity as A

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
dev = 'cuda'
B, T, V, E, H, F = 32, 128, 8000, 256, 512, 256

class Block(nn.Module):
    def __init__(s):
        super().__init__(); s.fc1 = nn.Linear(H, 4 * H); s.act = nn.GELU(); s.fc2 = nn.Linear(4 * H, H)
    def forward(s, x):
        return x + s.fc2(s.act(s.fc1(x)))

class Model(nn.Module):
    def __init__(s):
        super().__init__()
        s.emb = nn.Embedding(V, E); s.feat = nn.Linear(F, E)
        s.lstm = nn.LSTM(E, H, num_layers=2, batch_first=True)
        s.block = Block(); s.head = nn.Linear(H, V)
    def forward(s, tok, feat):
        x = s.emb(tok) + s.feat(feat)
        y, _ = s.lstm(x)
        y = checkpoint(s.block, y, use_reentrant=False)
        return s.head(y)

model = Model().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
lossf = nn.CrossEntropyLoss()

NB = 4  # pool of pinned host batches
host = [(torch.randint(0, V, (B, T)).pin_memory(), torch.randint(0, V, (B, T)).pin_memory(),
         torch.randn(B, T, F).pin_memory()) for _ in range(NB)]
COPY_BYTES = sum(t.numel() * t.element_size() for t in host[0])
side = torch.cuda.Stream()

def prefetch(i):
    tok, tgt, ft = host[i % NB]
    with torch.cuda.stream(side):
        g = (tok.to(dev, non_blocking=True), tgt.to(dev, non_blocking=True), ft.to(dev, non_blocking=True))
        ev = torch.cuda.Event(); ev.record(side)
    return g, ev

def train_step(batch, ev):
    torch.cuda.current_stream().wait_event(ev)
    tok, tgt, ft = batch
    for t in batch: t.record_stream(torch.cuda.current_stream())
    with torch.autocast('cuda', dtype=torch.bfloat16):
        logits = model(tok, ft)
        loss = lossf(logits.float().view(-1, V), tgt.view(-1))
    loss.backward()
    opt.step(); opt.zero_grad(set_to_none=True)
    return loss

state = {}
def step(i):
    nxt = prefetch(i + 1)              # prefetch next batch on the side stream
    loss = train_step(*state['cur'])   # compute current batch on the default stream
    state['cur'] = nxt
    return loss

sync = torch.cuda.synchronize
state['cur'] = prefetch(0)
for i in range(10): step(i)            # warm-up (cuDNN, allocator, AdamW state)
sync()

M = {'scenario': 'lstm_ckpt_prefetch', 'B': B, 'T': T, 'V': V, 'E': E, 'H': H, 'F': F,
     'prefetch_copy_bytes_per_step': COPY_BYTES,
     'prefetch_copies_per_step': 3,
     'device': torch.cuda.get_device_name(), 'torch': torch.__version__}

# (a) free-running: host timestamps at each step boundary, no per-step sync (as in the profiled run)
N = 30
sync(); t0 = time.perf_counter(); ts = []
for i in range(N):
    step(i); ts.append(time.perf_counter())
sync(); t1 = time.perf_counter()
M['free_running_mean_step_ms'] = (t1 - t0) * 1e3 / N
M['free_running_host_step_ms'] = [round((ts[k] - (ts[k - 1] if k else t0)) * 1e3, 3) for k in range(N)]

# (b) synced per step: wall (sync at both ends) and GPU span (events on default stream)
walls, spans = [], []
for i in range(15):
    sync(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    t = time.perf_counter(); e0.record(); step(i); e1.record(); sync()
    walls.append((time.perf_counter() - t) * 1e3); spans.append(e0.elapsed_time(e1))
M['synced_step_wall_ms'] = [round(x, 3) for x in walls]
M['synced_step_gpu_span_ms'] = [round(x, 3) for x in spans]

# (c) GPU busy per step: block the default stream with a long sleep kernel so the host queues the
# whole step before the GPU runs it: events then time the GPU work back to back (no host gaps).
busy = []
for i in range(15):
    sync(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(60_000_000)  # ~30 ms: longer than the host needs to queue the step
    e0.record(); step(i); e1.record(); sync()
    busy.append(e0.elapsed_time(e1))
M['gpu_busy_queued_step_ms'] = [round(x, 3) for x in busy]

# (d) the prefetch copy alone (3 H2D pinned copies), timed on the side stream
cp = []
for i in range(10):
    sync(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    e0.record(side); g, ev = prefetch(i); e1.record(side); sync(); cp.append(e0.elapsed_time(e1))
M['prefetch_copy_ms'] = [round(x, 4) for x in cp]

# FLOPs by hand per step (matmul-like ops only; fwd=1x, bwd=2x, checkpoint recomputes Block fwd once)
BT = B * T
f_feat = 2 * BT * F * E
f_lstm_l = lambda inp: 2 * BT * inp * 4 * H + 2 * BT * H * 4 * H   # input + recurrent GEMMs per layer
f_lstm = f_lstm_l(E) + f_lstm_l(H)
f_block = 2 * BT * H * 4 * H * 2
f_head = 2 * BT * H * V
fwd = f_feat + f_lstm + f_block + f_head
M['flops_by_hand'] = {'feat_linear_fwd': f_feat, 'lstm_fwd': f_lstm, 'block_fwd': f_block, 'head_fwd': f_head,
                      'fwd_total': fwd, 'train_step_total_fwd+2xbwd+block_recompute': 3 * fwd + f_block,
                      'note': 'bwd of feat linear includes grad wrt weight only (input is data): 2*f_feat not counted exactly'}

json.dump(M, open(os.path.join(OUT, 'lstm.measured.json'), 'w'), indent=1)
print('MEAS', json.dumps({k: v for k, v in M.items() if not isinstance(v, list)}))

# profiled run: two cycles -> two trace files
cyc = [0]
prof_host = []
def ready(p):
    cyc[0] += 1
    p.export_chrome_trace(os.path.join(OUT, 'rank-0.cycle%d.pt.trace.json.gz' % cyc[0]))
sync()
with profile(activities=[A.CPU, A.CUDA],
             schedule=schedule(skip_first=3, wait=1, warmup=2, active=4, repeat=2),
             record_shapes=True, with_stack=True, profile_memory=True, with_flops=True,
             on_trace_ready=ready) as prof:
    t0 = time.perf_counter()
    for i in range(18):
        step(i); prof.step(); prof_host.append(round((time.perf_counter() - t0) * 1e3, 3))
sync()
json.dump({'profiled_host_step_end_ms_since_start': prof_host,
           'note': 'perf_counter after each prof.step(); step k of the loop is ProfilerStep#k'},
          open(os.path.join(OUT, 'lstm.profiled_host.json'), 'w'), indent=1)
print('files', os.listdir(OUT))
