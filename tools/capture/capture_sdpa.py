# Capture 2 (tester hA): bf16 decoder-only transformer inference with SDPA (flash backend, causal),
# variable sequence length per iteration, and a data-dependent host step each iteration:
# next_tok = logits[:, -1].argmax(-1)[0].item()  (a sync), then a ~1 ms host "postprocess"
# (record_function('postprocess'), busy Python loop) that uses the token.
# Default-schedule profile (no schedule, prof.step() each iteration), 20 iterations.
# Ground truth with the profiler OFF.  Usage: python3 capture_sdpa.py OUTDIR
import torch, time, json, sys, os
import torch.nn as nn, torch.nn.functional as Fn
from torch.nn.attention import sdpa_kernel, SDPBackend
from torch.profiler import profile, ProfilerActivity as A, record_function

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(0)
dev = 'cuda'
B, D, NH, NL, V = 4, 1024, 16, 6, 32000
HD = D // NH
LENS = [256, 512, 384, 768, 128, 1024, 640, 320, 896, 192, 512, 448, 1024, 256, 704, 160, 960, 576, 288, 832]
POST_MS = 1.0

class Layer(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1 = nn.LayerNorm(D); s.qkv = nn.Linear(D, 3 * D); s.proj = nn.Linear(D, D)
        s.ln2 = nn.LayerNorm(D); s.fc1 = nn.Linear(D, 4 * D); s.fc2 = nn.Linear(4 * D, D)
    def forward(s, x):
        b, l, _ = x.shape
        q, k, v = s.qkv(s.ln1(x)).view(b, l, 3, NH, HD).permute(2, 0, 3, 1, 4)
        a = Fn.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.proj(a.transpose(1, 2).reshape(b, l, D))
        return x + s.fc2(Fn.gelu(s.fc1(s.ln2(x))))

class LM(nn.Module):
    def __init__(s):
        super().__init__()
        s.emb = nn.Embedding(V, D); s.pos = nn.Embedding(1024, D)
        s.layers = nn.ModuleList([Layer() for _ in range(NL)]); s.lnf = nn.LayerNorm(D); s.head = nn.Linear(D, V, bias=False)
    def forward(s, tok):
        l = tok.shape[1]
        x = s.emb(tok) + s.pos(torch.arange(l, device=tok.device))
        for L in s.layers: x = L(x)
        return s.head(s.lnf(x[:, -1]))   # logits of the last position only

model = LM().to(dev, torch.bfloat16).eval()
toks = {l: torch.randint(0, V, (B, l), device=dev) for l in set(LENS)}
gen = []

def gpu_part(i):
    return model(toks[LENS[i % len(LENS)]]).argmax(-1)

def postprocess(t):
    # data-dependent host work: ~POST_MS of Python
    with record_function('postprocess'):
        t0 = time.perf_counter(); acc = t
        while time.perf_counter() - t0 < POST_MS / 1e3:
            acc = (acc * 31 + 7) % 1000003
        gen.append(acc)

timing = {}
def step(i):
    with torch.inference_mode(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        nxt = gpu_part(i)
        t = time.perf_counter()
        tok = nxt[0].item()                     # the sync: host waits for the whole forward
        timing['item'] = time.perf_counter() - t
        postprocess(tok)

sync = torch.cuda.synchronize
for r in range(2):
    for i in range(len(LENS)): step(i)
sync()

M = {'scenario': 'sdpa_infer_item', 'B': B, 'D': D, 'heads': NH, 'layers': NL, 'V': V, 'lens': LENS,
     'planted_postprocess_ms': POST_MS, 'device': torch.cuda.get_device_name(), 'torch': torch.__version__}
wall, item, busy, span = [], [], [], []
for i in range(len(LENS)):
    sync(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    t = time.perf_counter(); e0.record(); step(i); e1.record(); sync()
    wall.append((time.perf_counter() - t) * 1e3); item.append(timing['item'] * 1e3); span.append(e0.elapsed_time(e1))
for i in range(len(LENS)):
    sync(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(60_000_000)
    with torch.inference_mode(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        e0.record(); nxt = gpu_part(i); e1.record()
    sync(); busy.append(e0.elapsed_time(e1))
# free running (no extra sync besides the .item() itself)
sync(); t0 = time.perf_counter(); fr = []
for i in range(len(LENS)):
    step(i); fr.append(time.perf_counter())
sync()
M['step_wall_ms'] = [round(x, 3) for x in wall]
M['item_block_ms'] = [round(x, 3) for x in item]
M['gpu_span_ms'] = [round(x, 3) for x in span]
M['gpu_busy_queued_ms'] = [round(x, 3) for x in busy]
M['free_running_step_ms'] = [round((fr[k] - (fr[k - 1] if k else t0)) * 1e3, 3) for k in range(len(LENS))]
M['gpu_idle_ms_per_step(wall-busy)'] = [round(w - b, 3) for w, b in zip(wall, busy)]

def flops(l):
    per_layer = 2 * B * l * D * 3 * D + 2 * B * l * D * D + 2 * 2 * B * l * D * 4 * D
    attn = 4 * B * NH * l * l * HD   # QK^T + PV, full (FlopCounterMode convention, causal not halved)
    return {'linear': NL * per_layer, 'sdpa': NL * attn, 'head': 2 * B * D * V, 'total': NL * (per_layer + attn) + 2 * B * D * V}
M['flops_by_hand_per_step'] = [flops(l) for l in LENS]
json.dump(M, open(os.path.join(OUT, 'sdpa.measured.json'), 'w'), indent=1)
print('MEAS', json.dumps({'wall': M['step_wall_ms'][:6], 'busy': M['gpu_busy_queued_ms'][:6], 'item': M['item_block_ms'][:6]}))

sync()
ph = []
with profile(activities=[A.CPU, A.CUDA], record_shapes=True) as prof:
    t0 = time.perf_counter()
    for i in range(20):
        step(i); prof.step(); ph.append(round((time.perf_counter() - t0) * 1e3, 3))
sync()
prof.export_chrome_trace(os.path.join(OUT, 'sdpa_infer.pt.trace.json.gz'))
json.dump({'profiled_host_step_end_ms_since_start': ph}, open(os.path.join(OUT, 'sdpa.profiled_host.json'), 'w'), indent=1)
print('files', os.listdir(OUT))
