#!/bin/sh
# report --html runs diagnose and the rooflines in a thread beside the
# rest, on a second connection to the same database (exec/plan.c's
# ta_plan_beside), where -j allows two and the plan reads one database;
# with -j 3 or more, the four core tables in a third; with -j 4 or
# more, the overview in a fourth.
# The page must be the one -j 1 writes, byte for byte: on a cache entry
# being built (both connections adding to it), on one already built,
# with options that change what is read, and on a damaged entry (the
# thread's failure is run again, as without it). Run under TSan too.
SUITE=beside
. "$(dirname "$0")/lib.sh"

page() { # NAME CACHE JOBS ARGS...: the page in $TMP/NAME.html, stderr in .err
	name=$1 cache=$2 jobs=$3; shift 3
	TRACEANALYZE_CACHE_DIR="$TMP/$cache" $BIN report -j "$jobs" --html "$TMP/$name.html" "$@" \
		2>"$TMP/$name.err"
	echo "rc=$?" >>"$TMP/$name.err"
	sed -i "s|$TMP/[a-z0-9_-]*|DIR|g" "$TMP/$name.err"
}

for t in gpt2_train resnet_train mem_train roof_train autocast ddp_balanced; do
	for opts in "" "--hta-compat" "--ranks 0" "--window span"; do
		rm -rf "$TMP/one" "$TMP/cache2" "$TMP/cache3" "$TMP/cache4"
		# shellcheck disable=SC2086
		page serial one 1 $opts "testdata/$t"
		# -j 4 (the overview in a fourth thread) on two of them: CI's
		# sanitizer passes run this suite, and time is short
		js="2 3"
		case "$t $opts" in "gpt2_train "|"ddp_balanced "|"ddp_balanced --ranks 0") js="2 3 4" ;; esac
		for j in $js; do
			c=cache$j
			# shellcheck disable=SC2086
			page cold $c $j $opts "testdata/$t"
			# shellcheck disable=SC2086
			page warm $c $j $opts "testdata/$t"
			same "$t $opts -j $j: a cache entry being built" "$TMP/serial.html" "$TMP/cold.html"
			same "$t $opts -j $j: its messages" "$TMP/serial.err" "$TMP/cold.err"
			same "$t $opts -j $j: the entry built" "$TMP/serial.html" "$TMP/warm.html"
			same "$t $opts -j $j: its messages" "$TMP/serial.err" "$TMP/warm.err"
		done
	done
done

# the caller's sections fail (a snapshot that is none) while the thread
# runs: the same error and exit, and the thread stopped, not waited for
printf 'not a pickle' >"$TMP/bad.pickle"
rm -rf "$TMP/one" "$TMP/two" "$TMP/three"
page serial one 1 --snapshot "$TMP/bad.pickle" testdata/snap_profiled
for j in 2 4; do
	rm -rf "$TMP/two"
	page beside two $j --snapshot "$TMP/bad.pickle" testdata/snap_profiled
	check "the caller fails (-j $j): exit 3" grep -q "^rc=3" "$TMP/beside.err"
	same "the caller fails (-j $j): the same error and exit" "$TMP/serial.err" "$TMP/beside.err"
done

# a damaged entry: a page in three overwritten, each run on its own copy
rm -rf "$TMP/one" "$TMP/two" "$TMP/three"
page serial one 1 testdata/gpt2_train
cp -r "$TMP/one" "$TMP/two"
cp -r "$TMP/one" "$TMP/three"
for c in one two three; do
	python3 -c "
import glob, os, sys
p = glob.glob(sys.argv[1] + '/*.db')[0]; f = open(p, 'r+b'); n = os.path.getsize(p) // 65536
for pg in range(2, n, 3):
    f.seek(pg * 65536); f.write(bytes(65536))" "$TMP/$c"
done
page serial one 1 testdata/gpt2_train
for j in 2 4; do
	c=$([ $j = 2 ] && echo two || echo three)
	page beside $c $j testdata/gpt2_train
	check "a damaged entry is rebuilt (-j $j): exit 0" grep -q "^rc=0" "$TMP/beside.err"
	same "a damaged entry (-j $j): the page" "$TMP/serial.html" "$TMP/beside.html"
	same "a damaged entry (-j $j): the messages" "$TMP/serial.err" "$TMP/beside.err"
done

# every page of the entry damaged in turn (BESIDE_LIGHT: every seventh),
# with two threads and three by turns:
# whichever section, on whichever thread, meets the damage first, the
# entry is rebuilt and the page is the undamaged one (a section that lost
# SQLite's error code said "not an error", exit 4, and left it damaged)
rm -rf "$TMP/one"
page want one 1 testdata/gpt2_train
db=$(ls "$TMP"/one/*.db)
n=$(($(wc -c <"$db") / 65536))
pg=1 every=1
[ -n "${BESIDE_LIGHT:-}" ] && every=7
while [ "$pg" -lt "$n" ]; do
	rm -rf "$TMP/two" && cp -r "$TMP/one" "$TMP/two"
	python3 -c "
import glob, sys
f = open(glob.glob(sys.argv[1] + '/*.db')[0], 'r+b'); f.seek(int(sys.argv[2]) * 65536)
f.write(bytes(65536))" "$TMP/two" "$pg"
	page got two $((2 + pg % 2)) testdata/gpt2_train
	check "page $pg damaged: rebuilt, exit 0" grep -q "^rc=0" "$TMP/got.err"
	same "page $pg damaged: the page" "$TMP/want.html" "$TMP/got.html"
	pg=$((pg + every))
done

finish
