#!/usr/bin/env python3
"""Many ranks on many cores: ingestion + temporal, the single database
against shards, for -j 1, 2, 4, ... (make bench runs the 2-rank version;
the 16-rank curve in the README was measured with this on a 16-core
machine).

usage: bench_ranks.py BIN RANKS COPIES JOBS...

Builds RANKS traces of COPIES copies of testdata/train_stalled each (65:
just over 200 MB of JSON a rank) in .bench/r<RANKS>/ if missing, then
times, for each J in JOBS:
  single  traceanalyze temporal --no-cache -j J DIR   (one writer)
  shards  traceanalyze ingest -j J DIR -o SHARDS/ && traceanalyze temporal SHARDS
and one rank alone the shards way, the floor the many-rank runs are held
to. Prints a Markdown table: wall seconds, CPU seconds, the largest peak
RSS of one process, and the speed-up over -j 1. Then, with the largest J,
the same through the cache (a plain "temporal DIR": an entry per file),
after touching one rank file, and stragglers (one database, cached)
against stragglers into one database (--no-cache).
"""
import os
import resource
import shutil
import subprocess
import sys
import time

SRC = "testdata/train_stalled/rank-0.pt.trace.json.gz"


def run(args):
    """Wall s, CPU s (user + sys of it and its children), peak RSS MB."""
    t0 = time.time()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - t0
    if status != 0:
        sys.exit("bench_ranks: %s failed (%d)" % (" ".join(args), status))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    bin_, ranks, copies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    jobs = [int(j) for j in sys.argv[4:]]
    d = ".bench/r%d" % ranks
    os.makedirs(d, exist_ok=True)
    gen = [subprocess.Popen([sys.executable, "tools/scale.py", SRC, "%s/rank-%d.json.gz" % (d, r),
                             str(copies), str(r)])
           for r in range(ranks) if not os.path.exists("%s/rank-%d.json.gz" % (d, r))]
    for g in gen:
        g.wait()
    env_cache = ".bench/cache-ranks"
    os.environ["TRACEANALYZE_CACHE_DIR"] = env_cache
    one = ".bench/one-%d" % ranks
    shutil.rmtree(one, ignore_errors=True)
    w1, c1, m1 = run([bin_, "ingest", "-q", "-j", "1", "%s/rank-0.json.gz" % d, "-o", one + "/"])
    w2, c2, m2 = run([bin_, "temporal", "-q", one])
    alone = w1 + w2
    print("one rank alone, shards: %.2f s wall, %.2f s CPU, %.0f MB\n" % (alone, c1 + c2, max(m1, m2)))
    print("| -j | single DB s | CPU s | peak MB | speed-up | shards s | CPU s | peak MB | speed-up | / one rank |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = {}
    for j in jobs:
        shutil.rmtree(env_cache, ignore_errors=True)
        ws, cs, ms = run([bin_, "temporal", "-q", "--no-cache", "-j", str(j), d])
        sh = ".bench/shards-%d" % ranks
        shutil.rmtree(sh, ignore_errors=True)
        wi, ci, mi = run([bin_, "ingest", "-q", "-j", str(j), d, "-o", sh + "/"])
        wt, ct, mt = run([bin_, "temporal", "-q", sh])
        wh = wi + wt
        base.setdefault("s", ws)
        base.setdefault("h", wh)
        print("| %d | %.2f | %.1f | %.0f | %.2fx | %.2f | %.1f | %.0f | %.2fx | %.2f |" % (
            j, ws, cs, ms, base["s"] / ws, wh, ci + ct, max(mi, mt), base["h"] / wh, wh / alone))
        sys.stdout.flush()
    j = str(jobs[-1])
    shutil.rmtree(env_cache, ignore_errors=True)
    print("\nthrough the cache, -j %s:\n" % j)
    print("| run | s |\n|---|---|")
    for name, args in (("temporal DIR, fresh", ["temporal"]),
                       ("temporal DIR, again", ["temporal"]),
                       ("touch rank 3, temporal DIR", None),
                       ("stragglers DIR (one database, into the cache)", ["stragglers"]),
                       ("stragglers --no-cache DIR (one database)", ["stragglers", "--no-cache"])):
        if args is None:
            os.utime("%s/rank-3.json.gz" % d)
            time.sleep(0.01)
            args = ["temporal"]
        w, _, _ = run([bin_] + args + ["-q", "-j", j, d])
        print("| %s | %.2f |" % (name, w))


if __name__ == "__main__":
    main()
