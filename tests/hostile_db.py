#!/usr/bin/env python3
"""Databases and shards another person or program made (#35): each is
refused with exit 3 and a message naming it, in bounded time, and nothing
is created or read that the user did not name:

  - a FIFO named rank-1.tadb in a shard directory, or named by a
    database's stored trace path (critical-path --trace): no wait;
  - a dangling x.tadb symlink: its target is not created;
  - a database whose info table is a recursive view (as PATH, as a shard),
    a planted trigger, a view of ours rewritten: refused, no hang;
  - shards whose files.rank is not their events' rank, a text rank, two
    files in one shard;
  - a directory holding shards and a trace no shard was made from;
  - critical-path --trace when the stored trace path names another file
    (run from elsewhere, or the trace changed since);
  - gates without the data: an empty or unparsable rank file, or a
    dangling rank link, trips --fail-if (fresh, cached, -j 4) unless
    --missing pass; too many open files is exit 4, never a skipped rank.

Prints one line per check and a count; exit 1 on any failure."""
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

BIN = os.path.abspath(os.environ.get("BIN", "./traceanalyze"))
TMP = tempfile.mkdtemp()
SRC = os.path.abspath("testdata/two_ranks")
checks = []


def check(name, cond):
    checks.append((name, bool(cond)))


def run(*args, cwd=None, timeout=30):
    try:
        p = subprocess.run([BIN, *args], capture_output=True, cwd=cwd, timeout=timeout,
                           env=dict(os.environ, TRACEANALYZE_CACHE_DIR=os.path.join(TMP, "cache")))
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def refused(name, rc, err, said):
    check("%s: exit 3, said '%s' (rc %d: %s)" % (name, said, rc, err.strip()[:160]),
          rc == 3 and said in err)


def shards(name):
    d = os.path.join(TMP, name)
    rc, _, err = run("ingest", "-q", os.path.join(SRC, "rank-0.pt.trace.json.gz"),
                     os.path.join(SRC, "rank-1.pt.trace.json.gz"), "-o", d + "/")
    assert rc == 0, err
    return d


good = shards("good")
rc, want, err = run("temporal", "-q", "--format", "csv", good)
check("two good shards read (rc %d)" % rc, rc == 0 and want.count("\n") >= 3)
names = sorted(os.listdir(good))

# A FIFO named like a shard.
d = shards("fifo")
os.unlink(os.path.join(d, names[1]))
os.mkfifo(os.path.join(d, names[1]))
for jobs in ("1", "4"):
    rc, _, err = run("temporal", "-q", "-j", jobs, d)
    refused("a FIFO as a shard, -j %s" % jobs, rc, err, "not a regular file")

# A dangling symlink: ATTACH would create its target.
d = shards("dangling")
target = os.path.join(TMP, "nowhere", "created.db")
os.makedirs(os.path.dirname(target))
os.symlink(target, os.path.join(d, "x.tadb"))
rc, _, err = run("temporal", "-q", d)
refused("a dangling x.tadb", rc, err, "No such file")
check("the dangling link's target is not created", not os.path.exists(target))


def planted(name, sql, shard=True):
    d = shards(name)
    db = os.path.join(d, names[1])
    c = sqlite3.connect(db)
    c.executescript(sql)
    c.commit()
    c.close()
    return d if shard else db


RECURSIVE = ("ALTER TABLE info RENAME TO info_old;"
             "CREATE VIEW info AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
             " SELECT 'schema_version' AS key, x AS value FROM c WHERE x < 0;")
for jobs in ("1", "4"):
    rc, _, err = run("temporal", "-q", "-j", jobs, planted("recursive" + jobs, RECURSIVE), timeout=60)
    refused("a recursive view named info, as a shard, -j %s" % jobs, rc, err, "info")
rc, _, err = run("temporal", "-q", planted("recursive_db", RECURSIVE, shard=False), timeout=60)
refused("a recursive view named info, as PATH", rc, err, "info")
rc, _, err = run("temporal", "-q", planted("trigger", "CREATE TRIGGER t AFTER INSERT ON names"
                                                      " BEGIN DELETE FROM events; END;"))
refused("a planted trigger", rc, err, "did not make")
rc, _, err = run("temporal", "-q", planted("view", "DROP VIEW kernels; CREATE VIEW kernels AS"
                                                   " SELECT * FROM gpu_ops;"))
refused("a view of ours rewritten", rc, err, "kernels")

