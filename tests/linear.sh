#!/bin/sh
# Linear in the input (#37): a command's instructions on 1x, 4x and 16x
# the same job, counted by callgrind (the same on any machine: not
# seconds, no test fails because a machine is slow). What every run
# pays once (start-up, schema, the model's set-up) cancels in the
# increments: for a command whose cost grows as its input,
#   (I16 - I4) / (I4 - I1)  =  (E16 - E4) / (E4 - E1)
# where E is the events (or ranks) read; a lookup that scans every rank
# for each rank makes the left side grow as the input does. Allowed: 1.2x
# the right side. Four families: more ranks (tools/ranks.py: 4, 16, 64),
# a longer run (a real 2-rank capture copied 1, 4 and 16 times, its
# steps numbered on), more gloo collectives a step and a deeper nesting. report stands for the
# analyses it runs (diagnose with its critical paths, roofline, overlap,
# stragglers, ...). Breaking
# it: the step windows unindexed by rank (as before this test) fail it at
# 4.83x against 4x; the roofline's walk looking along the open ops
# for each op it closes fails the nesting family at 11.2x; a gloo
# exchange's name looked up without coll_cpu, the gloo family at 10.4x. At these
# sizes a quadratic term is still small beside the rest; larger ones
# would take minutes under callgrind.
SUITE=linear
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind > /dev/null; then
	echo "linear: skipped (no valgrind)"
	exit 0
fi

export TRACEANALYZE_CACHE_DIR="$TMP/cache"

# instructions of one cached run of "$@"
count() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" "$@" \
		> /dev/null 2> "$TMP/cg" || { cat "$TMP/cg" >&2; echo 0; return; }
	sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$TMP/cg"
}

# family NAME E1 E4 E16 DIR1 DIR4 DIR16, then the commands, one a line
family() {
	fam=$1 e1=$2 e4=$3 e16=$4 d1=$5 d4=$6 d16=$7
	for d in "$d1" "$d4" "$d16"; do
		"$BIN" temporal -q "$d" > /dev/null # into the cache, not counted
	done
	while read -r cmd; do
		[ -n "$cmd" ] || continue
		# shellcheck disable=SC2086
		i1=$(count $cmd -q "$d1")
		# shellcheck disable=SC2086
		i4=$(count $cmd -q "$d4")
		# shellcheck disable=SC2086
		i16=$(count $cmd -q "$d16")
		verdict=$(awk -v a="$i1" -v b="$i4" -v c="$i16" -v x="$e1" -v y="$e4" -v z="$e16" 'BEGIN {
			if (a <= 0 || b <= a || c <= b) { print "bad"; exit }
			got = (c - b) / (b - a); want = (z - y) / (y - x)
			printf "%s %.2f %.2f", got <= 1.2 * want ? "ok" : "no", got, want }')
		# shellcheck disable=SC2086
		set -- $verdict
		echo "linear: $fam, $cmd: ${2:-?}x (input ${3:-?}x)"
		check "$fam, $cmd: instructions $i1, $i4, $i16: increments ${2:-?}x against the input's ${3:-?}x" test "$1" = ok
	done
}

# report runs diagnose (its critical paths too), roofline, overlap,
# stragglers and the rest: what it costs stands for theirs. With -j 1:
# its sections on threads of their own inflate pages again, as many as
# the threads' timing makes them (CI counted 4.90x where -j 1 is 4.50x)
for n in 4 16 64; do
	python3 tools/ranks.py "$TMP/r$n" $n 2 20000 > /dev/null
done
family ranks 4 16 64 "$TMP/r4" "$TMP/r16" "$TMP/r64" <<EOF
stragglers
report --html - -j 1
EOF

for n in 1 4 16; do
	mkdir -p "$TMP/c$n"
	for r in 0 1; do
		python3 tools/scale.py --steps testdata/ddp_dataload/rank-$r.pt.trace.json.gz \
			"$TMP/c$n/rank-$r.json.gz" $n $r
	done
done
events() { "$BIN" ingest -q "$1" -o "$TMP/e.db" && sqlite3 "$TMP/e.db" "SELECT count(*) FROM events"; rm -f "$TMP/e.db"; }
family "a longer run" "$(events "$TMP/c1")" "$(events "$TMP/c4")" "$(events "$TMP/c16")" \
	"$TMP/c1" "$TMP/c4" "$TMP/c16" <<EOF
report --html - -j 1
ops
EOF

# many gloo collectives a step (tests/gloo_many.py), each a wait for a
# late peer: each exchange after one named by a search of every rank's
# collectives was quadratic
for n in 100 400 1600; do
	python3 tests/gloo_many.py "$TMP/g$n" $n
done
family "gloo collectives" "$(events "$TMP/g100")" "$(events "$TMP/g400")" "$(events "$TMP/g1600")" \
	"$TMP/g100" "$TMP/g400" "$TMP/g1600" <<EOF
diagnose
EOF

# a hostile nesting (tests/nested_ops.py: N nested ranges and ops of N
# shapes over N launches): the roofline's walk looked down the stack for
# each launch and along the open ops for each one closed: 11.2x
for n in 250 1000 4000; do
	mkdir -p "$TMP/n$n"
	python3 tests/nested_ops.py "$TMP/n$n/rank-0.json" $n
done
family "deeper nesting" "$(events "$TMP/n250")" "$(events "$TMP/n1000")" "$(events "$TMP/n4000")" \
	"$TMP/n250" "$TMP/n1000" "$TMP/n4000" <<EOF
roofline
diagnose
EOF

finish
