#!/usr/bin/env python3
"""Two captures made by a new user (helper-54, one H100; docs/testdata.md):
lstm_ckpt, whose recomputed MLP block (torch.utils.checkpoint) is cut off
before its launches, and sdpa_item, whose .item() waits microseconds for
its own copy before a millisecond of postprocessing. What each got wrong
before, checked against what was measured with the profiler off
(testdata/oracle/*.measured.json)."""
import csv
import io
import json
import subprocess
import sys

checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args):
    p = subprocess.run(["./traceanalyze", *args], capture_output=True, text=True)
    return p.returncode, list(csv.DictReader(io.StringIO(p.stdout))), p.stderr


# sdpa_item: the .item() blocks the host 35-86 us (profiler off), then
# postprocess runs 1 ms: the sync costs what the host waited in it, the
# hole after it is postprocess's (it read "sync 23.4 ms x16, then
# postprocess" and postprocess 3.2 ms, where critical-path said 0.2 ms)
m = json.load(open("testdata/oracle/sdpa_item.measured.json"))
rc, f, _ = run("diagnose", "-q", "--findings", "--format", "csv", "testdata/sdpa_item")
sync = sum(float(r["cost_us"]) for r in f if r["kind"] == "sync")
post = sum(float(r["cost_us"]) for r in f if r["kind"] == "host_region" and r["where"] == "postprocess")
iters = len(m["lens"])
check("sdpa_item: the syncs cost %.0f us, at most 2 x the 86 us the .item() blocked at most,"
      " a time" % sync, rc == 0 and 0 < sync <= 2 * 86 * iters)
check("sdpa_item: postprocess holds %.0f us, at least 0.8 x its planted %.1f ms x %d"
      % (post, m["planted_postprocess_ms"], iters - 1),
      post >= 0.8 * 1000 * m["planted_postprocess_ms"] * (iters - 1))
rc, cp, _ = run("critical-path", "-q", "--format", "csv", "testdata/sdpa_item")
cp_sync = sum(float(r["sync_us"]) for r in cp)
check("sdpa_item: diagnose's syncs %.0f us and critical-path's %.0f us agree within 2x"
      % (sync, cp_sync), cp_sync > 0 and 0.5 <= sync / cp_sync <= 2)

# lstm_ckpt: each recomputed addmm is recorded, shapes and all, before the
# early stop cuts it off: no launch, no kernel. It is no GPU work (it read
# 6 calls a file at 120.8 % of the roof, with a TF32 warning)
rc, roof, err = run("roofline", "-q", "--group-by", "shape", "--format", "csv", "testdata/lstm_ckpt")
rc2, steps, _ = run("steps", "-q", "--format", "csv", "testdata/lstm_ckpt")
kept = sum(1 for s in steps if s["kept"] in ("1", "yes", "true"))
fc2 = [r for r in roof if r["op"] == "aten::addmm" and r["shape"].startswith("[[512], [4096, 2048], [2048, 512]")]
check("lstm_ckpt: the block's fc2 addmm counted once a kept step (%s calls, %d steps)"
      % ([r["calls"] for r in fc2], kept),
      rc == 0 and kept > 0 and len(fc2) == 1 and int(fc2[0]["calls"]) == kept)
check("lstm_ckpt: no op past its roof (%s)" % [r["peak_pct"] for r in roof if r["peak_pct"]][:8],
      all(float(r["peak_pct"]) <= 100 for r in roof if r["peak_pct"]))
check("lstm_ckpt: no TF32 warning (%s)" % err.strip()[:120], "TF32" not in err)
# ... and its frames are activation checkpointing's recomputation, not a
# checkpoint being saved (told "checkpoint less often, or asynchronously")
rc, f, _ = run("diagnose", "-q", "--findings", "--format", "csv", "testdata/lstm_ckpt")
ck = [r for r in f if "checkpoint.py" in r["where"] or "recompute" in r["where"]]
check("lstm_ckpt: %d findings in torch.utils.checkpoint's frames, told of activation"
      " checkpointing, none of saving" % len(ck),
      ck and all("activation checkpointing" in r["advice"] and "async_save" not in r["advice"]
                 for r in ck))