# An older build's database (ingest -o of a release before a schema change):
# told its version, not "its table 'events' is not the one traceanalyze makes".
OLDER = ("ALTER TABLE events ADD COLUMN counters;"
         " UPDATE info SET value = 26 WHERE key = 'schema_version';")
rc, _, err = run("temporal", "-q", planted("older_db", OLDER, shard=False))
refused("a database of an older schema, as PATH", rc, err, "it is of schema 26")
rc, _, err = run("temporal", "-q", planted("older", OLDER))
refused("a shard of an older schema", rc, err, "not a traceanalyze shard")
# ... but its version is read only from a plain table: a generated column
# there is refused as before, its expression never run
rc, _, err = run("temporal", "-q", planted("older_gen", "ALTER TABLE info RENAME TO i0;"
                                           " CREATE TABLE info (key TEXT, v INTEGER, value AS (v + 1));"
                                           " INSERT INTO info (key, v) SELECT key, 25 FROM i0;"
                                           " DROP TABLE i0;", shard=False))
refused("an info table whose version is a generated column", rc, err, "info")

# Shards that do not hold what they say.
rc, _, err = run("temporal", "-q", planted("rank_mismatch", "UPDATE files SET rank = 7;"))
refused("files.rank not the events' rank", rc, err, "events of rank")
rc, _, err = run("temporal", "-q", planted("text_rank", "UPDATE files SET rank = 'one';"
                                                        " UPDATE events SET rank = 'one';"))
refused("a text rank", rc, err, "not an integer")
rc, _, err = run("temporal", "-q", planted("two_files", "INSERT INTO files (rank, path)"
                                                        " VALUES (9, 'x');"))
refused("two files in one shard", rc, err, "holds one trace file")
db = planted("rank_mismatch_db", "UPDATE files SET rank = 7;", shard=False)
rc, _, err = run("temporal", "-q", db)
refused("a database whose events' rank has no file", rc, err, "events of rank")

# Shards beside a trace none was made from; beside the traces they were.
d = shards("mixed")
shutil.copy(os.path.join(SRC, "rank-1.pt.trace.json.gz"), os.path.join(d, "rank-2.pt.trace.json.gz"))
for jobs in ("1", "4"):
    rc, _, err = run("temporal", "-q", "-j", jobs, d)
    refused("shards beside a trace no shard was made from, -j %s" % jobs, rc, err, "rank-2")
d = os.path.join(TMP, "beside")
shutil.copytree(SRC, d)
rc, _, err = run("ingest", "-q", os.path.join(d, "rank-0.pt.trace.json.gz"),
                 os.path.join(d, "rank-1.pt.trace.json.gz"), "-o", d + "/")
rc, out, err = run("temporal", "-q", "--format", "csv", d)
check("shards beside the traces they were made from read as the shards (rc %d: %s)"
      % (rc, err.strip()[:100]), rc == 0 and out == want)

# critical-path --trace re-reads the stored path.
w = os.path.join(TMP, "work")
os.makedirs(w)
shutil.copy(os.path.join(SRC, "rank-0.pt.trace.json.gz"), os.path.join(w, "t.json.gz"))
rc, _, err = run("ingest", "-q", "t.json.gz", "-o", "t.db", cwd=w)
out = os.path.join(TMP, "marked.json")
rc, _, err = run("critical-path", "-q", "--trace", out, "t.db", cwd=w)
check("--trace from where ingest ran (rc %d: %s)" % (rc, err.strip()[:100]), rc == 0 and os.path.exists(out))
other = os.path.join(TMP, "other")
os.makedirs(other)
shutil.copy(os.path.join(SRC, "rank-1.pt.trace.json.gz"), os.path.join(other, "t.json.gz"))
rc, _, err = run("critical-path", "-q", "--trace", out + "2", os.path.join(w, "t.db"), cwd=other)
refused("--trace from another directory, where t.json.gz is another trace", rc, err,
        "not the trace the database was made from")
check("... and writes nothing", not os.path.exists(out + "2"))
os.unlink(os.path.join(other, "t.json.gz"))
os.mkfifo(os.path.join(other, "t.json.gz"))
rc, _, err = run("critical-path", "-q", "--trace", out + "3", os.path.join(w, "t.db"), cwd=other)
refused("--trace where the stored path is a FIFO", rc, err, "not a regular file")
os.utime(os.path.join(w, "t.json.gz"), (1, 1))
rc, _, err = run("critical-path", "-q", "--trace", out + "4", "t.db", cwd=w)
refused("--trace after the trace changed", rc, err, "not the trace the database was made from")

