#!/usr/bin/env python3
"""Malformed-input corpus: made from a real trace in testdata/, each case
with its expected exit code and the start of its expected message.

usage: corpus.py [--keep DIR]   (run from the repository root; make check)
Every case runs `./traceanalyze temporal --format csv PATH` (or the args it
names) and must exit with the given code, print stderr matching the regular
expression, never die of a signal, and finish within 60 s.
"""
import gzip
import os
import signal
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

BIN = "./traceanalyze"
REAL = "testdata/decode_graph/rank-0.pt.trace.json.gz"

raw = gzip.open(REAL).read()
gz = open(REAL, "rb").read()
EV = '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %s, "dur": %s, "args": {"stream": 7, "correlation": %d}}'


def trace(events, extra=', "distributedInfo": {"rank": 0}'):
    return ('{"schemaVersion": 1%s, "traceEvents": [%s]}' % (extra, ", ".join(events))).encode()


def kernels(n=3):
    return [EV % (100 * i, 10, i) for i in range(n)]


W = r"^traceanalyze: warning: '[^']*{}': "
cases = []  # (name, files {name: bytes} or None for a single file, args, rc, stderr regex)


def case(name, data, rc, err, args=None, fname=None):
    cases.append((name, {fname or name + ".json": data}, args, rc, err))


# truncated JSON at many points: analysed up to the damage, with a warning
for frac in (0.02, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 0.9, 0.97, 0.999):
    cut = int(len(raw) * frac)
    case("cut_json_%03d" % int(frac * 1000), raw[:cut], 0,
         W.format("cut_json_%03d.json" % int(frac * 1000)) + r".* at byte \d+; analysing the \d+ events before it")
# truncated gzip at many points
# (a cut before any GPU event is refused: what was lost may be all the
# GPU's work, and the host's half read "host-stalled, 0 % busy")
for frac in (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95, 0.99):
    n = "cut_gz_%03d" % int(frac * 1000)
    text = zlib.decompressobj(31).decompress(gz[:int(len(gz) * frac)])
    if b'"cat": "kernel"' in text:
        case(n, gz[:int(len(gz) * frac)], 0,
             W.format(n + ".json.gz") + r"truncated gzip stream at byte \d+; analysing", fname=n + ".json.gz")
    else:
        case(n, gz[:int(len(gz) * frac)], 3,
             r"(?s).*traceanalyze: '[^']*%s.json.gz': rank 0: the file is cut short before any "
             r"GPU activity" % n, fname=n + ".json.gz")
