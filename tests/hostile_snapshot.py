#!/usr/bin/env python3
"""Hostile allocator snapshots (#35): pickles that grow the memo, share one
block 10^10 times, hold 100 M values in 200 KB, give fields of the wrong
type or size, or list a segment three times. Each is exit 3 with a
message, in bounded time and memory; plain data written with any protocol
(0 to 5, DUP, LONG4) reads the same as what torch writes."""
import csv
import gzip
import io
import os
import pickle
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

checks = []
BIN = os.path.abspath("./traceanalyze")
REAL = "testdata/snap_leak/snapshot.pickle.gz"


def check(name, cond):
    checks.append((name, bool(cond)))


def run_rss(path, *args, timeout=60):
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        errf = os.open(os.path.join(d, "stderr"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(errf, 2)
        os.execv(BIN, [BIN, "memory", "-q", *args, path])
    t0 = time.time()
    while True:
        got, status, ru = os.wait4(pid, os.WNOHANG)
        if got:
            break
        if time.time() - t0 > timeout:
            os.kill(pid, signal.SIGKILL)
            os.wait4(pid, 0)
            return -1, "timed out", 0
        time.sleep(0.02)
    return os.waitstatus_to_exitcode(status), open(os.path.join(d, "stderr")).read(), ru.ru_maxrss / 1024


d = tempfile.mkdtemp()


def write(name, data, gz=False):
    path = os.path.join(d, name)
    with (gzip.open(path, "wb", compresslevel=9) if gz else open(path, "wb")) as f:
        f.write(data)
    return path


def s(text):
    b = text.encode()
    return b"\x8c" + bytes([len(b)]) + b


# The memo ladder: LONG_BINPUT indexes climbing by 2^20 (32 GB of memo).
ladder = b"\x80\x04]" + b"".join(b"r" + struct.pack("<I", i << 20) for i in range(1, 4096)) + b"."
rc, err, rss = run_rss(write("ladder.pickle", ladder))
check("memo ladder: exit 3, said, under 200 MB (rc %d, %.0f MB)" % (rc, rss),
      rc == 3 and "memo index" in err and rss < 200)

# Billion laughs: one block 10^5 times in a segment listed 10^5 times.
block = b"}(" + s("address") + b"K\x01" + s("size") + b"K\x01" + s("state") + s("active_allocated") + b"u"
blocks = b"]q\x01(" + b"h\x00" * 1000 + b"e" + (b"(" + b"h\x00" * 1000 + b"e") * 99
seg = (b"}q\x02(" + s("device") + b"K\x00" + s("address") + b"K\x00" + s("total_size") + b"K\x01" +
       s("blocks") + b"h\x01u")
laughs = (b"\x80\x04" + block + b"q\x00" + b"0" + blocks + b"0" + seg + b"0" + b"}(" + s("segments") +
          b"](" + b"h\x02" * 1000 + b"e" + (b"(" + b"h\x02" * 1000 + b"e") * 99 +
          s("device_traces") + b"]u.")
rc, err, rss = run_rss(write("laughs.pickle.gz", laughs, gz=True), timeout=30)
check("billion laughs: exit 3, said, quickly (rc %d: %s)" % (rc, err.strip()[:120]),
      rc == 3 and "shared" in err)

# One 60 MB file name shared by every frame of 10,000 blocks (read for each).
frame = b"}(" + s("filename") + b"X" + struct.pack("<I", 60 << 20) + b"a" * (60 << 20) + \
    s("name") + s("f") + s("line") + b"K\x01uq\x00" + b"]q\x01h\x00a00"
blk = b"}(" + s("address") + b"K\x01" + s("size") + b"K\x01" + s("frames") + b"h\x01u"
seg = (b"}(" + s("device") + b"K\x00" + s("address") + b"K\x00" + s("total_size") + b"K\x01" +
       s("blocks") + b"](" + blk * 10000 + b"eu")
long_name = b"\x80\x04" + frame + b"}(" + s("segments") + b"](" + seg + b"e" + s("device_traces") + b"]u."
rc, err, rss = run_rss(write("longname.pickle.gz", long_name, gz=True), timeout=60)
check("a 60 MB name shared by every frame: exit 3, quickly (rc %d: %s)" % (rc, err.strip()[-80:]),
      rc == 3 and "refused" in err)

# The value bomb: 100 M Nones, 200 KB gzipped, as the segments.
nones = b"(" + b"N" * 1000 + b"e"
bomb = b"\x80\x04}(" + s("segments") + b"]" + nones * 100000 + s("device_traces") + b"]u."
path = write("bomb.pickle.gz", bomb, gz=True)
rc, err, rss = run_rss(path, timeout=120)
check("value bomb of 100 M Nones (%d KB): exit 3 naming the segment, under 2 GB "
      "(rc %d, %.0f MB: %s)" % (os.path.getsize(path) // 1024, rc, rss, err.strip()[:80]),
      rc == 3 and "segment 0: it is None, not a dict" in err and rss < 2048)

# Fields of the wrong type or size; a segment listed three times.
real = pickle.load(gzip.open(REAL))


def variant(name, change):
    snap = pickle.loads(pickle.dumps(real))
    change(snap)
    return write(name + ".pickle", pickle.dumps(snap, protocol=4))


def seg0(snap):
    return snap["segments"][0]


cases = [
    ("ints", lambda x: x.__setitem__("segments", [1, 2, 3]), "segment 0: it is an integer, not a dict"),
    ("negative", lambda x: seg0(x).__setitem__("total_size", -4096), "total_size is -4096"),
    ("nan", lambda x: seg0(x)["blocks"][0].__setitem__("size", float("nan")), "size is a float"),
    ("int64max", lambda x: seg0(x).__setitem__("total_size", 2**63 - 1), "not a size"),
    ("bigint", lambda x: seg0(x).__setitem__("total_size", 2**70), "not a size"),
    ("text size", lambda x: x["device_traces"][0][0].__setitem__("size", "12"), "size is a string"),
    ("negative time", lambda x: x["device_traces"][0][0].__setitem__("time_us", -5), "not a time"),
    ("time past 2^53 us", lambda x: x["device_traces"][0][0].__setitem__("time_us", 2**60), "not a time"),
    ("thrice", lambda x: x.__setitem__("segments", [seg0(x)] * 3), "is listed 3 times"),
    ("thrice copied", lambda x: x.__setitem__("segments", [pickle.loads(pickle.dumps(seg0(x)))
                                                             for _ in range(3)]), "is listed 3 times"),
    ("trace not a list", lambda x: x.__setitem__("device_traces", [5]), "not a list"),
]
for name, change, said in cases:
    path = variant(name.replace(" ", "_"), change)
    rc, err, _ = run_rss(path)
    check("%s: exit 3 naming the file and saying '%s' (rc %d: %s)" % (name, said, rc, err.strip()[:120]),
          rc == 3 and said in err and path in err)

# A key set twice holds its last value, as Python reads it: a second
# segment whose address is set again to the first's is the first's twice.
def segment(addr_keys):
    body = b"".join(s("address") + b"J" + struct.pack("<i", a) for a in addr_keys)
    return (b"}(" + s("device") + b"K\x00" + body + s("total_size") + b"J" + struct.pack("<i", 1 << 21) +
            s("blocks") + b"]u")
dupkey = (b"\x80\x04}(" + s("segments") + b"](" + segment([1 << 20]) + segment([(1 << 20) + (8 << 20), 1 << 20]) +
          b"e" + s("device_traces") + b"]u.")
path = write("dupkey.pickle", dupkey)
assert [x["address"] for x in pickle.loads(dupkey)["segments"]] == [1 << 20, 1 << 20]
rc, err, _ = run_rss(path)
check("a key set twice: its last value, as Python's (rc %d: %s)" % (rc, err.strip()[-60:]),
      rc == 3 and "listed 2 times" in err)

# Plain data in every protocol reads the same as what torch wrote.
ref = subprocess.run([BIN, "memory", "-q", "--format", "csv", REAL], capture_output=True, text=True).stdout
check("the real snapshot reads", ref.count("\n") >= 2)
for proto in range(0, 6):
    path = write("p%d.pickle" % proto, pickle.dumps(real, protocol=proto))
    p = subprocess.run([BIN, "memory", "-q", "--format", "csv", path], capture_output=True, text=True)
    check("protocol %d reads as torch's pickle does (rc %d: %s)" % (proto, p.returncode, p.stderr.strip()[:100]),
          p.returncode == 0 and p.stdout == ref)

# DUP and LONG4 are plain data: a segment of 2^40 bytes, its size in LONG4,
# the empty trace list made by DUP.
size = 1 << 40
seg = (b"}(" + s("device") + b"K\x00" + s("address") + b"K\x10" + s("total_size") +
       b"\x8b\x08\x00\x00\x00" + struct.pack("<q", size) + s("blocks") + b"]u")
# the DUP'd list is popped again, so the dict is {segments, device_traces}
dup = b"\x80\x04}(" + s("segments") + b"](" + seg + b"e" + s("device_traces") + b"]20u."
p = subprocess.run([BIN, "memory", "-q", "--format", "csv", write("dup.pickle", dup)],
                   capture_output=True, text=True)
check("DUP and LONG4 read (rc %d: %s)" % (p.returncode, p.stderr.strip()[:100]),
      p.returncode == 0 and str(size) in p.stdout)

# Damaged gzip (#41): a cut stream and a bad checksum (found after the
# STOP, at the member's end) are exit 3 with the gzip reader's message,
# the same through ISA-L's inflater and zlib's.
gz = open(REAL, "rb").read()
bad_crc = bytearray(gz)
bad_crc[-8] ^= 0xFF
for name, data, want in (("cut", gz[:len(gz) // 2], r"truncated gzip stream at byte \d+$"),
                         ("crc", bytes(bad_crc), r"gzip checksum mismatch \(the data may be damaged\) "
                          r"at byte %d$" % len(gzip.decompress(gz)))):
    path = write("damaged_%s.pickle.gz" % name, data)
    got = [subprocess.run([BIN, "memory", "-q", path], capture_output=True, text=True,
                          env=dict(os.environ, TA_INFLATE=inflater)) for inflater in ("zlib", "isa-l")]
    check("gzip damage, %s: exit 3, %s, both inflaters alike (%s)" % (name, want, got[0].stderr.strip()),
          all(g.returncode == 3 and re.search(want, g.stderr.strip()) for g in got) and
          got[0].stderr == got[1].stderr)

# SIGTERM while a big snapshot is read leaves nothing in TMPDIR.
big = dict(real)
big["device_traces"] = [real["device_traces"][0] * 300]
path = write("big.pickle", pickle.dumps(big, protocol=4))
tmpdir = tempfile.mkdtemp()
left = []
for delay in (0.3, 0.6):
    p = subprocess.Popen([BIN, "memory", "-q", path], env=dict(os.environ, TMPDIR=tmpdir),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    p.send_signal(signal.SIGTERM)
    p.wait()
    left += os.listdir(tmpdir)
check("SIGTERM while a snapshot is read: nothing left in TMPDIR (%s)" % left, not left)

failed = [n for n, ok in checks if not ok]
for n, ok in checks:
    print(("ok   " if ok else "FAIL ") + "hostile_snapshot: " + n)
print(f"hostile_snapshot: {len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
