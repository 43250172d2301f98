#!/usr/bin/env python3
"""Issue #37's table on the machine it runs on: cross-rank commands on a job
of RANKS ranks of real size against one rank alone, one fresh rank against
the floor, cached commands against a second, and the cache's size against
the gzipped trace; each with its ratio and target (make bench runs it last;
docs/performance.md keeps what it printed, dated).

usage: bench_job.py BIN [RANKS [COPIES]]   (defaults: 16 ranks, 50 copies)

The job is bench_scale.py's: COPIES copies of ddp_bucketed's rank 0 (50
copies: 200 MB of JSON, 150 DDP steps of 24 bucketed all-reduces) made a
job of RANKS ranks, in .bench/s<RANKS>/. "One rank" is `temporal
--no-cache` on rank 0 alone, the unit the issue's ratios use (a rank's
trace read and analysed); every cross-rank command reads the whole
directory with `--no-cache` (fresh: parsing included) and the machine's
cores. Medians of RUNS (environment, default 3) alternated runs. Timings
are benchmarks, not tests: nothing fails because a machine is slow, only
when a command fails.
"""
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_scale import build, run  # noqa: E402


def median_of(fns, runs):
    """Each fn run `runs` times, alternated: medians of (wall, cpu, rss)."""
    got = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            got[i].append(fn())
    return [tuple(statistics.median(x[k] for x in g) if k < 2 else max(x[k] for x in g)
                  for k in range(3)) for g in got]


def floor(path):
    return run(["sh", "-c", 'igzip -dc "$0" | json_verify -q', path])


def main():
    bin_ = os.path.abspath(sys.argv[1])
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    copies = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    runs = int(os.environ.get("RUNS", "3"))
    cores = os.cpu_count() or 1
    d = ".bench/s%d" % ranks
    build(d, ranks, copies, cores)
    one = "%s/rank-0.json.gz" % d
    two = ".bench/s%d-two" % ranks   # ranks 0 and 1 of the job
    os.makedirs(two, exist_ok=True)
    for r in (0, 1):
        link = "%s/rank-%d.json.gz" % (two, r)
        if not os.path.exists(link):
            os.symlink(os.path.abspath("%s/rank-%d.json.gz" % (d, r)), link)
    gz_mb = os.path.getsize(one) / 1e6
    json_mb = int(subprocess.check_output("igzip -dc %s | wc -c" % one, shell=True)) / 1e6

    def cmd(*args):
        # a job missing ranks (rank 0 alone, two of 16) says so and exits 1
        # or 3 (a gate on missing data does not pass); a crash is 128+
        return lambda: run([bin_] + list(args) + ["-q"], ok=(0, 1, 3))

    print("#37 on %d ranks x %.0f MB of JSON (%.1f MB gzipped) a rank, %d cores, "
          "medians of %d\n" % (ranks, json_mb, gz_mb, cores, runs))
    fl, t1, rep = median_of([lambda: floor(one), cmd("temporal", "--no-cache", one),
                             cmd("report", "--no-cache", one)], runs)
    tn, on, sn, s2 = median_of([cmd("temporal", "--no-cache", d), cmd("overlap", "--no-cache", d),
                                cmd("stragglers", "--no-cache", d),
                                cmd("stragglers", "--no-cache", two)], runs)
    # cached: one rank's own cache entry
    cache = ".bench/cache-job"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["TRACEANALYZE_CACHE_DIR"] = cache
    run([bin_, "temporal", "-q", one], ok=(0, 1, 3))
    db_mb = sum(os.path.getsize(os.path.join(cache, f)) for f in os.listdir(cache)
                if f.endswith(".db")) / 1e6
    html = ".bench/job.html"
    cached = ["diagnose", "diagnose --findings", "report --html " + html, "critical-path",
              "stragglers"]
    for c in cached:   # the first run adds the indexes a command reads
        run([bin_] + c.split() + ["-q", one], ok=(0, 1, 3))
    ct = median_of([cmd(*(c.split() + [one])) for c in cached], runs)
    del os.environ["TRACEANALYZE_CACHE_DIR"]

    rows = [
        ("`temporal --no-cache`, one rank", t1, fl, "the igzip floor", 1.25),
        ("`report --no-cache`, one rank", rep, fl, "the igzip floor", 1.4),
        ("`temporal --no-cache`, %d ranks" % ranks, tn, t1, "one rank", 1.5),
        ("`overlap --no-cache`, %d ranks" % ranks, on, t1, "one rank", 1.5),
        ("`stragglers --no-cache`, %d ranks" % ranks, sn, t1, "one rank", 2.0),
        ("`stragglers --no-cache`, 2 ranks", s2, t1, "one rank", 2.0),
    ]
    print("| what | s | CPU s | peak RSS MB | against | its s | ratio | target | met |")
    print("|---|---|---|---|---|---|---|---|---|")
    for what, m, base, name, target in rows:
        ratio = m[0] / base[0]
        print("| %s | %.2f | %.2f | %.0f | %s | %.2f | %.2fx | <= %.2fx | %s |" % (
            what, m[0], m[1], m[2], name, base[0], ratio, target,
            "yes" if ratio <= target else "no"))
    for c, m in zip(cached, ct):
        print("| `%s`, cached | %.2f | %.2f | %.0f | a second | 1.00 | %.2fx | <= 1.00x | %s |" % (
            c.replace(" " + html, " FILE"), m[0], m[1], m[2], m[0], "yes" if m[0] <= 1 else "no"))
    print("| the cache (`temporal`'s entry) | %.1f MB | | | the gzipped trace | %.1f MB | %.2fx | "
          "<= 2.00x | %s |" % (db_mb, gz_mb, db_mb / gz_mb, "yes" if db_mb <= 2 * gz_mb else "no"))
    rss = max(m[2] for m in (t1, rep, tn, on, sn, s2))
    print("| peak RSS of the fresh runs | %.0f MB | | | | 64 MB | %.2fx | <= 1.00x | %s |" % (
        rss, rss / 64, "yes" if rss <= 64 else "no"))


if __name__ == "__main__":
    main()
