#!/bin/sh
# stragglers, report, critical-path and diagnose over many ranks: on
# shards (each shard's collectives gathered, kernel types joined, paths
# walked round by round) against one database. Measured on the 16-core device machine for the
# README:   sh tools/bench_stragglers.sh BIN [OLD_BIN] [RANKS]
# RANKS traces of 200 MB of JSON each (65 copies of train_stalled) in
# .bench/r<RANKS>/ if missing; OLD_BIN, an earlier build, for "before".
set -eu
BIN=$1 OLD=${2:-} R=${3:-16}
d=.bench/r$R s=.bench/sh$R
mkdir -p "$d"
i=0
while [ $i -lt "$R" ]; do
	[ -f "$d/rank-$i.json.gz" ] ||
		python3 tools/scale.py testdata/train_stalled/rank-0.pt.trace.json.gz \
			"$d/rank-$i.json.gz" 65 $i &
	i=$((i + 1))
done
wait
t() { /usr/bin/time -f "%e s wall, %U+%S s CPU, %M KB: $*" "$@" > /dev/null; }
export TRACEANALYZE_CACHE_DIR=.bench/cache-strag
rm -rf "$TRACEANALYZE_CACHE_DIR" "$s"
t "$BIN" ingest -q -j "$R" "$d" -o "$s/"
t "$BIN" stragglers -q -j "$R" "$s"
t "$BIN" stragglers -q -j "$R" "$s"
t "$BIN" stragglers -q -j 1 "$s"
t "$BIN" stragglers -q -j "$R" "$d"
t "$BIN" stragglers -q -j "$R" "$d"
touch "$d/rank-3.json.gz"
t "$BIN" stragglers -q -j "$R" "$d"
t "$BIN" stragglers -q --no-cache -j "$R" "$d"
t "$BIN" report -q -j "$R" "$s"
t "$BIN" report -q --no-cache -j "$R" "$d"
t "$BIN" critical-path -q -j "$R" "$s"
t "$BIN" critical-path -q --no-cache -j "$R" "$d"
t "$BIN" diagnose -q --format csv -j "$R" "$s"
t "$BIN" diagnose -q -j "$R" "$s"
[ -n "$OLD" ] || exit 0
rm -rf "$TRACEANALYZE_CACHE_DIR"
t "$OLD" stragglers -q --no-cache -j "$R" "$d"
t "$OLD" stragglers -q -j "$R" "$s"
t "$OLD" report -q --no-cache -j "$R" "$d"
"$BIN" stragglers -q -j "$R" --format csv "$s" > .bench/strag.new
"$OLD" stragglers -q -j "$R" --format csv "$d" > .bench/strag.old
cmp .bench/strag.new .bench/strag.old && echo "the same CSV"
rm -rf "$TRACEANALYZE_CACHE_DIR"
t "$OLD" critical-path -q --no-cache -j "$R" "$d"
t "$OLD" critical-path -q -j "$R" "$s"
rm -rf "$TRACEANALYZE_CACHE_DIR"
t "$OLD" diagnose -q --format csv -j "$R" "$s"
t "$OLD" diagnose -q -j "$R" "$s"
"$BIN" critical-path -q -j "$R" --format csv "$s" > .bench/cp.new
"$OLD" critical-path -q -j "$R" --format csv "$d" > .bench/cp.old
cmp .bench/cp.new .bench/cp.old && echo "critical-path: the same CSV"
"$BIN" diagnose -q -j "$R" --format csv "$s" > .bench/dg.new
"$OLD" diagnose -q -j "$R" --format csv "$d" > .bench/dg.old
cmp .bench/dg.new .bench/dg.old && echo "diagnose: the same CSV"
"$BIN" diagnose -q -j "$R" "$s" > .bench/dgt.new
"$OLD" diagnose -q -j "$R" "$d" > .bench/dgt.old
cmp .bench/dgt.new .bench/dgt.old && echo "diagnose: the same text"
"$BIN" report -q -j "$R" --format csv "$s" > .bench/report.new
"$OLD" report -q -j "$R" --format csv "$d" > .bench/report.old
cmp .bench/report.new .bench/report.old && echo "report: the same CSV"