# its prefetch copies are pinned, on a side stream: not told to do so as
# if it did not; the frame that issues them is not said to launch nothing
copies = [r for r in f if r["kind"] == "exposed_copy" and "Pinned" in r["where"]]
check("lstm_ckpt: pinned copies' advice says the copy is as it should be",
      copies and all("as it should be" in r["advice"] for r in copies))
check("lstm_ckpt: no advice claims a frame launched nothing",
      all("launched nothing" not in r["advice"] for r in f))

# the recomputed block's forward runs inside fc2's backward op: its time
# is that op's, counted in Block_0's backward; it made a second root
# Block_0 (3 calls) that counted it again
rc, mods, err = run("modules", "--format", "csv", "testdata/lstm_ckpt")
roots = [r["module"] for r in mods if r["depth"] == "0"]
check("lstm_ckpt: modules' roots are the model and the loss, no recomputed Block_0 (%s)" % roots,
      rc == 0 and sorted(roots) == ["CrossEntropyLoss_0", "Model_0"])
p = subprocess.run(["./traceanalyze", "modules", "testdata/lstm_ckpt"], capture_output=True, text=True)
check("lstm_ckpt: modules says 3 calls were recomputed in backward ops (%s)" % p.stderr.strip()[:100],
      "3 module calls recomputed inside backward ops" in p.stderr)
# a 725 MiB peak on an 80 GB card has room to spare (helper-58: a 1.3 GB
# peak was told "activation checkpointing, a smaller batch"); on a card of
# 1 GB (its deviceProperties edited) the same peak is told how to shrink
import gzip
import os
import tempfile
rc, f, _ = run("diagnose", "-q", "--findings", "--format", "csv", "testdata/lstm_ckpt")
peak = [r for r in f if r["kind"] == "memory_peak"]
check("lstm_ckpt: the memory peak has room to spare on its 80 GB card",
      peak and "room to spare" in peak[0]["advice"] and "checkpointing" not in peak[0]["advice"])
d = tempfile.mkdtemp()
t = json.load(gzip.open("testdata/lstm_ckpt/rank-0.pt.trace.json.gz"))
for p in t["deviceProperties"]:
    p["totalGlobalMem"] = 1 << 30
with open(os.path.join(d, "rank-0.json"), "w") as fh:
    json.dump(t, fh)
rc, f, _ = run("diagnose", "-q", "--no-cache", "--findings", "--format", "csv", d)
peak = [r for r in f if r["kind"] == "memory_peak"]
check("lstm_ckpt on a 1 GB card: the peak is told how to shrink",
      peak and "activation checkpointing" in peak[0]["advice"])
# critical-path names a Python frame as diagnose does: without the
# object's address, which differs from run to run
rc, cp, _ = run("critical-path", "-q", "--top", "40", "--format", "csv", "testdata/lstm_ckpt")
check("lstm_ckpt: critical-path's items hold no object address",
      rc == 0 and cp and not any(" at 0x" in r["name"] for r in cp)
      and any("run_backward" in r["name"] for r in cp))
# a trace with no ProfilerStep# (no schedule=): steps says so, not an
# empty table alone
p = subprocess.run(["./traceanalyze", "steps", "testdata/sdpa_item"], capture_output=True, text=True)
check("sdpa_item: steps warns that the trace has no ProfilerStep# range",
      p.returncode == 0 and "no ProfilerStep#N range" in p.stderr)

bad = [n for n, ok in checks if not ok]
for n, ok in checks:
    print(("ok   " if ok else "FAIL ") + n)
print("recompute: %d passed, %d failed" % (len(checks) - len(bad), len(bad)))
sys.exit(1 if bad else 0)