# Review round: a generated column, a WAL database, a trace's name on a
# FIFO beside shards, too many open files on shards, --trace over another
# rank's trace.
d = shards("generated")
db = os.path.join(d, names[1])
c = sqlite3.connect(db)
c.executescript("CREATE TABLE f2 AS SELECT * FROM files; DROP TABLE files;"
                " CREATE TABLE files (file_id INTEGER PRIMARY KEY, rank_real INTEGER, rank INTEGER"
                " GENERATED ALWAYS AS (rank_real + length(hex(zeroblob(450000000))) * 0) VIRTUAL,"
                " path TEXT, bytes, mtime_ns, events, json_bytes, truncated, damage, hta_rounded,"
                " bad_times, min_ts_ns, max_ts_ns);")
c.commit()
c.close()
rc, _, err = run("temporal", "-q", d, timeout=60)
refused("a generated column planted in files", rc, err, "not the one traceanalyze makes")
d = shards("wal")
c = sqlite3.connect(os.path.join(d, names[1]))
c.execute("PRAGMA journal_mode = WAL")
c.close()
rc, _, err = run("temporal", "-q", d)
refused("a shard in WAL mode", rc, err, "WAL mode")
check("... and nothing written beside it", sorted(os.listdir(d)) == names)
d = shards("fifo_trace")
os.mkfifo(os.path.join(d, "rank-2.pt.trace.json"))
for jobs in ("1", "4"):
    rc, _, err = run("temporal", "-q", "-j", jobs, "--fail-if", "idle_pct > 99.9", d)
    refused("a trace's name on a FIFO beside shards, -j %s" % jobs, rc, err, "rank-2.pt.trace.json")
p = subprocess.run("ulimit -n 5; exec %s temporal -q %s" % (BIN, good), shell=True, capture_output=True,
                   text=True, env=dict(os.environ, TRACEANALYZE_CACHE_DIR=os.path.join(TMP, "cache")))
check("too many open files on shards: exit 4 (rc %d: %s)" % (p.returncode, p.stderr.strip()[:100]),
      p.returncode == 4)
w2 = os.path.join(TMP, "two")
shutil.copytree(SRC, w2)
rc, _, err = run("ingest", "-q", w2, "-o", os.path.join(w2, "run.db"))
victim = os.path.join(w2, "rank-1.pt.trace.json.gz")
before = open(victim, "rb").read()
rc, _, err = run("critical-path", "-q", "--ranks", "0", "--trace", victim, os.path.join(w2, "run.db"))
check("--trace over another rank's trace: exit 2, the trace kept (rc %d)" % rc,
      rc == 2 and open(victim, "rb").read() == before)
out = os.path.join(TMP, "mode.json")
rc, _, err = run("critical-path", "-q", "--ranks", "0", "--trace", out, os.path.join(w2, "run.db"))
mask = os.umask(0)
os.umask(mask)
check("--trace output mode follows the umask (%o)" % (os.stat(out).st_mode & 0o777),
      rc == 0 and os.stat(out).st_mode & 0o777 == 0o666 & ~mask)

# ingest -o DIR/ and -o DB never replace a FIFO or a link of the name.
o = os.path.join(TMP, "ing_fifo")
os.makedirs(o)
os.mkfifo(os.path.join(o, names[0]))
os.symlink(os.path.join(TMP, "nowhere", "x"), os.path.join(o, names[1]))
rc, _, err = run("ingest", "-q", SRC, "-o", o + "/")
check("ingest -o DIR/ over a FIFO and a dangling link of a shard's name: exit 2, both kept (rc %d)" % rc,
      rc == 2 and os.path.islink(os.path.join(o, names[1]))
      and not os.path.isfile(os.path.join(o, names[0])))
os.symlink(os.path.join(TMP, "nowhere", "y"), os.path.join(o, "d.db"))
rc, _, err = run("ingest", "-q", SRC, "-o", os.path.join(o, "d.db"))
check("ingest -o over a dangling link: exit 2, the link kept (rc %d)" % rc,
      rc == 2 and os.path.islink(os.path.join(o, "d.db")))

