#!/bin/sh
# The cache a user can see and control: an entry per set of traces with
# its sources, replaced when they change, listed, pruned when stale,
# capped by TRACEANALYZE_CACHE_MAX with the least recently used going
# first, and cleared.
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-./traceanalyze}
TMP=$(mktemp -d /tmp/ta-cache.XXXXXX)
trap 'umount "$TMP/tiny" 2>/dev/null; rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL cache: $1"; fi; }
entries() { ls "$TRACEANALYZE_CACHE_DIR"/*.db 2>/dev/null | wc -l; }

mkdir "$TMP/a" "$TMP/b" "$TMP/c"
cp testdata/copies/rank-0.pt.trace.json.gz "$TMP/a/"
cp testdata/spin/rank-0.pt.trace.json.gz "$TMP/b/"
cp testdata/decode_graph/rank-0.pt.trace.json.gz "$TMP/c/"
$BIN temporal -q "$TMP/a" >/dev/null
check "an entry and its sources" '[ "$(entries)" = 1 ] && grep -qx "$TMP/a/rank-0.pt.trace.json.gz" "$TRACEANALYZE_CACHE_DIR"/*.src'
check "list: current, with its trace" '$BIN cache list --format csv | grep -q ",current,$TMP/a/rank-0.pt.trace.json.gz"'
sleep 1; touch "$TMP/a/rank-0.pt.trace.json.gz"
check "list: stale once the trace changed" '$BIN cache list --format csv | grep -q ",stale,"'
$BIN temporal -q "$TMP/a" >/dev/null
check "a changed trace replaces its entry" '[ "$(entries)" = 1 ] && $BIN cache list --format csv | grep -q ",current,"'
$BIN temporal -q "$TMP/b" >/dev/null
rm "$TMP/b/rank-0.pt.trace.json.gz"
check "prune removes the entry of a trace that is gone" '$BIN cache prune | grep -q "removed 1 entries" && [ "$(entries)" = 1 ]'
check "prune keeps current entries" '$BIN cache prune | grep -q "removed 0 entries"'
# least recently used, not oldest: a is made first but used last
cp testdata/spin/rank-0.pt.trace.json.gz "$TMP/b/"
$BIN temporal -q "$TMP/b" >/dev/null
sleep 1
$BIN temporal -q "$TMP/a" >/dev/null   # a cached read: a is the most recent use
size=$(du -cb "$TRACEANALYZE_CACHE_DIR"/*.db | tail -1 | cut -f1)
TRACEANALYZE_CACHE_MAX=$((size + 10)) $BIN temporal -q "$TMP/c" >/dev/null
check "over the cap the least recently used goes" '[ "$(entries)" = 2 ] && ! grep -q "$TMP/b/" "$TRACEANALYZE_CACHE_DIR"/*.src && grep -q "$TMP/a/" "$TRACEANALYZE_CACHE_DIR"/*.src'
TRACEANALYZE_CACHE_MAX=1K $BIN temporal -q "$TMP/b" >/dev/null
check "the new entry stays even past the cap" '[ "$(entries)" = 1 ] && grep -q "$TMP/b/" "$TRACEANALYZE_CACHE_DIR"/*.src'
check "a cap that is not a size is warned about" 'TRACEANALYZE_CACHE_MAX=lots $BIN temporal --no-cache "$TMP/a" >/dev/null && TRACEANALYZE_CACHE_MAX=lots $BIN temporal "$TMP/c" 2>&1 >/dev/null | grep -q "not a size"'
# a database given as PATH whose whole check passed is noted (checked/)
$BIN ingest -q "$TMP/c" -o "$TMP/c.db"
$BIN temporal -q "$TMP/c.db" >/dev/null
check "a database checked is noted" '[ "$(ls "$TRACEANALYZE_CACHE_DIR"/checked | wc -l)" = 1 ]'
check "clear removes every entry" '$BIN cache clear | grep -q "removed 2 entries" && [ "$(entries)" = 0 ]'
check "... and the notes of checks" '[ ! -e "$TRACEANALYZE_CACHE_DIR"/checked ]'
# only the notes: another file in checked/ stays, a link is not followed
mkdir -p "$TRACEANALYZE_CACHE_DIR/checked" "$TMP/victim"
echo keep > "$TRACEANALYZE_CACHE_DIR/checked/report.txt"
echo keep > "$TMP/victim/0123456789abcdef"
$BIN cache clear > /dev/null
check "clear leaves a file that is no note" '[ -e "$TRACEANALYZE_CACHE_DIR/checked/report.txt" ]'
rm -r "$TRACEANALYZE_CACHE_DIR/checked"
ln -s "$TMP/victim" "$TRACEANALYZE_CACHE_DIR/checked"
$BIN cache clear > /dev/null
check "clear does not follow checked/ as a link" '[ -e "$TMP/victim/0123456789abcdef" ]'
rm "$TRACEANALYZE_CACHE_DIR/checked"
# a FIFO where a note would be is no note, and never waited on
sleep 2
$BIN temporal -q "$TMP/c.db" >/dev/null
check "a database checked more than 2 s after it changed is noted" '[ "$(ls "$TRACEANALYZE_CACHE_DIR"/checked | wc -l)" = 1 ]'
for n in "$TRACEANALYZE_CACHE_DIR"/checked/*; do rm "$n"; mkfifo "$n"; done
check "a FIFO in checked/: read as no note, no hang" 'timeout 60 $BIN temporal -q "$TMP/c.db" >/dev/null'
# prune: the note of a file changed since goes
sleep 2
$BIN temporal -q "$TMP/c.db" >/dev/null
$BIN cache prune >/dev/null
check "prune keeps the note of a file unchanged" '[ "$(ls "$TRACEANALYZE_CACHE_DIR"/checked | wc -l)" = 1 ]'
touch "$TMP/c.db"
$BIN cache prune >/dev/null
check "prune removes the note of a file changed since" '[ "$(ls "$TRACEANALYZE_CACHE_DIR"/checked | wc -l)" = 0 ]'
# a packed entry whose record 13 claims block 12 (its header crc made
# right), cut before record 16: pages that read as other rows. report
# rebuilt the entry at the section that saw the damage and kept the
# sections before it, read from the damaged one (helper-40): now all again
export TRACEANALYZE_CACHE_DIR="$TMP/mixed"
$BIN report -q --no-cache --html "$TMP/mixed.want.html" testdata/two_ranks
$BIN temporal -q testdata/two_ranks >/dev/null
python3 - "$TRACEANALYZE_CACHE_DIR"/*.db <<'PY'
import struct, sys, zlib
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
off, recs = 32, []
while off + 32 <= len(d):
    recs.append(off)
    off += 32 + struct.unpack_from("<I", d, off + 16)[0]
assert len(recs) > 16, len(recs)
struct.pack_into("<I", d, recs[13] + 4, 12)
struct.pack_into("<I", d, recs[13] + 28, zlib.crc32(bytes(d[recs[13]:recs[13] + 28])))
open(p, "wb").write(bytes(d[:recs[16]]))
PY
$BIN report -q --html "$TMP/mixed.got.html" testdata/two_ranks 2>"$TMP/mixed.err"
check "report on an entry rebuilt mid-way: every section from the new one" 'cmp -s "$TMP/mixed.want.html" "$TMP/mixed.got.html"'
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
# a damaged entry is rebuilt whichever statement meets the damage, even
# one whose code was lost on the way (an analysis's own SQLITE_ERROR, a
# statement finalized before the error was read: "SQL logic error" or
# "not an error", exit 4, and the entry left damaged): every fourth page
# zeroed in turn, the output the undamaged entry's
mkdir "$TMP/dmg"
for cmd in diagnose stragglers roofline; do
	rm -rf "$TMP/dmg/base"
	TRACEANALYZE_CACHE_DIR="$TMP/dmg/base" $BIN $cmd -q testdata/gpt2_train >"$TMP/dmg/want"
	db=$(ls "$TMP"/dmg/base/*.db)
	n=$(($(wc -c <"$db") / 65536)) pg=1 bad=""
	while [ "$pg" -lt "$n" ]; do
		rm -rf "$TMP/dmg/c" && cp -r "$TMP/dmg/base" "$TMP/dmg/c"
		python3 -c "
import glob, sys
f = open(glob.glob(sys.argv[1] + '/*.db')[0], 'r+b'); f.seek(int(sys.argv[2]) * 65536)
f.write(bytes(65536))" "$TMP/dmg/c" "$pg"
		TRACEANALYZE_CACHE_DIR="$TMP/dmg/c" $BIN $cmd -q testdata/gpt2_train >"$TMP/dmg/got" 2>&1 &&
			cmp -s "$TMP/dmg/got" "$TMP/dmg/want" || bad="$bad $pg"
		pg=$((pg + 4))
	done
	check "$cmd: a damaged page rebuilds the entry (failed:$bad)" '[ -z "$bad" ]'
done
# a full disk while a command adds to its entry (HTA's rows): the add is
# given up, the output is what it would be, no journal is left behind
# (it failed the next command, and a packed entry was then rebuilt on
# the full disk, failing every command after), and the entry serves the
# next run as it was. Packed and plain; ulimit -f is the full disk.
$BIN temporal --hta-compat --no-cache testdata/gpt2_train >"$TMP/full.want"
$BIN temporal --no-cache testdata/gpt2_train >"$TMP/full.plainwant"
for z in 1 0; do
	d="$TMP/full$z"
	TRACEANALYZE_CACHE_COMPRESS=$z TRACEANALYZE_CACHE_DIR="$d" $BIN temporal -q testdata/gpt2_train >/dev/null
	db=$(ls "$d"/*.db) ino=$(stat -c %i "$db")
	(trap '' XFSZ; ulimit -f $(($(wc -c <"$db") / 512 + 40))
	 TRACEANALYZE_CACHE_COMPRESS=$z TRACEANALYZE_CACHE_DIR="$d" $BIN temporal --hta-compat testdata/gpt2_train >"$TMP/full.got" 2>"$TMP/full.err")
	check "full disk ($z): the command's output all the same" 'cmp -s "$TMP/full.got" "$TMP/full.want"'
	check "full disk ($z): the add given up, nothing left" '[ ! -e "$db-journal" ] && ! grep -q hta_rows "$TMP/full.err" && ! TRACEANALYZE_CACHE_COMPRESS=$z $BIN cache list --format csv | grep -q journal'
	TRACEANALYZE_CACHE_COMPRESS=$z TRACEANALYZE_CACHE_DIR="$d" $BIN temporal testdata/gpt2_train >"$TMP/full.got" 2>"$TMP/full.err"
	check "full disk ($z): the entry serves the next run as it was" 'cmp -s "$TMP/full.got" "$TMP/full.plainwant" && [ "$(stat -c %i "$db")" = "$ino" ] && ! grep -q . "$TMP/full.err"'
done
# a per-file entry (-j 2 on a directory) with the journal of a run killed
# adding to it: rolled back, and the entries serve as before (the shard
# check failed on it, and the merged way built a second entry, every run)
d="$TMP/shj"
TRACEANALYZE_CACHE_COMPRESS=0 TRACEANALYZE_CACHE_DIR="$d" $BIN temporal -q -j 2 testdata/ddp_bucketed >/dev/null
python3 -c '
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("PRAGMA cache_size = 2"); c.execute("BEGIN"); c.execute("DELETE FROM events")
os._exit(0)   # killed: the journal stays, hot
' "$(ls "$d"/*.db | head -1)"
$BIN temporal -q --no-cache testdata/ddp_bucketed >"$TMP/shj.want"
TRACEANALYZE_CACHE_DIR="$d" $BIN temporal -q -j 2 testdata/ddp_bucketed >"$TMP/shj.got"
check "a per-file entry's journal is rolled back, no merged entry" 'cmp -s "$TMP/shj.got" "$TMP/shj.want" && [ "$(ls "$d"/*.db | wc -l)" = 2 ] && ! ls "$d" | grep -q journal'
# a cache on a full disk (a 1 MB tmpfs, where the machine lets us mount
# one): the traces are parsed without it, with a warning, not exit 4
mkdir "$TMP/tiny"
if mount -t tmpfs -o size=1M tmpfs "$TMP/tiny" 2>/dev/null; then
	TRACEANALYZE_CACHE_DIR="$TMP/tiny/c" $BIN temporal testdata/gpt2_train >"$TMP/tiny.got" 2>"$TMP/tiny.err"
	rc=$?
	umount "$TMP/tiny"
	check "a full cache disk: parsed without the cache" '[ $rc = 0 ] && cmp -s "$TMP/tiny.got" "$TMP/full.plainwant" && grep -q "not caching" "$TMP/tiny.err"'
else
	echo "cache: skipped the full cache disk (cannot mount a tmpfs here)"
fi
# what sits at an entry's name and is no file (helper-40: every run failed,
# and cache clear left it): a dangling or looping link, an empty directory
# go with a warning; a directory with files in it leaves the run uncached
rm -rf "$TMP/odd"; mkdir "$TMP/odd"
for odd in dangling loop dir full; do
	export TRACEANALYZE_CACHE_DIR="$TMP/odd/$odd"
	$BIN temporal -q "$TMP/a" >"$TMP/odd.want"
	e=$(ls "$TRACEANALYZE_CACHE_DIR"/*.db)
	rm "$e"
	case $odd in
	dangling) ln -s "$TMP/odd/nowhere.db" "$e" ;;
	loop) ln -s "$e" "$e" ;;
	dir) mkdir "$e" ;;
	full) mkdir "$e"; echo keep > "$e/x" ;;
	esac
	$BIN temporal "$TMP/a" >"$TMP/odd.got" 2>"$TMP/odd.err"
	rc=$?
	check "a $odd entry: the run goes on, with a warning" '[ $rc = 0 ] && cmp -s "$TMP/odd.want" "$TMP/odd.got" && [ "$(wc -l < "$TMP/odd.err")" = 1 ]'
	case $odd in
	full) check "... a directory with files in it is left alone" '[ -e "$e/x" ]' ;;
	*) check "... and it is an entry again" '[ -f "$e" ] && $BIN temporal "$TMP/a" 2>&1 >/dev/null | wc -c | grep -qx 0' ;;
	esac
done
# the same at a rank's entry of its own (a directory of ranks read on two
# cores: an entry per file)
export TRACEANALYZE_CACHE_DIR="$TMP/odd/perfile"
$BIN temporal -q -j 2 testdata/ddp_bucketed >"$TMP/odd.want"
e=$(ls "$TRACEANALYZE_CACHE_DIR"/*.db | head -1)
rm "$e"; ln -s "$TMP/odd/nowhere.db" "$e"
check "a dangling link at a rank's entry: rebuilt, with a warning" '$BIN temporal -j 2 testdata/ddp_bucketed 2>"$TMP/odd.err" >"$TMP/odd.got" && cmp -s "$TMP/odd.want" "$TMP/odd.got" && grep -q "was not a file" "$TMP/odd.err" && [ -f "$e" ]'
export TRACEANALYZE_CACHE_DIR="$TMP/odd/clear"
$BIN temporal -q "$TMP/a" >/dev/null
e=$(ls "$TRACEANALYZE_CACHE_DIR"/*.db)
rm "$e"; ln -s "$TMP/odd/nowhere.db" "$e"
check "cache clear removes a dangling link at an entry's name" '$BIN cache clear | grep -q "removed 1 entries" && [ ! -L "$e" ]'
# an entry built from another directory names its traces as this run was
# given them: counters' warning (no counter events) names the file, and
# critical-path --trace reads it
export TRACEANALYZE_CACHE_DIR="$TMP/given"
mkdir -p "$TMP/g/x/y"
cp testdata/train_healthy/rank-0.pt.trace.json.gz "$TMP/g/"
abs=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
( cd "$TMP/g/x/y" && "$abs" temporal -q ../../rank-0.pt.trace.json.gz >/dev/null )
check "an entry built from elsewhere: the warning names the path as given here" \
	'$BIN counters "$TMP/g/rank-0.pt.trace.json.gz" 2>&1 >/dev/null | grep -q "^traceanalyze: '"'"'$TMP/g/rank-0.pt.trace.json.gz'"'"': no cuda_profiler_range"'
check "... and critical-path --trace reads the trace by it" \
	'$BIN critical-path -q --trace "$TMP/g/out.json" "$TMP/g/rank-0.pt.trace.json.gz" >/dev/null && [ -s "$TMP/g/out.json" ]'
# a write to an entry cut short leaves its journal: cache clear takes it,
# and one left with no entry is not replayed onto the next entry built
export TRACEANALYZE_CACHE_DIR="$TMP/journal" TRACEANALYZE_CACHE_COMPRESS=0
hot() { # a write transaction on entry $1, killed before its commit
	python3 -c 'import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("DELETE FROM events")
c.execute("CREATE TABLE junk AS SELECT 1")
os._exit(9)' "$1" 2>/dev/null
}
$BIN temporal -q "$TMP/a" > "$TMP/j.want"
e=$(ls "$TRACEANALYZE_CACHE_DIR"/*.db)
hot "$e"
check "a write killed leaves a journal (the test's premise)" '[ -f "$e-journal" ]'
$BIN cache clear > /dev/null
check "cache clear removes the journal with its entry" '[ ! -e "$e-journal" ] && [ ! -e "$e" ]'
$BIN temporal -q "$TMP/a" > /dev/null
hot "$e"
rm "$e"
check "a journal with no entry: the next entry is built clean" \
	'$BIN temporal -q "$TMP/a" > "$TMP/j.got" 2> "$TMP/j.err" && cmp -s "$TMP/j.want" "$TMP/j.got" && [ ! -s "$TMP/j.err" ] && $BIN diagnose -q "$TMP/a" > /dev/null'
unset TRACEANALYZE_CACHE_COMPRESS
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
# a link named for another rank is that rank, not its target's entry
# (helper-48: rank-5 -> rank 0's file made rank 0's cached runs say 5)
mkdir -p "$TMP/lnk"
ln -s "$PWD/testdata/train_stalled/rank-0.pt.trace.json.gz" "$TMP/lnk/rank-5.pt.trace.json.gz"
$BIN temporal -q --format csv "$TMP/lnk" > "$TMP/l5"
$BIN temporal -q --format csv testdata/train_stalled > "$TMP/l0"
$BIN temporal -q --no-cache --format csv testdata/train_stalled > "$TMP/l0.want"
check "a link named rank-5 is rank 5" 'cut -d, -f1 "$TMP/l5" | tail -1 | grep -qx 5'
check "its target, cached after it, is still rank 0" 'cmp -s "$TMP/l0" "$TMP/l0.want"'
# what a parse said of a trace (no rank, steps that are not steps, a
# second traceEvents) is said again by every cached read: the merged
# entry, each file's entry (-j 2) and the user's shards, with the path
# as given now
mkdir -p "$TMP/said"
python3 - "$TMP/said" <<'PY'
import gzip, json, sys
d = json.load(gzip.open("testdata/gpt2_train/rank-0.pt.trace.json.gz"))
d.pop("distributedInfo", None)
ev = d["traceEvents"]
ev.append(dict(next(e for e in ev if e.get("name", "").startswith("ProfilerStep#")),
               name="ProfilerStep#abc"))
s = json.dumps(d)[:-1] + ', "traceEvents": []}'
open(sys.argv[1] + "/w.json", "w").write(s)
for r in (0, 1):
    open("%s/rank-%d.json" % (sys.argv[1], r), "w").write(s)
PY
mkdir "$TMP/said/d" && mv "$TMP/said"/rank-*.json "$TMP/said/d/"
$BIN temporal "$TMP/said/w.json" 2> "$TMP/said/e1" >/dev/null
$BIN temporal "$TMP/said/w.json" 2> "$TMP/said/e2" >/dev/null
check "a parse's warnings: said (the test's premise)" '[ "$(grep -c "not steps\|only the first is read\|no distributedInfo" "$TMP/said/e1")" = 3 ]'
check "... and said again by a cached read" 'cmp -s "$TMP/said/e1" "$TMP/said/e2"'
case $BIN in /*) abs=$BIN ;; *) abs=$PWD/$BIN ;; esac
check "... naming the path as given now" '(cd "$TMP/said" && "$abs" temporal w.json 2>&1 >/dev/null | grep -c "^traceanalyze: warning: .w.json.: ") | grep -qx 3'
$BIN stragglers -j 2 "$TMP/said/d" 2> "$TMP/said/e3" >/dev/null
$BIN stragglers -j 2 "$TMP/said/d" 2> "$TMP/said/e4" >/dev/null
check "each file's entry (-j 2): said again" '[ "$(grep -c "rank-1.json.: 1 more traceEvents" "$TMP/said/e3")" = 1 ] && cmp -s "$TMP/said/e3" "$TMP/said/e4"'
$BIN ingest -q -j 2 "$TMP/said/d" -o "$TMP/said/sh/"
check "the user's shards: said again" '$BIN temporal -j 2 "$TMP/said/sh" 2>&1 >/dev/null | grep -c "only the first is read" | grep -qx 2'
# a database's text is anyone's: an edited note says no control character
$BIN ingest -q "$TMP/said/w.json" -o "$TMP/said/esc.db"
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE info SET value = json_array(?, ?) WHERE key = ?", ("a\x1b[31m", "x\nforged", "noted:0")); c.commit()' "$TMP/said/esc.db"
check "an edited note: no control character said" '$BIN temporal "$TMP/said/esc.db" 2>&1 >/dev/null | grep -q "^traceanalyze: warning: .a?\[31m.: x?forged$"'
# a shard's part of 12 k gloo collectives (more than SQLite's page cache):
# written while the same process read the file, it waited on its own
# lock for ever (helper-49); "timeout" only ends a hang
python3 tests/gloo_many.py "$TMP/gm" 6000
$BIN stragglers -q -j 1 --no-cache "$TMP/gm" > "$TMP/gm.want"
check "a large part kept beside its reading: no hang, the same answer" \
	'timeout 300 $BIN stragglers -q -j 2 "$TMP/gm" > "$TMP/gm.got" && cmp -s "$TMP/gm.want" "$TMP/gm.got"'
check "cache --help" '$BIN cache --help | grep -q "prune"'
check "a bad verb is a usage error" '$BIN cache purge 2>/dev/null; [ $? = 2 ]'
echo "cache: $pass passed, $fail failed"
[ "$fail" = 0 ]
