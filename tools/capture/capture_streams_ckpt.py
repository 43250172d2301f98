#!/usr/bin/env python3
"""helper h65: two captures unlike testdata/, each with profiler-off ground truth.

usage: python3 capture_h65.py OUTDIR   (one GPU; PyTorch 2.11; ran on one H200, 2.11.0+cu130)
This is exactly the code that ran (sent compressed through the device tool's 2000-character command),
with this docstring added; the per-step measurements go to OUTDIR/<name>/measured.json:
  off.<variant>.sync[i]: wall ms of step index i, synced before and after it, profiler off (4 or 5 reps)
  off.<variant>.free: ms per step over the profiled step indices, free-running, synced at both ends
  profiled_wall_ms: each step's wall time in the profiled run (synced before each step)

W1 ckpt_amp_dyn: eager GPT-like LM (4 blocks, d=768, vocab 8192, batch 8) trained with
   activation checkpointing (use_reentrant=False) per block, fp16 autocast + GradScaler,
   a different sequence length every step (dynamic shapes: 384,1024,512,896,640,256),
   an inf loss at step index 3 (GradScaler skips AdamW, halves the scale).
   Profiler: with_stack=True, with_modules=True, record_shapes=True, profile_memory=True,
   experimental_config=_ExperimentalConfig(verbose=True), tensorboard_trace_handler(use_gzip).
   Planted: (a) time.sleep(0.006) in a plain Python function tokenize_batch() at each step start
   (no record_function); (b) torch.cuda.empty_cache() in release_memory() at each step end
   (cudaFree at the end, cudaMalloc again in the next step).
W2 graph_streams_infer: inference of a two-tower MLP (d=8192, fp16) with variable batch sizes
   (5,100,17,200,3,128,60,9), padded to buckets 8/32/128 replayed from hand-captured CUDA graphs
   whose capture forks to a side stream and joins (wait_stream); batch 200 runs eager on the same
   two streams. Inputs are copied from pinned memory and normalised on a 'pre' stream, which the
   main stream waits on (wait_stream). Profiler: record_shapes=True,
   experimental_config=_ExperimentalConfig(enable_cuda_sync_events=True), export_chrome_trace(.json.gz).
   Planted: (a) slow_decode(): a ~0.6 ms torch.cuda._sleep kernel on the 'pre' stream that the
   main stream waits for (GPU-side stall, other stream busy); (b) filter_results(): boolean-mask
   indexing (nonzero) + .tolist() each step, a host sync (fix: keep results on the GPU).
Each workload: per-step wall time profiler off, synced after each step, for the as-is run and
with each planted problem removed; free-running time of the profiled steps; the planted parts'
own durations (W1: tok_ms/rel_ms); GPU times of parts by CUDA events (W2); allocator numbers (W1).
"""
import json,os,sys,time,statistics as S,traceback
import torch,torch.nn as nn,torch.nn.functional as F
from torch.profiler import ProfilerActivity as PA,profile,schedule,tensorboard_trace_handler as TH
from torch.utils.checkpoint import checkpoint
O=sys.argv[1];C='cuda';sy=torch.cuda.synchronize;pc=time.perf_counter;XC=torch._C._profiler._ExperimentalConfig
def meas(step,n,var,a,b,reps):
 r={}
 for k in range(reps):
  for v,kw in var.items():
   d=r.setdefault(v,{'sync':{},'free':[]})
   for i in range(n):
    sy();t=pc();step(i,**kw);sy();d['sync'].setdefault(i,[]).append((pc()-t)*1e3)
   for i in range(a):step(i,**kw)
   sy();t=pc()
   for i in range(a,b):step(i,**kw)
   sy();d['free'].append((pc()-t)*1e3/(b-a))
   for i in range(b,n):step(i,**kw)
 for d in r.values():d['sync_median']={i:S.median(x) for i,x in d['sync'].items()};d['free_median']=S.median(d['free'])
 return r
def prof(step,n,a,h,R,**kw):
 w=[]
 with profile(activities=[PA.CPU,PA.CUDA],schedule=schedule(wait=1,warmup=1,active=a),on_trace_ready=h,record_shapes=True,**kw) as p:
  for i in range(n):sy();t=pc();step(i);p.step();w.append((pc()-t)*1e3)
 sy();R['profiled_wall_ms']=w