# A cache entry with a planted view is built again (entries plain here, for
# sqlite3 to plant in: a packed one is not SQLite's format).
cache = os.path.join(TMP, "cache")
shutil.rmtree(cache, ignore_errors=True)
os.environ["TRACEANALYZE_CACHE_COMPRESS"] = "0"
run("temporal", "-q", SRC)
entries = [os.path.join(cache, f) for f in os.listdir(cache) if f.endswith(".db")]
for e in entries:
    c = sqlite3.connect(e)
    c.execute("CREATE VIEW evil AS SELECT 1")
    c.commit()
    c.close()
rc, out, err = run("temporal", "--format", "csv", SRC)
left = sum(sqlite3.connect(e).execute("SELECT count(*) FROM sqlite_master WHERE name = 'evil'").fetchone()[0]
           for e in entries if os.path.exists(e))
check("a cache entry with a planted view is rebuilt, the answer unchanged (rc %d)" % rc,
      rc == 0 and "rebuilding it" in err and out == want and left == 0)
del os.environ["TRACEANALYZE_CACHE_COMPRESS"]

# Gates never pass on a rank they did not read.
g = os.path.join(TMP, "gated")
os.makedirs(g)
shutil.copy(os.path.join(SRC, "rank-0.pt.trace.json.gz"), g)
open(os.path.join(g, "rank-1.json"), "w").close()
for args in ((), (), ("--no-cache", "-j", "4")):
    rc, _, err = run("temporal", *args, "--fail-if", "idle_pct > 99", g)
    check("an empty rank-1.json under --fail-if %s: the gate trips (rc %d: %s)"
          % (" ".join(args) or "(cached the second time)", rc, err.strip()[-120:]),
          rc == 1 and "skipped" in err and "left out" in err)
rc, _, err = run("temporal", "--fail-if", "idle_pct > 99", "--missing", "pass", g)
check("... --missing pass lets it pass (rc %d)" % rc, rc == 0 and "skipped" in err)
rc, _, err = run("temporal", g)
check("... and without a gate it is a warning (rc %d)" % rc, rc == 0 and "skipped" in err)
os.unlink(os.path.join(g, "rank-1.json"))
with open(os.path.join(g, "rank-1.json"), "w") as f:
    f.write('{"traceEvents": [{"ph": "X", "name": ')
rc, _, err = run("temporal", "--fail-if", "idle_pct > 99", g)
check("an unparsable rank-1.json: the gate trips (rc %d)" % rc, rc == 1)
os.unlink(os.path.join(g, "rank-1.json"))
os.symlink(os.path.join(TMP, "gone.json"), os.path.join(g, "rank-1.json"))
rc, _, err = run("temporal", "--fail-if", "idle_pct > 99", g)
check("a dangling rank-1.json link: the gate trips (rc %d)" % rc, rc == 1 and "left out" in err)
rc, _, err = run("diff", SRC, g, "--fail-if", "diff_us > 1e12")
check("diff: a rank left out of TEST trips its gate (rc %d)" % rc, rc == 1)
m = os.path.join(TMP, "many")
os.makedirs(m)
# 60 ranks, each its own (plain copies are all distributedInfo's rank 0:
# a job that found two of them before running out of descriptors said so,
# exit 3, as it should)
with gzip.open(os.path.join(SRC, "rank-0.pt.trace.json.gz"), "rt") as f:
    trace = json.load(f)
for i in range(60):
    trace["distributedInfo"]["rank"] = i
    with gzip.open(os.path.join(m, "rank-%d.json.gz" % i), "wt") as f:
        json.dump(trace, f)
p = subprocess.run("ulimit -n 7; exec %s temporal -q --no-cache -j 4 %s" % (BIN, m), shell=True,
                   capture_output=True, text=True)
check("too many open files: exit 4, no rank skipped (rc %d: %s)" % (p.returncode, p.stderr.strip()[:100]),
      p.returncode == 4 and "skipped" not in p.stderr)

# times in reverse order (every value in range): the plugin's module
# hierarchy met a parent id as its dictionary grew, and read the array
# from before the move (AddressSanitizer: heap-buffer-overflow)
rev = os.path.join(TMP, "reversed.db")
rc, _, err = run("ingest", "-q", os.path.abspath("testdata/gpt2_train"), "-o", rev)
assert rc == 0, err
with sqlite3.connect(rev) as c:
    c.execute("UPDATE events SET ts_ns = 10000000000000000 - ts_ns WHERE ts_ns IS NOT NULL")
    c.execute("DELETE FROM info WHERE key IN ('dev_rows', 'part')")
