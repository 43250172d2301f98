#!/usr/bin/env python3
"""Captures as tensorboard_trace_handler writes them (testdata/tb_bf16,
testdata/tb_gloo): a 4-layer transformer encoder trained with AdamW in bf16
autocast ("bf16"), the same in fp32 without TF32 ("fp32"), bf16 with the
schedule repeated ("rep"), or DDP over gloo with rank 1 sleeping 20 ms in
record_function("data_loading") each step ("ddp", under torchrun
--nproc_per_node=2). Prints [mode, rank, step ms with the profiler off,
torch version]; the traces go to OUTDIR.

usage: capture_tb.py bf16|fp32|rep|ddp OUTDIR
(written compactly by a reviewer on the device machine, kept as run)
"""
import os,sys,time,json,torch,torch.nn as nn,torch.nn.functional as F
from torch.profiler import profile,schedule,tensorboard_trace_handler as th,record_function as rf
m,o=sys.argv[1],sys.argv[2];r=int(os.environ.get("RANK","0"));d="cuda:0";torch.manual_seed(0)
if m=="fp32":torch.backends.cuda.matmul.allow_tf32=False;torch.backends.cudnn.allow_tf32=False
V,D,B,S=8192,1024,8,512
if m=="ddp":
 import torch.distributed as dist;dist.init_process_group("gloo")
 M=nn.parallel.DistributedDataParallel(nn.Sequential(*[x for _ in range(6) for x in (nn.Linear(2048,2048),nn.GELU())]).to(d))
 def bt():
  while 1:yield torch.randn(256,2048),torch.randn(256,2048)
 lf=lambda a,y:F.mse_loss(a.float(),y)
else:
 M=nn.Sequential(nn.Embedding(V,D),nn.TransformerEncoder(nn.TransformerEncoderLayer(D,16,4*D,dropout=0.0,batch_first=True,norm_first=True),4,enable_nested_tensor=False),nn.Linear(D,V)).to(d)
 ds=torch.utils.data.TensorDataset(torch.randint(0,V,(512,S)),torch.randint(0,V,(512,S)))
 def bt():
  while 1:yield from torch.utils.data.DataLoader(ds,batch_size=B,pin_memory=True)
 lf=lambda a,y:F.cross_entropy(a.view(-1,V).float(),y.view(-1))
op=torch.optim.AdamW(M.parameters());it=bt()
def st():
 if m=="ddp" and r==1:
  with rf("data_loading"):time.sleep(0.02)
 x,y=next(it);x,y=x.to(d,non_blocking=True),y.to(d,non_blocking=True)
 with torch.autocast("cuda",dtype=torch.bfloat16,enabled=m!="fp32"):a=M(x)
 l=lf(a,y);op.zero_grad();l.backward();op.step()
for _ in range(5):st()
torch.cuda.synchronize();t=time.perf_counter()
for _ in range(10):st()
torch.cuda.synchronize();ms=(time.perf_counter()-t)*100
k=2 if m=="rep" else 1
with profile(schedule=schedule(wait=1,warmup=1,active=3,repeat=k),on_trace_ready=th(o),record_shapes=True) as p:
 for _ in range(5*k+1):st();p.step()
torch.cuda.synchronize();print(json.dumps([m,r,ms,torch.__version__]),flush=True)