def save(nm,R):
 os.makedirs(f'{O}/{nm}',exist_ok=True);json.dump(R,open(f'{O}/{nm}/measured.json','w'),indent=1)
def w1():
 V,D,NH,B=8192,768,12,8;SEQ=[384,1024,512,896,640,256];R={'seq':SEQ,'overflow_idx':3}
 class Blk(nn.Module):
  def __init__(s):
   super().__init__();L=nn.Linear;s.l1=nn.LayerNorm(D);s.qkv=L(D,3*D);s.pr=L(D,D);s.l2=nn.LayerNorm(D);s.f1=L(D,4*D);s.f2=L(4*D,D)
  def forward(s,x):
   b,t,c=x.shape;q,k,v=s.qkv(s.l1(x)).view(b,t,3,NH,c//NH).permute(2,0,3,1,4)
   x=x+s.pr(F.scaled_dot_product_attention(q,k,v,is_causal=True).transpose(1,2).reshape(b,t,c))
   return x+s.f2(F.gelu(s.f1(s.l2(x))))
 class LM(nn.Module):
  def __init__(s):
   super().__init__();s.emb=nn.Embedding(V,D);s.pos=nn.Parameter(torch.randn(1024,D)*.02);s.bl=nn.ModuleList([Blk() for _ in range(4)]);s.lnf=nn.LayerNorm(D);s.head=nn.Linear(D,V)
  def forward(s,ids):
   x=s.emb(ids)+s.pos[:ids.shape[1]]
   for b in s.bl:x=checkpoint(b,x,use_reentrant=False)
   return s.head(s.lnf(x))
 m=LM().to(C);opt=torch.optim.AdamW(m.parameters(),lr=1e-4);st={};rec={'tok':[],'rel':[]}
 def tokenize_batch(i,slow):
  if slow:time.sleep(0.006)
  g=torch.Generator().manual_seed(i);return torch.randint(0,V,(B,SEQ[i%6]+1),generator=g).pin_memory().to(C,non_blocking=True)
 def release_memory(on):
  if on:torch.cuda.empty_cache()
 def step(i,slow=True,empty=True):
  if i==0 or 'sc' not in st:st['sc']=torch.amp.GradScaler('cuda',init_scale=2.**14,growth_interval=10**6)
  sc=st['sc'];t=pc();ids=tokenize_batch(i,slow);rec['tok'].append((pc()-t)*1e3)
  with torch.autocast('cuda',dtype=torch.float16):lg=m(ids[:,:-1])
  loss=F.cross_entropy(lg.float().view(-1,V),ids[:,1:].reshape(-1))
  if i==3:loss=loss*float('inf')
  sc.scale(loss).backward();sc.step(opt);sc.update();opt.zero_grad(set_to_none=True)
  t=pc();release_memory(empty);rec['rel'].append((pc()-t)*1e3)
 for i in range(6):step(i)
 R['off']=meas(step,6,{'asis':{},'no_sleep':dict(slow=False),'no_empty_cache':dict(empty=False),'neither':dict(slow=False,empty=False)},2,5,4)
 rec['tok'].clear();rec['rel'].clear();mem=[]
 for i in range(6):
  sy();torch.cuda.reset_peak_memory_stats();a0=torch.cuda.memory_allocated();step(i);sy()
  mem.append([i,a0,torch.cuda.memory_allocated(),torch.cuda.max_memory_allocated(),torch.cuda.memory_reserved()])
 R['alloc_start_end_peak_reservedend']=mem;R['tok_ms']=rec['tok'][:];R['rel_ms']=rec['rel'][:];save('ckpt_amp_dyn',R)
 prof(step,6,3,TH(f'{O}/ckpt_amp_dyn',worker_name='ckpt',use_gzip=True),R,profile_memory=True,with_stack=True,with_modules=True,experimental_config=XC(verbose=True))
 save('ckpt_amp_dyn',R)
def w2():
 D,NC,h=8192,1000,torch.float16;BK=[8,32,128];BS=[5,100,17,200,3,128,60,9];R={'batches':BS,'buckets':BK}
 torch.set_grad_enabled(False);side=torch.cuda.Stream();pre=torch.cuda.Stream()
 tw=lambda:nn.Sequential(*[x for _ in range(3) for x in (nn.Linear(D,D),nn.GELU())])
 class TT(nn.Module):
  def __init__(s):super().__init__();s.ta=tw();s.tb=tw();s.head=nn.Linear(D,NC)
  def forward(s,x):
   c=torch.cuda.current_stream();side.wait_stream(c)
   with torch.cuda.stream(side):a=s.ta(x)
   b=s.tb(x);c.wait_stream(side)
   if not torch.cuda.is_current_stream_capturing():a.record_stream(c)
   return s.head(a+b)
 m=TT().to(C,h).eval()
 e0,e1=[torch.cuda.Event(enable_timing=True) for _ in '01'];torch.cuda._sleep(1000);e0.record();torch.cuda._sleep(2000000);e1.record();sy()
 CYC=int(0.6*2000000/e0.elapsed_time(e1));R['sleep_cycles']=CYC
 raw=torch.randint(0,255,(256,D),dtype=torch.uint8).pin_memory();si={b:torch.zeros(b,D,dtype=h,device=C) for b in BK};so={};gr={}
 ws=torch.cuda.Stream();ws.wait_stream(torch.cuda.current_stream())
 with torch.cuda.stream(ws):
  for b in BK*3:m(si[b])
 torch.cuda.current_stream().wait_stream(ws);sy()
 for b in BK:
  gr[b]=torch.cuda.CUDAGraph()
  with torch.cuda.graph(gr[b]):so[b]=m(si[b])
 def slow_decode(x):
  torch.cuda._sleep(CYC);return x
 def preprocess(r,dst,slow):
  b=r.shape[0];c=torch.cuda.current_stream();pre.wait_stream(c)
  with torch.cuda.stream(pre):
   x=r.to(C,non_blocking=True)
   if slow:x=slow_decode(x)
   dst[:b].copy_((x.to(h)-127.5)/64)
   if dst.shape[0]>b:dst[b:].zero_()
  c.wait_stream(pre)
 res=[]
 def filter_results(out,sync):
  tp=out.float().softmax(-1).max(-1)
  if sync:res.append(tp.indices[tp.values>1.5/NC].tolist())
  else:res.append(torch.where(tp.values>1.5/NC,tp.indices,-1))
 def step(i,slow=True,sync=True):
  r=raw[:BS[i%8]];b=r.shape[0];bk=next((k for k in BK if k>=b),None)
  if bk:preprocess(r,si[bk],slow);gr[bk].replay();out=so[bk][:b]
  else:x=torch.empty(b,D,dtype=h,device=C);preprocess(r,x,slow);out=m(x)
  filter_results(out,sync)
  if len(res)>64:res.clear()
 for i in range(8):step(i)
 R['off']=meas(step,8,{'asis':{},'no_slow_decode':dict(slow=False),'no_sync':dict(sync=False),'neither':dict(slow=False,sync=False)},2,7,5)
 def ev(f,s,n=20):
  f();sy();a,b=[torch.cuda.Event(enable_timing=True) for _ in '01'];a.record(s)
  with torch.cuda.stream(s):
   for _ in range(n):f()
  b.record(s);sy();return a.elapsed_time(b)/n
 cs=torch.cuda.current_stream();R['gpu_ms_sleep']=ev(lambda:torch.cuda._sleep(CYC),pre);R['gpu_ms_replay']={b:ev(gr[b].replay,cs) for b in BK}
 save('graph_streams_infer',R)
 prof(step,8,5,lambda p:p.export_chrome_trace(f'{O}/graph_streams_infer/graph_streams_infer.pt.trace.json.gz'),R,experimental_config=XC(enable_cuda_sync_events=True))
 save('graph_streams_infer',R)
for f in (w1,w2):
 try:t=pc();f();print(f,pc()-t,flush=True)
 except Exception:traceback.print_exc()
 sy();torch.cuda.empty_cache()
print(torch.cuda.get_device_name(0),torch.__version__)
