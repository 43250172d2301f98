#!/usr/bin/env python3
"""Many ranks of real size the job-array way, and what the join costs
(#37's scale evidence; docs/many-ranks.md keeps what it measured).

usage: bench_scale.py BIN RANKS COPIES CORES

Builds RANKS ranks in .bench/s<RANKS>/: COPIES copies of ddp_bucketed's
rank 0 (one DDP step with 24 bucketed all-reduces; 50 copies are 200 MB of
JSON and 150 steps), as a job of RANKS ranks (scale.py --steps --world),
rank r differing only in distributedInfo.rank. Then:

  array  the Slurm job-array recipe of docs/many-ranks.md on one node:
         task i runs `traceanalyze ingest -q -j 1 rank-$SLURM_ARRAY_TASK_ID.json.gz
         -o SHARDS/` with SLURM_ARRAY_TASK_ID=i, CORES tasks at once (as
         `sbatch --array=0-(RANKS-1)%CORES --cpus-per-task=1` runs them; Slurm
         itself is not started here, so its own scheduling cost is not in it)
  join   each cross-rank command on the shards, twice (the first run
         adds diagnose's index to each shard; past 16 ranks once), -j CORES
  -j     `stragglers --no-cache -j CORES DIR`: the same in one command
and checks that stragglers' CSV is the same both ways. Prints Markdown
tables and, last, one line of JSON with the numbers the projection in
docs/many-ranks.md uses.
"""
import concurrent.futures as cf
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

SRC = "testdata/ddp_bucketed/rank-0.pt.trace.json.gz"
JOIN = ("stragglers", "comms", "critical-path", "diagnose", "report")


def run(args, env=None, out=subprocess.DEVNULL, ok=(0,)):
    """Wall s, CPU s (user + sys of it and its children), peak RSS MB; an
    exit code not in ok stops the bench."""
    t0 = time.time()
    p = subprocess.Popen(args, stdout=out, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.time() - t0
    if os.waitstatus_to_exitcode(status) not in ok:
        sys.exit("bench_scale: %s failed (%d)" % (" ".join(args), status))
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def build(d, ranks, copies, cores):
    os.makedirs(d, exist_ok=True)
    first = "%s/rank-0.json.gz" % d
    if not os.path.exists(first):
        subprocess.check_call([sys.executable, "tools/scale.py", "--steps", "--world", str(ranks),
                               SRC, first, str(copies), "0"])
    gz = "igzip -1 -c" if shutil.which("igzip") else "gzip -1"

    def one(r):
        f = "%s/rank-%d.json.gz" % (d, r)
        if not os.path.exists(f):
            # only the header (line 1) names the rank
            subprocess.check_call("gzip -dc %s | sed '1s/\"rank\": 0,/\"rank\": %d,/' | %s > %s.tmp"
                                  " && mv %s.tmp %s" % (first, r, gz, f, f, f), shell=True)
    with cf.ThreadPoolExecutor(cores) as pool:
        list(pool.map(one, range(1, ranks)))


def main():
    bin_, ranks, copies, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    bin_ = os.path.abspath(bin_)
    d = ".bench/s%d" % ranks
    build(d, ranks, copies, cores)
    mb = sum(os.path.getsize("%s/rank-%d.json.gz" % (d, r)) for r in range(ranks)) / 1e6
    os.environ["TRACEANALYZE_CACHE_DIR"] = ".bench/cache-scale"
    shards = ".bench/shards-s%d" % ranks
    shutil.rmtree(shards, ignore_errors=True)
    os.makedirs(shards)
    recipe = '"$BIN" ingest -q -j 1 %s/rank-$SLURM_ARRAY_TASK_ID.json.gz -o %s/' % (d, shards)

    def task(i):
        env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(i), BIN=bin_)
        return run(["sh", "-c", recipe], env=env)
    t0 = time.time()
    with cf.ThreadPoolExecutor(cores) as pool:
        tasks = list(pool.map(task, range(ranks)))
    array = time.time() - t0
    walls = [t[0] for t in tasks]
    print("%d ranks, %.0f MB gzipped (%d copies of %s each), %d cores\n" % (ranks, mb, copies, SRC, cores))
    print("| array (%d tasks, %d at once) | s |\n|---|---|" % (ranks, cores))
    print("| all tasks | %.2f |" % array)
    print("| one task: median / max | %.2f / %.2f |" % (statistics.median(walls), max(walls)))
    print("| one task: CPU median, peak RSS MB | %.2f, %.0f |\n" % (
        statistics.median(t[1] for t in tasks), max(t[2] for t in tasks)))
    print("| join on the shards, -j %d | first s | again s | CPU s | peak RSS MB |" % cores)
    print("|---|---|---|---|---|")
    join = {}
    for cmd in JOIN:
        args = [bin_, cmd, "-q", "-j", str(cores), "--format", "json", shards]
        w1, c1, m1 = run(args)
        # past 16 ranks once (the device's time is short): "again" is the first
        w2, c2, m2 = run(args) if ranks <= 16 else (w1, c1, m1)
        join[cmd] = w2
        print("| %s | %.2f | %.2f | %.2f | %.0f |" % (cmd, w1, w2, c2, max(m1, m2)))
        sys.stdout.flush()
    with open(".bench/scale-shards.csv", "w") as f:
        run([bin_, "stragglers", "-q", "-j", str(cores), "--format", "csv", shards], out=f)
    with open(".bench/scale-direct.csv", "w") as f:
        w, c, m = run([bin_, "stragglers", "-q", "--no-cache", "-j", str(cores), "--format", "csv", d], out=f)
    same = open(".bench/scale-shards.csv").read() == open(".bench/scale-direct.csv").read()
    print("\n`stragglers --no-cache -j %d DIR`: %.2f s, CPU %.2f s, peak RSS %.0f MB; "
          "the same CSV as on the shards: %s\n" % (cores, w, c, m, "yes" if same else "NO"))
    print(json.dumps({"ranks": ranks, "cores": cores, "mb_gz": round(mb), "array_s": round(array, 2),
                      "task_median_s": round(statistics.median(walls), 2),
                      "join_s": {k: round(v, 2) for k, v in join.items()},
                      "direct_stragglers_s": round(w, 2), "same": same}))
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