rc, _, err = run("modules", "--tb-compat", "--no-cache", rev)
check("modules --tb-compat on reversed times: runs (rc %d: %s)" % (rc, err.strip()[:100]),
      rc == 0 and "Sanitizer" not in err and "runtime error" not in err)

# values beyond ingestion's bounds (times within [-2^61, 2^62] ns,
# durations within 2^50 ns), which the analyses' sums relied on: refused,
# naming the table, column and row (before: signed overflows, a step of
# -9223372036 s)
base = os.path.join(TMP, "bounds.db")
rc, _, err = run("ingest", "-q", os.path.abspath("testdata/gpt2_train"), "-o", base)
assert rc == 0, err
for name, sql, said in [
        ("a kernel's ts at 2^63 - 1",
         "UPDATE events SET ts_ns = 9223372036854775807 WHERE rowid = (SELECT rowid FROM"
         " events WHERE role = 1 LIMIT 1 OFFSET 10)", "events.ts_ns of row"),
        ("a step's ts at -2^63",
         "UPDATE events SET ts_ns = -9223372036854775808 WHERE rowid = (SELECT rowid FROM"
         " events WHERE role = 6 LIMIT 1 OFFSET 1)", "events.ts_ns of row"),
        ("an op's dur at 2^63 - 1",
         "UPDATE events SET dur_ns = 9223372036854775807 WHERE rowid = (SELECT rowid FROM"
         " events WHERE role = 4 LIMIT 1 OFFSET 50)", "events.dur_ns of row"),
        ("a ts and dur that end past 2^62",
         "UPDATE events SET ts_ns = 4611686018427387000, dur_ns = 100000 WHERE rowid = 100",
         "events.ts_ns + max(dur_ns, 0) of row 100"),
        ("a kept GPU row's ts",
         "UPDATE dev_rows SET ts = 9223372036854775807 WHERE rowid = 20",
         "dev_rows.COALESCE(ts, -1e300) of row 20"),
        # a cut flag neither 0 nor 1, or no time: rows of neither kind
        # (a forged cut = 2 made temporal's idle 63 % where it is 0.3 %)
        ("a kept GPU row's cut flag 2",
         "UPDATE dev_rows SET cut = 2 WHERE cut = 0", "dev_rows.COALESCE(cut, -1) of row"),
        ("a kept GPU row's cut flag NULL",
         "UPDATE dev_rows SET cut = NULL WHERE rowid = 9", "dev_rows.COALESCE(cut, -1) of row 9"),
        ("a kept GPU row's ts NULL",
         "UPDATE dev_rows SET ts = NULL WHERE rowid = 11", "dev_rows.COALESCE(ts, -1e300) of row 11"),
        ("a text time", "UPDATE events SET ts_ns = 'abc' WHERE rowid = 7", "events.ts_ns of row 7"),
        # written as max(dur, 0): a negative one made temporal's compute
        # negative and idle 186 %
        ("a kept GPU row's negative dur",
         "UPDATE dev_rows SET dur = -dur WHERE rowid = 3", "dev_rows.COALESCE(dur, -1) of row 3")]:
    db = os.path.join(TMP, "bounds-%d.db" % len(checks))
    shutil.copy(base, db)
    with sqlite3.connect(db) as c:
        c.execute(sql)
    rc, _, err = run("report", "--no-cache", db)
    refused("beyond the bounds, " + name, rc, err, said)
d = shards("bounds-shards")
with sqlite3.connect(os.path.join(d, sorted(os.listdir(d))[1])) as c:
    c.execute("UPDATE events SET dur_ns = 9223372036854775807 WHERE rowid = (SELECT rowid FROM"
              " events WHERE role = 6 LIMIT 1)")
rc, _, err = run("critical-path", "--no-cache", d)
refused("beyond the bounds, a shard's step", rc, err, "events.dur_ns of row")
# a shard's kept collectives (part_coll), read by the joins without the
# events: a collective ending before it began, or lasting 2^62 ns,
# overflowed the peers' waits (peers.c) and gave 2.3e15 us of comm in a
# 42 ms step
for name, sql, said in [
        ("ends before it begins", "UPDATE part_coll SET end_ts = ts - 6917529027641081856"
         " WHERE rowid = 1", "part_coll.end_ts - ts of row 1"),
        ("lasts 2^62 ns", "UPDATE part_coll SET end_ts = ts + 4611686018427387904"
         " WHERE rowid = 2", "part_coll.end_ts - ts of row 2")]:
    d = os.path.join(TMP, "part-%d" % len(checks))
    src = os.path.abspath("testdata/ddp_straggler")
    rc, _, err = run("ingest", "-q", *[os.path.join(src, f) for f in sorted(os.listdir(src))],
                     "-o", d + "/")
    assert rc == 0, err
    with sqlite3.connect(os.path.join(d, sorted(os.listdir(d))[1])) as c:
        assert c.execute("SELECT count(*) FROM part_coll").fetchone()[0] > 2
        c.execute(sql)
    for cmd in ("stragglers", "temporal"):
        rc, _, err = run(cmd, "--no-cache", d)
        refused("a shard's collective that " + name + ": " + cmd, rc, err, said)

