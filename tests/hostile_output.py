#!/usr/bin/env python3
"""What reaches a spreadsheet or a terminal from a trace's names, and
baselines that would make a gate pass on nothing (issue 35's classes):

  - CSV: a name starting with = + - @ TAB or CR gets a leading ' (a
    spreadsheet would run it as a formula); --csv-raw writes it as it is;
    a baseline saved either way matches;
  - text: control characters in names (ESC sequences, BEL, CR, a newline
    that forges a row) are shown in caret notation;
  - a baseline value that is not a finite number under --max-increase is
    exit 3 naming the file, row and column;
  - the user's files: two traces that would be one shard, the cache's
    clear and prune touching only its own entries, 'file:x.db' as a path,
    no output (-o, --html, --trace) over any input (a trace, a shard, a
    database, --snapshot, memory's --trace, diff's BASE), and a failed
    write (ulimit -f, a trace that cannot be read again) leaves the old
    output as it was.

Prints one line per failed check and a count; exit 1 on any failure."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./traceanalyze")
TMP = tempfile.mkdtemp()
checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True,
                       env=dict(os.environ, TRACEANALYZE_CACHE_DIR=os.path.join(TMP, "cache")))
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def kernel(name, ts, corr):
    return [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": ts - 5, "dur": 3, "args": {"correlation": corr}},
            {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": 10 + corr,
             "args": {"stream": 7, "correlation": corr}}]


FORMULA = '=HYPERLINK("http://x.invalid/","click")'
ESC = "gemm\x1b[2J\x1b]8;;http://x.invalid\x07link\x1b]8;;\x07\rX\nforged"
ev = kernel(FORMULA, 100, 1) + kernel("-2+3", 200, 2) + kernel(ESC, 300, 3) + kernel("@sum", 400, 4)
d = os.path.join(TMP, "names")
os.makedirs(d)
json.dump({"traceEvents": ev}, open(os.path.join(d, "rank-0.json"), "w"))

rc, out, _ = run("kernels", "-q", "--format", "csv", d)
lines = out.splitlines()
check("csv: a formula-like name gets a leading ' (%s)" % [x for x in lines if "HYPERLINK" in x],
      any(x.split(",")[2].startswith("\"'=HYPERLINK") for x in lines if "HYPERLINK" in x))
check("csv: '-2+3' and '@sum' too", any(",'-2+3," in x for x in lines) and any(",'@sum," in x for x in lines))
rc, raw, _ = run("kernels", "-q", "--format", "csv", "--csv-raw", d)
check("csv --csv-raw: the name as it is", any(x.split(",")[2].startswith("\"=HYPERLINK") for x in
                                               raw.splitlines() if "HYPERLINK" in x))
# a baseline saved either way matches this run's rows
for name, saved in (("neutralised", out), ("raw", raw)):
    b = os.path.join(TMP, "base_%s.csv" % name)
    open(b, "w").write(saved)
    rc, _, err = run("kernels", "-q", "--format", "csv", "--baseline", b, "--fail-on-new", d)
    check("a %s baseline matches every row (exit %d: %s)" % (name, rc, err.strip()[:100]), rc == 0)

rc, text, _ = run("kernels", "-q", d)
check("text: no ESC, BEL or CR reaches the terminal", not any(c in text for c in "\x1b\x07\r"))
check("text: ESC is shown as ^[", "^[" in text)
check("text: a newline in a name forges no row", "forged" not in "".join(
      x for x in text.splitlines() if x.lstrip().startswith("forged")))

# a baseline whose value is not a finite number
for bad in ("inf", "1e999", "-inf", "abc", "nan"):
    b = os.path.join(TMP, "bad_%s.csv" % bad)
    rows = out.splitlines()
    hdr = rows[0].split(",")
    col = hdr.index("total_us")
    fixed = [rows[0]] + [",".join(r.split(",")[:col] + [bad] + r.split(",")[col + 1:])
                         if "@sum" in r else r for r in rows[1:]]
    open(b, "w").write("\n".join(fixed) + "\n")
    rc, _, err = run("kernels", "-q", "--format", "csv", "--baseline", b, "--max-increase", "total_us=10%", d)
    check("baseline value '%s' is exit 3 naming row and column (exit %d: %s)" % (bad, rc, err.strip()[:90]),
          rc == 3 and "total_us" in err and "row" in err)

# a limit that is no limit: refused as the option the user typed
for spec in ("step_us=inf", "step_us=5,min=inf", "step_us=1e999%"):
    rc, _, err = run("diff", "-q", "--steps", "--max-increase", spec, "testdata/train_healthy",
                     "testdata/train_stalled")
    check("--max-increase %s is a usage error naming it (exit %d: %s)" % (spec, rc, err.strip()[:70]),
          rc == 2 and "--max-increase" in err)

# the user's files: two traces that would be one shard are refused; the
# cache lists and prunes only what it named itself; 'file:x.db' is a path
import shutil  # noqa: E402
for sub in ("a", "b"):
    os.makedirs(os.path.join(TMP, "two", sub))
    shutil.copy("testdata/spin/rank-0.pt.trace.json.gz", os.path.join(TMP, "two", sub, "trace.json.gz"))
rc, _, err = run("ingest", os.path.join(TMP, "two/a/trace.json.gz"), os.path.join(TMP, "two/b/trace.json.gz"),
                 "-o", os.path.join(TMP, "two/out/"))
check("two traces of one name into one shard: exit 2 naming both (exit %d: %s)" % (rc, err.strip()[:80]),
      rc == 2 and "a/trace.json.gz" in err and "b/trace.json.gz" in err)
cache = os.path.join(TMP, "cache")
run("temporal", "-q", "testdata/spin")
open(os.path.join(cache, "notes.db"), "w").write("mine\n")
run("ingest", "-q", "testdata/spin", "-o", os.path.join(cache, "run.db"))
run("cache", "clear")
check("cache clear keeps files it did not make (%s)" % sorted(os.listdir(cache)),
      {"notes.db", "run.db"} <= set(os.listdir(cache)))
cwd = os.getcwd()
os.makedirs(os.path.join(TMP, "uri"))
p = subprocess.run([os.path.join(cwd, BIN), "ingest", "-q", os.path.join(cwd, "testdata/spin"), "-o", "file:x.db"],
                   cwd=os.path.join(TMP, "uri"), capture_output=True)
got = os.listdir(os.path.join(TMP, "uri"))
check("ingest -o file:x.db writes the file named so (%s)" % got,
      p.returncode == 0 and got == ["file:x.db"] and os.path.getsize(os.path.join(TMP, "uri", "file:x.db")) > 0)

# no output over any input: traces, shards, databases, snapshots, option
# inputs; each case below overwrote its input with exit 0
oi = os.path.join(TMP, "oi")
os.makedirs(oi)
snap = os.path.join(oi, "s.pickle.gz")
shutil.copy("testdata/snap_profiled/snapshot.pickle.gz", snap)
shutil.copytree("testdata/ddp_straggler", os.path.join(oi, "d"))
d0, d1 = (os.path.join(oi, "d", "rank-%d.pt.trace.json.gz" % i) for i in (0, 1))
run("ingest", "-q", d1, "-o", os.path.join(oi, "sh") + "/")
run("ingest", "-q", os.path.join(oi, "d"), "-o", os.path.join(oi, "base.db"))
shard = os.path.join(oi, "sh", "rank-1.pt.trace.tadb")
before = {p: open(p, "rb").read() for p in (snap, d0, d1, shard, os.path.join(oi, "base.db"))}
for args in (["report", "--html", snap, "--snapshot", snap, os.path.join(oi, "d")],
             ["memory", "--trace", d0, "-o", d0, snap],
             ["critical-path", "--ranks", "0", "--trace", d1, os.path.join(oi, "d")],
             ["critical-path", "--trace", os.path.join(oi, "base.db"), os.path.join(oi, "base.db")],
             ["temporal", os.path.join(oi, "sh"), "-o", shard],
             ["diff", os.path.join(oi, "base.db"), os.path.join(oi, "d"), "-o", os.path.join(oi, "base.db")]):
    rc, _, err = run("-q" if False else args[0], "-q", *args[1:])
    check("%s over an input: exit 2, the input kept (exit %d: %s)" % (" ".join(args[:3]), rc, err.strip()[:60]),
          rc == 2 and "is an input" in err)
check("every input byte for byte as before",
      all(open(p, "rb").read() == b for p, b in before.items()))

# a failed write leaves the old output as it was (written beside it,
# renamed once whole), and no temporary behind
def limited(limit_kb, *args):
    return subprocess.run(["bash", "-c", 'ulimit -f %d; exec "$@"' % limit_kb, "-", BIN, *args],
                          capture_output=True,
                          env=dict(os.environ, TRACEANALYZE_CACHE_DIR=os.path.join(TMP, "cache")))


for args, name in ((["report", "-q", "--html"], "page.html"), (["kernels", "-q", "--format", "csv", "-o"],
                                                                 "old.csv")):
    out = os.path.join(oi, name)
    open(out, "w").write("OLD\n")
    p = limited(1, *args, out, os.path.join(oi, "d"))
    left = [f for f in os.listdir(oi) if ".tmp." in f]
    check("%s under ulimit -f: exit 4, the old file kept, no temporary (exit %d, %r, %s)" % (
          name, p.returncode, open(out).read()[:10], left),
          p.returncode == 4 and open(out).read() == "OLD\n" and not left)
tr = os.path.join(oi, "tr")
os.makedirs(tr)
shutil.copy("testdata/spin/rank-0.pt.trace.json.gz", tr)
run("ingest", "-q", tr, "-o", os.path.join(oi, "tr.db"))
open(os.path.join(tr, "rank-0.pt.trace.json.gz"), "wb").write(
    open("testdata/spin/rank-0.pt.trace.json.gz", "rb").read()[:3000])
old = os.path.join(oi, "old.json")
open(old, "w").write("OLD\n")
rc, _, err = run("critical-path", "-q", "--trace", old, os.path.join(oi, "tr.db"))
check("--trace whose source cannot be read again: exit 3, the old file kept (exit %d, %r)" % (
      rc, open(old).read()[:10]), rc == 3 and open(old).read() == "OLD\n")

# one standard output cannot carry both the trace and the table
rc, out, err = run("critical-path", "-q", "--ranks", "0", "--trace", "-", "testdata/ddp_straggler")
check("--trace - without -o: exit 2, nothing mixed on stdout (exit %d)" % rc, rc == 2 and not out)
tbl = os.path.join(TMP, "tbl.txt")
rc, out, err = run("critical-path", "-q", "--ranks", "0", "--trace", "-", "-o", tbl, "testdata/ddp_straggler")
check("--trace - -o FILE: the trace on stdout, the table in FILE (exit %d)" % rc,
      rc == 0 and out.startswith("{") and open(tbl).read().startswith("Critical path"))

# a long name cut in the middle for people (critical-path's text) is cut
# between characters, never inside one (helper-47: an emoji's bytes split)
u = os.path.join(TMP, "utf8")
os.makedirs(u)
name = "ab" + "\U0001F600" * 40 + "x"
ev = []
for k in range(4):
    ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % (k + 1), "pid": 1,
               "tid": 1, "ts": 10000 * k, "dur": 10000, "args": {}})
    ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1,
               "ts": 10000 * k + 50, "dur": 8950, "args": {}})
    ev += kernel("gemm", 10000 * k + 9500, k + 1)
json.dump({"traceEvents": ev}, open(os.path.join(u, "rank-0.json"), "w"))
p = subprocess.run([BIN, "critical-path", "-q", "--no-cache", u], capture_output=True)
try:
    p.stdout.decode("utf-8")
    valid = True
except UnicodeDecodeError:
    valid = False
check("critical-path text: a long multi-byte name cut between characters (exit %d)" % p.returncode,
      p.returncode == 0 and valid and b"ab\xf0\x9f\x98\x80" in p.stdout)

failed = [n for n, ok in checks if not ok]
for n in failed:
    print("FAIL hostile_output:", n)
print("hostile_output: %d passed, %d failed" % (len(checks) - len(failed), len(failed)))
sys.exit(1 if failed else 0)
