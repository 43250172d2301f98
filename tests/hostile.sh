#!/bin/sh
# Hostile file systems and a shared cache (issue 13): what must never
# happen is a destroyed file, a hang, a crash, or a failure because
# another run is reading. Every check is bounded by timeout(1).
SUITE=hostile
. "$(dirname "$0")/lib.sh"
T="timeout 20"
R=testdata/two_ranks
cp "$R"/*.json.gz "$TMP/" && mkdir "$TMP/traces" && cp "$R"/*.json.gz "$TMP/traces/"
TRACE=$TMP/rank-0.pt.trace.json.gz

# exits RC and prints a line on stderr matching RE: NAME RC RE CMD...
expect() {
	name=$1 rc=$2 re=$3; shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	got=$?
	if [ "$got" -eq "$rc" ] && { [ -z "$re" ] || grep -Eq -- "$re" "$TMP/err"; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $SUITE: $name: exit $got (want $rc); stderr: $(head -c 300 "$TMP/err")"
	fi
}

## never destroy a file
mknod "$TMP/fakenull" c 1 3 2>/dev/null || mkfifo "$TMP/fakenull"
expect ingest_onto_device 2 "fakenull' is a (character device|FIFO); -o replaces a regular file only" \
	$T $BIN ingest "$R" -o "$TMP/fakenull"
check device_kept test -c "$TMP/fakenull" -o -p "$TMP/fakenull"
cp "$TRACE" "$TMP/before"
expect ingest_onto_input 2 "is an input; refusing to write over it" \
	$T $BIN ingest "$TRACE" -o "$TRACE"
expect analysis_onto_input 2 "is an input; refusing to write over it" \
	$T $BIN temporal "$TMP/traces" -o "$TMP/traces/rank-1.pt.trace.json.gz"
$BIN temporal -q --format csv "$TRACE" -o "$TMP/base.csv"
expect analysis_onto_baseline 2 "is an input; refusing to write over it" \
	$T $BIN temporal --format csv "$TRACE" --baseline "$TMP/base.csv" -o "$TMP/base.csv"
check input_kept cmp -s "$TRACE" "$TMP/before"
ln "$TRACE" "$TMP/hardlink.json.gz"
expect onto_hard_link 2 "is an input" $T $BIN temporal "$TRACE" -o "$TMP/hardlink.json.gz"
expect ingest_to_stdout 2 "ingest needs one PATH and -o DB" $T $BIN ingest "$R" -o -

## never hang on a FIFO
mkfifo "$TMP/fifo" "$TMP/traces2.fifo"
expect fifo_path 3 "fifo': a FIFO, not a trace" $T $BIN temporal "$TMP/fifo"
expect fifo_path_nocache 3 "fifo': a FIFO, not a trace" $T $BIN temporal --no-cache "$TMP/fifo"
expect fifo_baseline 3 "baseline '.*fifo': a FIFO, not a regular file" \
	$T $BIN temporal --format csv "$TRACE" --baseline "$TMP/fifo"
expect stdin_on_purpose 0 "" sh -c "gzip -dc '$TRACE' | $T $BIN temporal --format csv - | grep -q '^0,'"

## --help and --version must report a write error
expect help_dev_full 4 "cannot write stdout" sh -c "$BIN --help >/dev/full"
expect version_closed 4 "cannot write stdout" sh -c "$BIN --version >&-"
expect cmd_help_dev_full 4 "cannot write stdout" sh -c "$BIN temporal --help >/dev/full"

## --fail-if cannot blow the stack
deep=$(python3 -c 'print("(" * 30000 + "idle_pct > 1" + ")" * 30000)')
expect gate_deep_parens 2 "nested deeper than 256" $T $BIN temporal "$TRACE" --fail-if "$deep"
deep=$(python3 -c 'print("!" * 30000 + "idle_pct > 1")')
expect gate_deep_not 2 "nested deeper than 256" $T $BIN temporal "$TRACE" --fail-if "$deep"
deep=$(python3 -c 'print(" || ".join(["idle_pct > 1"] * 5000))')
expect gate_long_chain 2 "more than 4096 terms" $T $BIN temporal "$TRACE" --fail-if "$deep"

## one cache, many runs at once
BIG=$TMP/big
mkdir "$BIG" && python3 tools/scale.py testdata/train_stalled/rank-0.pt.trace.json.gz "$BIG/rank-0.json.gz" 8 0
$BIN temporal -q "$BIG" >/dev/null          # cached, without diagnose's index
$BIN diagnose -q --no-cache "$BIG" >"$TMP/diag.want"
for i in 1 2 3 4 5 6; do
	( $T $BIN diagnose -q "$BIG" >"$TMP/diag.$i" 2>"$TMP/diag.$i.err"; echo $? >"$TMP/diag.$i.rc" ) &
done
( $T $BIN temporal -q "$BIG" >/dev/null 2>"$TMP/t.err"; echo $? >"$TMP/t.rc" ) &
( $T $BIN ops -q "$BIG" >/dev/null 2>"$TMP/o.err"; echo $? >"$TMP/o.rc" ) &
wait
for i in 1 2 3 4 5 6; do
	check "parallel_diagnose_$i" test "$(cat "$TMP/diag.$i.rc")" = 0 -a ! -s "$TMP/diag.$i.err"
	same "parallel_diagnose_same_$i" "$TMP/diag.want" "$TMP/diag.$i"
done
check parallel_temporal test "$(cat "$TMP/t.rc")" = 0 -a ! -s "$TMP/t.err"
check parallel_ops test "$(cat "$TMP/o.rc")" = 0 -a ! -s "$TMP/o.err"

## a database we may not write: diagnose works for the run only
$BIN ingest -q "$R" -o "$TMP/ro.db" && sqlite3 "$TMP/ro.db" "DROP INDEX events_cpu"
chmod 444 "$TMP/ro.db"; chmod 755 "$TMP"
$BIN diagnose -q --no-cache "$R" >"$TMP/ro.want"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	AS_OTHER="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	AS_OTHER=""
fi
expect readonly_diagnose 0 "" $T $AS_OTHER $BIN diagnose -q "$TMP/ro.db"
same readonly_diagnose_same "$TMP/ro.want" "$TMP/out"
check readonly_untouched test -z "$(sqlite3 "$TMP/ro.db" "SELECT name FROM sqlite_master WHERE name = 'events_cpu'")"

## temp names: unique, locked, and cleaned once their writer is dead
C=$TRACEANALYZE_CACHE_DIR
for sig in KILL XCPU USR1; do
	# a writer that waits for the rest of its input: killed mid-write
	rm -f "$TMP/feed"; mkfifo "$TMP/feed"
	( gzip -dc "$TRACE"; exec sleep 10 ) >"$TMP/feed" &
	fpid=$!
	$BIN ingest -q - -o "$TMP/k.db" <"$TMP/feed" &
	kpid=$!
	n=0
	while [ "$(ls "$TMP"/k.db.tmp.* 2>/dev/null | wc -l)" -lt "$([ $sig = KILL ] && echo 1 || echo 2)" ] && [ $n -lt 300 ]; do
		sleep 0.1; n=$((n + 1))
	done
	# the name is registered for removal a moment after it is made: a
	# signal in between (a loaded machine) leaves it to the next run's
	# cleaning, as KILL's, which is not what is tested here
	sleep 0.5
	kill -$sig $kpid 2>/dev/null; wait $kpid 2>/dev/null
	kill $fpid 2>/dev/null; wait $fpid 2>/dev/null
done
check killed_leaves_one test "$(ls "$TMP"/k.db.tmp.* | wc -l)" = 1   # KILL's; the others clean up
touch -d '2 minutes ago' "$TMP"/k.db.tmp.*
$BIN ingest -q "$R" -o "$TMP/k.db"
check killed_leftover_removed test "$(ls "$TMP"/k.db.tmp.* 2>/dev/null | wc -l)" = 0
touch "$C/0123456789abcdef.db.tmp.ABCDEF"      # a dead writer's, fresh
touch -d '2 minutes ago' "$C/0123456789abcdef.db.tmp.OLDONE"
( exec 9>"$C/0123456789abcdef.db.tmp.LIVE1"; flock 9; touch -d '2 minutes ago' "$C/0123456789abcdef.db.tmp.LIVE1"; sleep 5 ) &
lpid=$!
sleep 0.5
$BIN temporal -q "$R" >/dev/null
check stale_temp_removed test ! -e "$C/0123456789abcdef.db.tmp.OLDONE"
check fresh_temp_kept test -e "$C/0123456789abcdef.db.tmp.ABCDEF"
check locked_temp_kept test -e "$C/0123456789abcdef.db.tmp.LIVE1"
kill $lpid 2>/dev/null; wait $lpid 2>/dev/null
if command -v unshare >/dev/null && unshare -p -f --mount-proc true 2>/dev/null; then
	rm -rf "$TMP/ns"; mkdir "$TMP/ns"
	for i in 1 2 3 4; do
		( TRACEANALYZE_CACHE_DIR="$TMP/ns" unshare -p -f --mount-proc \
			$T $BIN temporal -q --format csv "$BIG" >"$TMP/ns.$i" 2>"$TMP/ns.$i.err"
		  echo $? >"$TMP/ns.$i.rc" ) &
	done
	wait
	for i in 1 2 3 4; do
		check "pid_namespace_$i" test "$(cat "$TMP/ns.$i.rc")" = 0 -a ! -s "$TMP/ns.$i.err"
	done
else
	echo "hostile: skipping the PID-namespace case (unshare -p not permitted here)"
fi

# --no-cache's scratch databases in TMPDIR: a dead run's is removed too
mkdir "$TMP/tmpdir"
touch -d '2 minutes ago' "$TMP/tmpdir/traceanalyze.db.tmp.DEAD01"
touch "$TMP/tmpdir/unrelated.db.tmp.KEEP01"
TMPDIR="$TMP/tmpdir" $BIN temporal -q --no-cache "$R" >/dev/null
check nocache_stale_removed test ! -e "$TMP/tmpdir/traceanalyze.db.tmp.DEAD01"
check nocache_others_kept test -e "$TMP/tmpdir/unrelated.db.tmp.KEEP01"
check nocache_leaves_nothing test "$(ls "$TMP/tmpdir" | wc -l)" = 1

## a damaged cache heals; a damaged database given as PATH is named
rm -rf "$C"
$BIN temporal -q --format csv "$BIG" >"$TMP/t.want"
db=$(ls "$C"/*.db)
python3 -c "
import os, sys
p = sys.argv[1]; f = open(p, 'r+b'); n = os.path.getsize(p) // 65536
for pg in range(2, n, 3):
    f.seek(pg * 65536); f.write(bytes(65536))" "$db"
cp "$db" "$TMP/damaged.db"
expect damaged_cache_rebuilt 0 "warning: cached database '.*' is damaged \(.*\); rebuilding it" \
	$T $BIN temporal --format csv "$BIG"
same damaged_cache_same "$TMP/t.want" "$TMP/out"
expect damaged_cache_healed 0 "^traceanalyze: using the cached database" $T $BIN temporal -v --format csv "$BIG"
expect damaged_user_db 3 "damaged.db': damaged database" $T $BIN temporal "$TMP/damaged.db"
printf 'SQLite format 3\000garbage' >"$TMP/notdb.db"
head -c 70000 /dev/zero >>"$TMP/notdb.db"
expect not_a_database 3 "notdb.db'" $T $BIN temporal "$TMP/notdb.db"

## the cache key sees a rewrite with the same size and mtime
mkdir "$TMP/same" && gzip -dc "$TRACE" >"$TMP/same/rank-0.json"
$BIN temporal -q --format csv "$TMP/same" >"$TMP/same.1"
cp "$TMP/same/rank-0.json" "$TMP/same.orig"
python3 -c "
import sys, re
p = sys.argv[1]; s = open(p).read()
open(p, 'w').write(s.replace('\"dur\": 1', '\"dur\": 9', 50))" "$TMP/same/rank-0.json"
touch -r "$TMP/same.orig" "$TMP/same/rank-0.json"
check same_size test "$(stat -c %s "$TMP/same.orig")" = "$(stat -c %s "$TMP/same/rank-0.json")"
expect rewritten_parsed_again 0 "parsing 1 files into the cached database" $T $BIN temporal -v --format csv "$TMP/same"
expect unchanged_uses_cache 0 "using the cached database" $T $BIN temporal -v --format csv "$TMP/same"

## a cache directory we cannot use: one warning, then uncached
echo x >"$TMP/afile"
for bad in "$TMP/afile" /dev/null "$TMP/$(printf 'd%.0s' $(seq 1 5000))"; do
	expect "unusable_cache_$(basename "$bad" | head -c 10)" 0 \
		"warning: cache directory '.*': .*; not caching" \
		env TRACEANALYZE_CACHE_DIR="$bad" $T $BIN temporal --format csv "$R"
	check "unusable_cache_one_line" test "$(wc -l <"$TMP/err")" = 1
done
mkdir "$TMP/rocache"; chmod 555 "$TMP/rocache"
expect readonly_cache 0 "cache directory '.*rocache': .*; not caching" \
	env TRACEANALYZE_CACHE_DIR="$TMP/rocache" $T $AS_OTHER $BIN temporal --format csv "$R"
# ... but what a read-only cache holds is still used, without a word
mkdir "$TMP/rocache2"
TRACEANALYZE_CACHE_DIR="$TMP/rocache2" $BIN temporal -q "$R" >/dev/null
chmod 555 "$TMP/rocache2"
expect readonly_cache_hit 0 "^traceanalyze: using the cached database" \
	env TRACEANALYZE_CACHE_DIR="$TMP/rocache2" $T $AS_OTHER $BIN temporal -v --format csv "$R"
check readonly_cache_hit_quiet test "$(wc -l <"$TMP/err")" = 1
expect tmpdir_missing 4 "cannot create '/nonexistent/traceanalyze.db.tmp" \
	env TMPDIR=/nonexistent $T $BIN temporal --no-cache "$R"

## files with a trace's name that are not traces
mkdir "$TMP/odd" && cp "$TRACE" "$TMP/odd/rank-0.json.gz"
mkfifo "$TMP/odd/rank-1.json"; mkdir "$TMP/odd/rank-2.json"
ln -s nowhere "$TMP/odd/rank-3.json"; ln -s rank-4.json "$TMP/odd/rank-4.json"
expect odd_names 0 "rank-1.json': a FIFO; skipped" $T $BIN temporal --format csv "$TMP/odd"
check odd_dir grep -q "rank-2.json': a directory; skipped" "$TMP/err"
check odd_dangling grep -q "rank-3.json': No such file or directory; skipped" "$TMP/err"
check odd_loop grep -q "rank-4.json': Too many levels of symbolic links; skipped" "$TMP/err"

## output is valid UTF-8 whatever the names hold; escaped NULs keep names apart
python3 - "$TMP/utf8.json" <<'PY'
import sys
ev = '{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %d, "dur": 2, "args": {"stream": 7, "correlation": %d}}'
names = ["bad\\u0000a", "bad\\u0000b", "sur\\ud800x", "low\\udc00x", "over\xc0\xafx", "ff\xffx"]
t = '{"traceEvents": [%s]}' % ", ".join(ev % (n, 10 * i, i) for i, n in enumerate(names))
open(sys.argv[1], "wb").write(t.encode("latin-1"))
PY
for fmt in json csv; do
	expect "utf8_$fmt" 0 "bytes of invalid UTF-8 in names were replaced with U\+FFFD" \
		$T $BIN kernels --by kernel --format $fmt "$TMP/utf8.json"
	check "utf8_${fmt}_valid" python3 -c "
import sys, json, csv, io
text = open(sys.argv[1], 'rb').read().decode('utf-8')
rows = json.loads(text) if sys.argv[2] == 'json' else list(csv.DictReader(io.StringIO(text)))
assert len(set(r['name'] for r in rows)) == 6, rows" "$TMP/out" $fmt
done

## defined treatment of impossible data, each with a warning
python3 - "$TMP/sem.json" <<'PY'
import sys
K = '{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 10, "args": {"stream": 7, "correlation": %d}}'
L = '{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %d, "dur": 5, "args": {"correlation": %d}}'
S = '{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%s", "pid": 1, "tid": 1, "ts": %d, "dur": %d}'
ev = [L % (90, 1), K % (1, 100, 1),
      L % (200, 2), K % (2, 150, 2),              # starts before its launch
      L % (300, 3), L % (305, 3), K % (3, 320, 3),  # two calls, one correlation
      S % ("1", 80, 200), S % ("2", 400, -50), S % ("99999999999999999999999", 500, 10),
      S % ("1.0", 520, 10), S % ("-1", 540, 10),  # no step numbers
      S % ("1", 600, 50)]                          # step 1 again: numbered on
open(sys.argv[1], "w").write('{"distributedInfo": {"rank": 0}, "traceEvents": [%s]}' % ", ".join(ev))
PY
expect queue_before_launch 0 "1 GPU activities start before their launch call" \
	$T $BIN queue --series --format csv "$TMP/sem.json"
check queue_never_negative python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and min(int(r['queue_length']) for r in rows) >= 0, rows" "$TMP/out"
check bad_steps_warned grep -q "4 ProfilerStep#N ranges with a negative duration or an N that is not a whole number from 0 to 2^62 are not steps" "$TMP/err"
check repeated_step_warned grep -q "1 ProfilerStep#N ranges repeat a step number seen before" "$TMP/err"
expect repeated_step_apart 0 "" $T $BIN steps -q --format csv "$TMP/sem.json"
check repeated_step_once python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r['step'] for r in rows] == ['1', '2'], rows" "$TMP/out"
expect launch_shared_correlation 0 "1 correlation ids belong to more than one runtime call" \
	$T $BIN launch --format csv "$TMP/sem.json"
check launch_counted_once test "$(grep -c '^0,3,' "$TMP/out")" = 1
expect diagnose_bad_steps 0 "" $T $BIN diagnose -q --format csv "$TMP/sem.json"
check diagnose_no_negative_step python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert all(float(r['step_us']) >= 0 and int(r['step']) < 2**62 for r in rows), rows" "$TMP/out"

## ranks without steps: their whole extent is the one step (-1)
expect diagnose_no_steps 0 "" $T $BIN diagnose -q --format csv "$TMP/utf8.json"
check diagnose_no_steps_row grep -q "^0,,[0-9]" "$TMP/out"   # step -1: no step

## a malformed baseline is an error naming file and row, never a crash
$BIN temporal -q --format csv "$R" >"$TMP/base_ok.csv"
printf 'rank,idle_us\n0,5\n1\n' >"$TMP/short.csv"
expect baseline_short_row 3 "baseline '.*short.csv': row 3 has 1 fields, the header 2" \
	$T $BIN temporal --format csv "$R" --baseline "$TMP/short.csv" --max-increase idle_us=1
printf 'rank,idle_us\n0,"5\n' >"$TMP/open_quote.csv"
expect baseline_open_quote 3 "baseline '.*open_quote.csv': row 2: " \
	$T $BIN temporal --format csv "$R" --baseline "$TMP/open_quote.csv" --max-increase idle_us=1
expect baseline_fine 0 "" $T $BIN temporal -q --format csv "$R" --baseline "$TMP/base_ok.csv" --max-increase idle_us=1

## a file read on several lanes (8 MB and more, -j 2 on) whose steps repeat:
## every lane's rows renumbered, as on one (once only the first lane's)
python3 - "$TMP/lanes.json" <<'PY'
import sys
ev = []
for copy in range(2):
    for s in range(1, 4):
        t0 = (copy * 3 + s) * 1000000
        ev.append('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": 1, '
                  '"tid": 1, "ts": %d, "dur": 900000}' % (s, t0))
        ev += ['{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": %d, "dur": 5, '
               '"args": {"stream": 7, "correlation": %d}}' % (t0 + 10 * i, i) for i in range(12000)]
open(sys.argv[1], "w").write('{"traceEvents": [%s]}' % ", ".join(ev))
PY
for j in 1 4; do
	$BIN steps -q --no-cache -j $j --format csv "$TMP/lanes.json" > "$TMP/lanes.$j" 2>&1
done
same repeated_steps_lanes "$TMP/lanes.1" "$TMP/lanes.4"
check repeated_steps_lanes_apart test "$(cut -d, -f2 "$TMP/lanes.4" | sort | uniq -d | wc -l)" = 0

## diagnose names the small-kernel threshold it was given
expect small_kernel_text 0 "" $T $BIN diagnose -q --findings --format csv --small-kernel-us 25 testdata/decode_eager
check small_kernel_threshold grep -q "kernels shorter than 25 us" "$TMP/out"

finish