# the same with --strict is an error naming the file and offset
case("cut_json_strict", raw[: len(raw) // 2], 3,
     r"^traceanalyze: '[^']*cut_json_strict.json': .* at byte \d+$", args=["temporal", "--strict"])
case("cut_gz_strict", gz[: len(gz) // 2], 3,
     r"^traceanalyze: '[^']*cut_gz_strict.json.gz': truncated gzip stream at byte \d+$",
     args=["temporal", "--strict"], fname="cut_gz_strict.json.gz")
# gzip damaged in the middle
bad = bytearray(gz)
for i in range(len(bad) // 2, len(bad) // 2 + 64):
    bad[i] ^= 0x55
case("corrupt_gz", bytes(bad), 0, W.format("corrupt_gz.json.gz") + r".* at byte \d+", fname="corrupt_gz.json.gz")
# a bad checksum: every byte is kept, the warning is at the member's end
for name, data in (("crc_small", trace(kernels())), ("crc_large", raw)):
    bad = bytearray(gzip.compress(data))
    bad[-8] ^= 0xFF
    case(name, bytes(bad), 0, W.format(name + ".json.gz") + r"gzip checksum mismatch \(the data may be damaged\) at byte %d; "
         r"analysing the %d events before it" % (len(data), 3 if name == "crc_small" else data.count(b'"ph"')),
         fname=name + ".json.gz")
case("gz_header_only", gz[:6], 3, r"^traceanalyze: '[^']*gz_header_only.json.gz': not a JSON trace",
     fname="gz_header_only.json.gz")
case("concatenated_gz", gzip.compress(raw[:len(raw) // 2]) + gzip.compress(raw[len(raw) // 2:]), 0, r"^$",
     fname="rank-0.json.gz")
# values the format allows or real traces contain
case("huge_ids", trace(kernels() + ['{"ph": "X", "cat": "cpu_op", "name": "c", "ts": 1, "dur": 1, "args": {"External id": 99999999999999999999999, "Comms Id": 18446744073709551616}}']), 0, r"^$")
case("invalid_utf8", trace(kernels() + ['{"ph": "X", "cat": "kernel", "name": "bad\xff\xfe", "ts": 5, "dur": 1, "args": {"stream": 7, "correlation": 9}}']).replace(b"\\xff", b"\xff"), 0, r"^$")
case("string_pids", trace(['{"ph": "X", "cat": "kernel", "name": "k", "pid": "GPU 0", "tid": "stream 7", "ts": 1, "dur": 2, "args": {"stream": 7, "correlation": 1}}']), 0, r"^$")
case("metadata_only", b'{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "distributedInfo": {"rank": 0}}', 3,
     r"^traceanalyze: '[^']*metadata_only.json': no traceEvents array: not a trace$")
# no event at all: nothing was measured (a rank of zeros passed every gate)
case("empty_events", trace([]), 3, r"^traceanalyze: '[^']*empty_events.json': no trace events$",
     args=["temporal", "--format", "text"])
case("only_metadata", trace(['{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}']), 3,
     r"^traceanalyze: '[^']*only_metadata.json': no trace event but metadata and the profiler's span$")
# as Kineto writes them: metadata with a ts, and the profiler's own span
case("kineto_stopped", trace(['{"ph": "M", "name": "process_name", "pid": 1, "ts": 5, "args": {"name": "x"}}',
                              '{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",'
                              ' "tid": "PyTorch Profiler", "ts": 5, "dur": 100}']), 3,
     r"^traceanalyze: '[^']*kineto_stopped.json': no trace event but metadata and the profiler's span$")
case("no_ts", trace(['{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "dur": 5}']), 3,
     r"^traceanalyze: '[^']*no_ts.json': no trace event has a time \(ts\)$")
case("no_gpu_events", trace(['{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 5}']), 0,
     r"^traceanalyze: rank 0: no GPU activity$", args=["temporal", "--format", "text"])
case("deep_nesting", trace(kernels() + ['{"ph": "X", "cat": "cpu_op", "name": "d", "ts": 1, "dur": 1, "args": {"x": %s}}' % ("[" * 20000 + "]" * 20000)]), 0, r"^$")
case("enormous_string", trace(kernels() + ['{"ph": "X", "cat": "cpu_op", "name": "%s", "ts": 1, "dur": 1}' % ("n" * (8 << 20))]), 0, r"^$")
# a string past the 64 MB token limit is skipped, in linear time
case("string_over_limit", gzip.compress(trace(kernels() + ['{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 1, "args": {"a": "%s"}}' % ("n\\\\\\\"" * (70 << 18))] + kernels())), 0,
     W.format("string_over_limit.json.gz") + r"1 strings longer than 64 MB skipped \(taken as empty\), the first near byte \d+",
     fname="string_over_limit.json.gz")
case("number_over_limit", gzip.compress(trace(kernels() + ['{"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": %s}' % ("7" * (70 << 20))])), 0,
     W.format("number_over_limit.json.gz") + r"a number longer than the limit at byte \d+; analysing the 3 events before it",
     fname="number_over_limit.json.gz")
# times whose sums and differences would overflow int64 ns have no time
case("extreme_times", trace(kernels() + [EV % ("9.2e15", 10, 70), EV % ("-9.2e15", 5, 71), EV % (300, "9.2e12", 72),
                                         EV % ("9223372036854775", 1, 73), EV % ("4611686018427387", 1, 74)]), 0,
     W.format("extreme_times.json") + r"5 events have a ts or dur that is not a usable number \(a string, a ts past the year 2116 or a dur over 13 days\)")
case("second_trace_events", trace(kernels()).replace(b"]}", ('], "traceEvents": [%s]}' % (EV % (1, 2, 3))).encode()), 0,
     W.format("second_trace_events.json") + r"1 more traceEvents keys after the first; only the first is read")
case("number_1e999", trace(kernels() + [EV % ("1e999", 5, 77)]), 0,
     W.format("number_1e999.json") + r"1 events have a ts or dur that is not a usable number")
case("nan_literal", trace(kernels() + [EV % ("NaN", 5, 77)]), 0,
     W.format("nan_literal.json") + r".*at byte \d+; analysing the 3 events before it")
case("duplicate_keys", trace(['{"ph": "X", "cat": "kernel", "name": "a", "name": "b", "ts": 1, "ts": 2, "dur": 3, "args": {"stream": 7, "stream": 8, "correlation": 1}}']), 0, r"^$")
case("utf8_bom", b"\xef\xbb\xbf" + trace(kernels()), 0, r"^$")
case("two_documents", trace(kernels()) + b"\n" + trace(kernels()), 0,
     W.format("two_documents.json") + r".* at byte \d+; analysing the 3 events before it")
case("string_ts", trace(kernels() + [EV % ('"12"', 5, 77)]), 0,
     W.format("string_ts.json") + r"1 events have a ts or dur that is not a usable number")
case("object_dur", trace(kernels() + [EV % (5, '{"v": 1}', 77)]), 0,
     W.format("object_dur.json") + r"1 events have a ts or dur that is not a usable number")
case("bool_pid", trace(['{"ph": "X", "cat": "kernel", "name": "k", "pid": true, "tid": [7], "ts": 1, "dur": 2, "args": {"stream": 7, "correlation": 1}}']), 0, r"^$")
case("negative_duration", trace(kernels() + [EV % (50, -30, 77)]), 0,
     r"^traceanalyze: warning: rank 0: 1 GPU events have a negative duration \(a damaged trace\): "
     r"counted as 0 long$")
case("events_not_array", b'{"traceEvents": {"ph": "X"}}', 3, r"^traceanalyze: '[^']*events_not_array.json': no traceEvents array")
case("scalar_document", b"42", 3, r"^traceanalyze: '[^']*scalar_document.json': not a JSON trace")
case("empty_file", b"", 3, r"^traceanalyze: '[^']*empty_file.json': not a JSON trace")
case("binary_garbage", bytes(range(256)) * 8, 3, r"^traceanalyze: '[^']*binary_garbage.json': not a JSON trace")
case("non_object_events", trace(["7", '"x"', "null", "[1, 2]"] + kernels()), 0, r"^$")
case("long_number", trace(kernels() + [EV % ("1" * 400, 5, 77)]), 0,
     W.format("long_number.json") + r"1 events have a ts or dur")
case("rank_string", trace(kernels(), ', "distributedInfo": {"rank": "3"}'), 0, r"^$")
# a rank that is no rank is named, not "no distributedInfo.rank"; 1.0 is
# rank 1, as "1" is (helper-66)
case("rank_negative", trace(kernels(), ', "distributedInfo": {"rank": -1}'), 0,
     W.format("rank_negative.json") + r"distributedInfo.rank -1 is not a rank \(a whole number from 0\) "
     r"and the file name has none; using rank 0")
case("rank_bool", trace(kernels(), ', "distributedInfo": {"rank": true}'), 0,
     W.format("rank_bool.json") + r"distributedInfo.rank true is not a rank")
case("rank_fraction", trace(kernels(), ', "distributedInfo": {"rank": 1.5}'), 0,
     W.format("rank_fraction.json") + r"distributedInfo.rank 1.5 is not a rank")
case("rank_whole_float", trace(kernels(), ', "distributedInfo": {"rank": 1.0}'), 0, r"^$")
# directories
cases.append(("dir_mixed", {"rank-0.json": trace(kernels()), "notes.txt": b"hello", "config.json": b'{"lr": 0.1}',
                            "broken.json.gz": gz[:100]}, ["temporal", "--format", "csv", "DIR"], 0,
              r"traceanalyze: warning: '[^']*config.json': no traceEvents array: not a trace; skipped"))
cases.append(("dir_empty_events", {"rank-0.json": trace(kernels()),
                                   "rank-1.json": trace([], ', "distributedInfo": {"rank": 1}')},
              ["temporal", "--fail-if", "idle_us > 1e12", "DIR"], 1,
              r"warning: '[^']*rank-1.json': no trace events; skipped\n.*gate tripped: 1 input file was left out"))
cases.append(("dir_empty", {}, ["temporal", "DIR"], 3, r"^traceanalyze: '[^']*dir_empty': no trace files"))
cases.append(("dir_no_trace", {"a.txt": b"x"}, ["temporal", "DIR"], 3, r"no trace files"))
cases.append(("dir_duplicate_ranks", {"a.json": trace(kernels(), ', "distributedInfo": {"rank": 2}'),
                                      "b.json": trace(kernels(), ', "distributedInfo": {"rank": 2}')},
              ["temporal", "DIR"], 3, r"^traceanalyze: '[^']*a.json' and '[^']*b.json' are both rank 2 \(one worker's profiling"
              r" cycles\? .*choose one with --span\)$"))
cases.append(("dir_all_broken", {"a.json": b"{", "b.json": b"[[["}, ["temporal", "DIR"], 3,
              r"^traceanalyze: no readable trace among 2 files$"))
case("damaged_before_events", raw[:200], 3,
     r"^traceanalyze: '[^']*damaged_before_events.json': damaged before its first event: .* at byte 200$")
cases.append(("dir_other_ranks_fine", {"rank-0.json": raw[: len(raw) // 3], "rank-1.json": raw},
              ["temporal", "--format", "csv", "DIR"], 0, r"rank-0.json': .* at byte \d+; analysing"))
# output errors
case("write_full", trace(kernels()), 4, r"^traceanalyze: cannot write stdout: No space left on device$",
     args=["temporal", ">/dev/full"])


def run(args, path, out_redirect):
    cmd = [BIN] + args + [path]
    stdout = subprocess.DEVNULL
    if out_redirect:
        stdout = open("/dev/full", "w")
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, timeout=60)


def main():
    keep = sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--keep" else None
    tmp = keep or tempfile.mkdtemp(prefix="ta-bad.")
    os.environ["TRACEANALYZE_CACHE_DIR"] = os.path.join(tmp, "cache")
    passed = failed = 0
    for name, files, args, rc, err in cases:
        d = os.path.join(tmp, name)
        os.makedirs(d, exist_ok=True)
        for fn, data in files.items():
            open(os.path.join(d, fn), "wb").write(data)
        args = list(args or ["temporal", "--format", "csv"])
        redirect = ">/dev/full" in args
        args = [a for a in args if a != ">/dev/full"]
        if "DIR" in args:
            args.remove("DIR")
            path = d
        else:
            path = os.path.join(d, next(iter(files)))
        try:
            p = run(args, path, redirect)
        except subprocess.TimeoutExpired:
            failed += 1
            print(f"FAIL bad {name}: hung")
            continue
        stderr = p.stderr.decode(errors="replace").strip()
        ok = p.returncode == rc and re.search(err, stderr, re.M) is not None
        if err == r"^$":
            ok = p.returncode == rc and stderr == ""
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL bad {name}: exit {p.returncode} (want {rc}); stderr {stderr[:300]!r}; want /{err}/")
    # a closed pipe is quiet; a file-size limit while ingesting is an error
    # that leaves no database behind
    for name, shell, rc, err in (
            ("closed_pipe", f"{BIN} launch --no-cache --format csv {REAL.rsplit('/', 1)[0]} | head -1 >/dev/null;"
             " exit ${PIPESTATUS[0]}", 0, r"^$"),
            ("file_size_limit", f"ulimit -f 100; {BIN} ingest testdata/train_stalled -o {tmp}/fsz/x.db;"
             f" r=$?; ls {tmp}/fsz | grep . && exit 9; exit $r", 4, r"^traceanalyze: '[^']*/fsz/x\.db': ")):
        os.makedirs(os.path.join(tmp, "fsz"), exist_ok=True)
        p = subprocess.run(["bash", "-c", shell], stderr=subprocess.PIPE, stdout=subprocess.PIPE, timeout=60)
        stderr = p.stderr.decode(errors="replace").strip()
        if p.returncode == rc and (re.search(err, stderr) if err != r"^$" else stderr == ""):
            passed += 1
        else:
            failed += 1
            print(f"FAIL bad {name}: exit {p.returncode} (want {rc}); stderr {stderr[:300]!r}")
    cases.extend([None, None])
    # an interrupted ingestion leaves no database, finished or not
    big = os.path.join(tmp, "big", "rank-0.json.gz")
    os.makedirs(os.path.dirname(big), exist_ok=True)
    subprocess.run([sys.executable, "tools/scale.py", "testdata/train_stalled/rank-0.pt.trace.json.gz",
                    big, "60", "0"], check=True)
    out = os.path.join(tmp, "intr")
    os.makedirs(out, exist_ok=True)
    # SIGINT as a terminal sends it; a backgrounded run (make check &)
    # starts with it ignored, which the tool keeps: restore it for the child
    p = subprocess.Popen([BIN, "ingest", "-q", os.path.dirname(big), "-o", os.path.join(out, "run.db")],
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    import time
    time.sleep(0.3)
    p.send_signal(2)
    p.wait(timeout=60)
    left = os.listdir(out)
    if p.returncode != 0 and not left:
        passed += 1
    else:
        failed += 1
        print(f"FAIL bad interrupted_ingest: exit {p.returncode}, left {left}")
    cases.append(None)
    if not keep:
        shutil.rmtree(tmp)
    print(f"bad: {len(cases)} cases: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
