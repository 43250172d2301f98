#!/usr/bin/env python3
"""A hostile gloo job for tests/linear.sh: testdata/gloo_straggler's two
ranks with N more gloo:all_reduce ranges a step on each, rank 1's 20 us
after rank 0's (each a wait for a late peer, then an exchange to name).

usage: gloo_many.py OUTDIR N"""
import copy
import gzip
import json
import os
import sys

out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
for r in (0, 1):
    t = json.load(gzip.open("testdata/gloo_straggler/rank-%d.pt.trace.json.gz" % r))
    ev = t["traceEvents"]
    g = next(e for e in ev if e.get("name") == "gloo:all_reduce" and e.get("cat") == "user_annotation")
    # both ranks' steps on rank 0's clock: the same place in each
    steps = sorted((e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    for s in steps:
        dt = s["dur"] * 0.9 / n
        for k in range(n):
            x = copy.deepcopy(g)
            x["ts"] = s["ts"] + s["dur"] * 0.05 + k * dt + (20 if r == 1 else 0)
            x["dur"] = dt * 0.5
            ev.append(x)
    json.dump(t, open(os.path.join(out, "rank-%d.json" % r), "w"))
