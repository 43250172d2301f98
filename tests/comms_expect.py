#!/usr/bin/env python3
"""comms on damaged copies of a real two-rank capture (testdata/ddp_straggler):
what a new user's review found wrong, kept right. Message sizes past
int64 or negative leave the bytes empty with a warning, and a gate on them
trips as on missing data; two collectives starting together keep their
own waits; a kernel whose duration is unusable counts no wait, never a
negative one; collectives the ranks disagree on are said, as stragglers
says them. (Under make sanitize the sizes also run through UBSan.)"""
import csv
import gzip
import io
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ.get("BIN", "./traceanalyze")
SRC = "testdata/ddp_straggler"
passed = failed = 0


def check(name, cond):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL comms: " + name)


def make(out, f_args=None, f_kernel=None, f_trace=None):
    """The capture with every collective's args (record_param_comms and the
    NCCL kernels that carry them too) and NCCL kernels edited."""
    os.makedirs(out, exist_ok=True)
    for r in (0, 1):
        with gzip.open("%s/rank-%d.pt.trace.json.gz" % (SRC, r), "rt") as f:
            t = json.load(f)
        for e in t["traceEvents"]:
            a = e.get("args", {})
            nccl = e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()
            if f_args and (e.get("name") == "record_param_comms" or (nccl and "Collective name" in a)):
                f_args(a)
            if f_kernel and nccl:
                f_kernel(e)
        if f_trace:
            f_trace(r, t)
        with gzip.open("%s/rank-%d.pt.trace.json.gz" % (out, r), "wt") as f:
            json.dump(t, f)
    return out


def tool(*args):
    """The tool on a cache of its own: exit code, CSV rows, stderr."""
    r = subprocess.run([BIN, *args], capture_output=True, text=True,
                       env=dict(os.environ, TRACEANALYZE_CACHE_DIR=tempfile.mkdtemp()))
    return r.returncode, list(csv.DictReader(io.StringIO(r.stdout))), r.stderr


def comms(path, *extra):
    return tool("comms", "--format", "csv", path, *extra)


def sane(name, rows):
    for r in rows:
        if r["wait_us"] == "" and r["transfer_us"] == "":   # not measured
            continue
        total, wait, transfer = float(r["total_us"]), float(r["wait_us"]), float(r["transfer_us"])
        check("%s rank %s %s: 0 <= wait %.3f <= total %.3f, transfer %.3f >= 0" % (
              name, r["rank"], r["name"], wait, total, transfer),
              0 <= wait <= total + 1e-6 and transfer >= -1e-6)
        for c in ("in_bytes", "out_bytes"):
            check("%s rank %s: %s %r is empty or >= 0" % (name, r["rank"], c, r[c]),
                  r[c] == "" or int(r[c]) >= 0)


