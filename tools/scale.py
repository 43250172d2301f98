#!/usr/bin/env python3
"""Repeat a trace's events COPIES times, each copy shifted past the last
and with its ids offset, into a larger gzipped trace for benchmarks.

usage: scale.py [--steps] [--world N] IN.json[.gz] OUT.json.gz COPIES [RANK]
Metadata events (ph "M") are written once. --steps: each copy's
ProfilerStep#N ranges are numbered on from the last copy's (a longer
run), not repeated. --world N: the trace's collectives are a job of N
ranks (distributedInfo's world_size and pg_config, each op's Group size
and member list as torch writes them), so that copies of one rank of a
small job make the ranks of a large one.
"""
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ranks import group_ranks  # noqa: E402

IDS = ("correlation", "External id", "Python id", "Python parent id", "Ev Idx")


def main():
    args = sys.argv[1:]
    steps = "--steps" in args
    if steps:
        args.remove("--steps")
    world = None
    if "--world" in args:
        i = args.index("--world")
        world = int(args[i + 1])
        del args[i:i + 2]
    src, dst, copies = args[0], args[1], int(args[2])
    rank = int(args[3]) if len(args) > 3 else None
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        trace = json.load(f)
    events = trace.pop("traceEvents")
    if rank is not None:
        trace["distributedInfo"] = dict(trace.get("distributedInfo", {}), rank=rank)
    if world is not None:
        info = trace.setdefault("distributedInfo", {})
        info["world_size"] = world
        for pg in info.get("pg_config", []):
            pg["pg_size"], pg["ranks"] = world, list(range(min(world, 30)))
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    t0 = min(float(e["ts"]) for e in body if "ts" in e)
    t1 = max(float(e["ts"]) + float(e.get("dur", 0)) for e in body if "ts" in e)
    span = t1 - t0 + 100.0
    step_re = re.compile(r"ProfilerStep#([0-9]+)$")
    nums = [int(m.group(1)) for m in (step_re.match(str(e.get("name", ""))) for e in body) if m]
    step_shift = max(nums) - min(nums) + 1 if steps and nums else 0
    stride = 10 ** 7
    with gzip.open(dst, "wt", compresslevel=1) as out:
        out.write(json.dumps(trace)[:-1] + ', "traceEvents": [\n')
        out.write(",\n".join(json.dumps(e) for e in meta))
        for c in range(copies):
            lines = []
            for e in body:
                e = dict(e)
                if "ts" in e:
                    e["ts"] = round(float(e["ts"]) + c * span, 3)
                m = step_shift and step_re.match(str(e.get("name", "")))
                if m:
                    e["name"] = "ProfilerStep#%d" % (int(m.group(1)) + c * step_shift)
                if isinstance(e.get("id"), int):
                    e["id"] += c * stride
                a = e.get("args")
                if a:
                    a = dict(a)
                    for k in IDS:
                        if isinstance(a.get(k), int) and a[k] >= 0:
                            a[k] += c * stride
                    if world is not None and "Process Group Ranks" in a:
                        a["Process Group Ranks"] = group_ranks(world)
                        a["Group size"] = world
                    e["args"] = a
                lines.append(json.dumps(e))
            out.write(",\n" + ",\n".join(lines))
        out.write("\n]}\n")


if __name__ == "__main__":
    main()
