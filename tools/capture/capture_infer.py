# Captures of a second new-user pass (helper-52, one H100, torch 2.11),
# written compactly to fit the device tool's command: s4 is
# testdata/infer_cpu_copy (an inference MLP, batch 8 and 64 alternating,
# each step ending in out.argmax(-1).cpu(): a blocking copy into pageable
# memory); the others (nested ranges, a CPU loop under a long kernel)
# were tried and not kept. Usage: OUT=dir python3 capture_infer.py NAME
import torch,time,json,sys,os,numpy as np
from torch.profiler import profile,schedule,ProfilerActivity as A,tensorboard_trace_handler as th,record_function as rf
O=os.environ['OUT'];M={};C=torch.cuda.synchronize
def tm(f,n=20,w=5,per=0):
 for i in range(w):f(i)
 C();ts=[];t0=time.perf_counter()
 for i in range(n):
  t=time.perf_counter();f(i)
  if per:C();ts.append(round((time.perf_counter()-t)*1e3,3))
 C();return round((time.perf_counter()-t0)*1e3/n,3),ts
def pr(f,nm):
 C()
 with profile(activities=[A.CPU,A.CUDA],schedule=schedule(wait=1,warmup=1,active=3),on_trace_ready=th(O+'/'+nm,use_gzip=True),record_shapes=True) as p:
  for i in range(5):f(i);p.step()
 C()
def dump():
 print('MEAS',json.dumps(M));json.dump(M,open(O+'/m_%s.json'%sys.argv[1],'w'))
L=torch.nn.Linear
m=torch.nn.Sequential(*[torch.nn.Sequential(L(1024,4096),torch.nn.GELU(),L(4096,1024)) for _ in range(4)]).cuda().eval()
X={b:torch.randn(b,256,1024,device='cuda') for b in (8,64)}
def s4(i):
 with torch.no_grad():return m(X[8 if i%2==0 else 64]).argmax(-1).cpu()
M['c4']=tm(s4,20,4,1);M['c4_b8']=tm(lambda i:s4(0),10,2,1);M['c4_b64']=tm(lambda i:s4(1),10,2,1)
pr(s4,'c4')
w=torch.randn(2048,2048,device='cuda')
def g1():r=rf('split');r.__enter__();return r
def s5(i):
 with rf('block'):
  with rf('inner'):
   x=w@w
   with rf('block'):
    with rf('leaf'):y=x@w
    r=g1();z=y@w
 z=z@w;r.__exit__(None,None,None);z.sum().item()
M['c5']=tm(s5)
pr(s5,'c5')
a=torch.randn(10240,10240,device='cuda')
def s6(i,cpu=1):
 with rf('gpu_launch'):c=a@a
 if cpu:
  with rf('cpu_numpy'):
   t=time.perf_counter();z=np.random.rand(256,256)
   while time.perf_counter()-t<0.02:z=np.sqrt(z+1.0)
 c[0,0].item()
M['c6']=tm(s6,20,3);M['c6_nocpu']=tm(lambda i:s6(i,0),20,3)
def cw(i):
 t=time.perf_counter();z=np.random.rand(256,256)
 while time.perf_counter()-t<0.02:z=np.sqrt(z+1.0)
M['c6_cpuonly']=tm(cw,20,3)
pr(s6,'c6')
dump()
