#!/usr/bin/env python3
"""Ingestion against both floors on given traces (#41), the runs alternated.

usage: bench_floor.py BIN RUNS FILE...

For each FILE, RUNS times in turn: the new floor `igzip -dc FILE |
json_verify -q`, the old floor `gzip -dc FILE | json_verify -q`,
`traceanalyze temporal --no-cache` (all cores), the same with `-j 1`, and
`report --no-cache`; prints one Markdown row per command with the medians
of wall and CPU seconds (user + system, the pipeline's children included),
the ratios to both floors and the peak RSS. make bench's table, for traces
that are not make bench's (a real capture) and machines without
/usr/bin/time or bc.
"""
import os
import statistics
import subprocess
import sys
import time


def run(args):
    t0 = time.time()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("bench_floor: %s failed (%d)" % (" ".join(args), status))
    return time.time() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def main():
    bin_, runs, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    print("| trace | JSON MB | command | s | CPU s | / igzip floor | CPU / floor CPU | / gzip floor | peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for f in files:
        mb = int(subprocess.check_output("gzip -dc '%s' | wc -c" % f, shell=True)) / 1e6
        cmds = {
            "igzip -dc \\| json_verify -q": ["sh", "-c", 'igzip -dc "$0" | json_verify -q', f],
            "gzip -dc \\| json_verify -q": ["sh", "-c", 'gzip -dc "$0" | json_verify -q', f],
            "temporal --no-cache": [bin_, "temporal", "-q", "--no-cache", f],
            "temporal --no-cache -j 1": [bin_, "temporal", "-q", "--no-cache", "-j", "1", f],
            "report --no-cache": [bin_, "report", "-q", "--no-cache", f],
        }
        got = {k: [] for k in cmds}
        for _ in range(runs):
            for k, args in cmds.items():
                got[k].append(run(args))
        med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v),
                   max(r[2] for r in v)) for k, v in got.items()}
        fl, flc, _ = med["igzip -dc \\| json_verify -q"]
        gfl = med["gzip -dc \\| json_verify -q"][0]
        for k, (w, c, m) in med.items():
            print("| %s | %.0f | `%s` | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f |" % (
                os.path.basename(os.path.dirname(f)) or f, mb, k, w, c, w / fl, c / flc, w / gfl, m))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