# events.args, the rarer args as JSON (memory's, collectives', cuda_sync's):
# JSON that is not, or a value of another type, is an edited database:
# refused as damaged (exit 3, naming the column), not a failure of ours
# (exit 4, "malformed JSON"), and never a crash
for name, src, sql, cmds in [
        ("[memory] args not JSON", "testdata/mem_train",
         "UPDATE events SET args = '{bad' WHERE rowid = (SELECT rowid FROM events"
         " WHERE args IS NOT NULL LIMIT 1)", ("memory", "diagnose")),
        ("collective args not JSON", "testdata/ddp_straggler/rank-0.pt.trace.json.gz",
         "UPDATE events SET args = '[1,' WHERE args IS NOT NULL", ("comms", "stragglers"))]:
    db = os.path.join(TMP, "args-%d.db" % len(checks))
    rc, _, err = run("ingest", "-q", os.path.abspath(src), "-o", db)
    assert rc == 0, err
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM events WHERE args IS NOT NULL").fetchone()[0] > 0
        c.execute(sql)
        c.execute("DELETE FROM info WHERE key IN ('dev_rows', 'part')")
    for cmd in cmds:
        rc, _, err = run(cmd, db)
        refused(name + ": " + cmd, rc, err, "events.args is not JSON")
        check("%s: %s names the file once" % (name, cmd), err.count(db) == 1)
# a value of another type where a number was: read as what it is, no crash
db = os.path.join(TMP, "args-types.db")
rc, _, err = run("ingest", "-q", os.path.abspath("testdata/mem_train"), "-o", db)
assert rc == 0, err
with sqlite3.connect(db) as c:
    c.execute("UPDATE events SET args = json_set(args, '$.total_allocated', 'lots',"
              " '$.mem_addr', 1e308) WHERE args IS NOT NULL")
    c.execute("DELETE FROM info WHERE key IN ('dev_rows', 'part')")
rc, _, err = run("memory", db)
check("[memory] args of other types: runs (rc %d: %s)" % (rc, err.strip()[:100]),
      rc in (0, 3) and "Sanitizer" not in err and "runtime error" not in err)

# a CUPTI range's counters that are not an object (true, a number, a list,
# a string: an edited database): json_each gave a row without a key, and
# counters crashed on it (SIGSEGV); now such a range is no range
cupti = os.path.join(os.environ.get("SHARED", "../shared"), "testdata/hta/cupti_profiler")
if os.path.isdir(cupti):
    db = os.path.join(TMP, "counters.db")
    rc, _, err = run("ingest", "-q", os.path.abspath(cupti), "-o", db)
    assert rc == 0, err
    for value in ("true", "7", "[1, 2]", '"seven"'):
        for where in ("", " AND rowid = (SELECT min(rowid) FROM events WHERE args IS NOT NULL)"):
            edited = os.path.join(TMP, "counters-edited.db")
            shutil.copy(db, edited)
            with sqlite3.connect(edited) as c:
                c.execute("UPDATE events SET args = json_set(args, '$.counters', json(?))"
                          " WHERE args IS NOT NULL" + where, (value,))
                c.execute("DELETE FROM info WHERE key IN ('dev_rows', 'part')")
            rc, _, err = run("counters", edited)
            check("counters %s in %s range(s): exit 0 or 3, no crash (rc %d: %s)" % (
                  value, "one" if where else "every", rc, err.strip()[:100]),
                  rc in (0, 3) and "Sanitizer" not in err and "runtime error" not in err)
else:
    print("hostile_db: counters cases skipped: %s not found" % cupti)

failed = [n for n, ok in checks if not ok]
for n, ok in checks:
    print(("ok   " if ok else "FAIL ") + "hostile_db: " + n)
print(f"hostile_db: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