def main():
    tmp = tempfile.mkdtemp()
    rc, base, _ = comms(SRC)
    check("the capture: comms runs (rc %d) with rows" % rc, rc == 0 and base)
    sane("the capture", base)
    check("the capture: every wait measured", base and all(r["wait_us"] != "" for r in base))

    for label, value in (("2^62", 2 ** 62), ("2^63-1", 2 ** 63 - 1), ("-5", -5), ("1e30", 1e30),
                         ("true", True), ("a string", "1024")):
        d = make(os.path.join(tmp, "n" + label.replace("^", "").replace(" ", "_")),
                 f_args=lambda a, v=value: a.__setitem__("In msg nelems", v))
        rc, rows, err = comms(d)
        check("In msg nelems %s: rc %d" % (label, rc), rc == 0)
        check("In msg nelems %s: in_bytes empty on every row (%s)" % (
              label, [r["in_bytes"] for r in rows]), rows and all(r["in_bytes"] == "" for r in rows))
        check("In msg nelems %s: out_bytes still counted" % label,
              all(r["out_bytes"] != "" for r in rows))
        check("In msg nelems %s: warned (%s)" % (label, err.strip()[:200]), "left empty" in err)
        sane("In msg nelems " + label, rows)
        rc, _, _ = comms(d, "--fail-if", "in_bytes > 100000000")
        check("In msg nelems %s: a gate on in_bytes trips on the missing value (rc %d)" % (label, rc),
              rc == 1)

    # a second collective on another stream, starting at the same
    # nanosecond as each real one, 1 us long: its wait is at most 1 us
    def twin(r, t):
        extra = []
        for e in t["traceEvents"]:
            if e.get("cat") == "kernel" and "Collective name" in e.get("args", {}):
                c = json.loads(json.dumps(e))
                c["dur"] = 1.0
                c["tid"] = 99
                c["args"]["stream"] = 99
                c["args"]["Process Group Name"] = "1"
                extra.append(c)
        t["traceEvents"] += extra
    d = make(os.path.join(tmp, "twins"), f_trace=twin)
    rc, rows, _ = comms(d)
    check("twin collectives: rc %d, rows" % rc, rc == 0 and rows)
    sane("twin collectives", rows)

    d = make(os.path.join(tmp, "durhuge"), f_kernel=lambda e: e.__setitem__("dur", 1e300))
    rc, rows, err = comms(d)
    check("unusable kernel durations: rc %d" % rc, rc == 0)
    sane("unusable kernel durations", rows)
    # kernels whose dur is not a number are members with no length: their
    # wait is not measured (they had been left out, and their peers' rows
    # read as measured)
    check("unusable kernel durations: wait and transfer empty (%s)" % [r["wait_us"] for r in rows],
          rows and all(r["wait_us"] == "" and r["transfer_us"] == "" for r in rows))
    # ... and their total not known (helper-55: 0.0, a gate passed), nor
    # the rank's communication in overlap (comm_us and exposed_us read 0.0)
    check("unusable kernel durations: total_us empty (%s)" % [r["total_us"] for r in rows],
          rows and all(r["total_us"] == "" for r in rows))
    rc, ov, err = tool("overlap", "--format", "csv", "--fail-if", "exposed_us > 1e12", d)
    check("unusable kernel durations: overlap's comm_us, exposed_us empty, compute kept,"
          " warned, a gate trips (exit %d)" % rc,
          ov and all(r["comm_us"] == "" and r["exposed_us"] == "" and r["overlap_pct"] == ""
                     and r["compute_us"] != "" for r in ov)
          and rc == 1 and "no usable length" in err and "no communication kernels" not in err)
    rc, ov, err = tool("overlap", "--by", "step", "--format", "csv", d)
    check("unusable kernel durations: overlap --by step leaves the steps' communication"
          " empty, warned (rc %d)" % rc,
          ov and all(r["communication_us"] == "" and r["overlapping_us"] == "" and
                     r["computation_us"] != "" for r in ov) and "no usable length" in err)

    # rank 1's first collective of its third step gone: the ranks disagree
    def drop(r, t):
        if r != 1:
            return
        k = sorted((e for e in t["traceEvents"]
                    if e.get("cat") == "kernel" and "nccl" in e.get("name", "").lower()),
                   key=lambda e: e["ts"])
        t["traceEvents"].remove(k[7])
    d = make(os.path.join(tmp, "dropped"), f_trace=drop)
    rc, rows, _ = comms(d)
    err = subprocess.run([BIN, "comms", d], capture_output=True, text=True,
                         env=dict(os.environ, TRACEANALYZE_CACHE_DIR=tempfile.mkdtemp())).stderr
    _, _, serr = (lambda r: (r.returncode, None, r.stderr))(subprocess.run(
        [BIN, "stragglers", d], capture_output=True, text=True,
        env=dict(os.environ, TRACEANALYZE_CACHE_DIR=tempfile.mkdtemp())))
    said = [ln for ln in serr.splitlines() if "disagree" in ln or "one rank only" in ln]
    check("a dropped collective: stragglers says so (%s)" % serr.strip()[:200], said)
    for ln in said:
        check("a dropped collective: comms says it as stragglers does: %s" % ln, ln in err)
    sane("a dropped collective", rows)

    print("comms: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
