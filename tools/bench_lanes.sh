#!/bin/sh
# One large file, and two ranks into shards, on many cores: NEW against
# OLD (two traceanalyze binaries), three runs each. Builds 200 MB traces
# from testdata/train_stalled in /tmp; needs json_verify (yajl-tools) for
# the floor. Usage: sh tools/bench_lanes.sh NEW OLD
set -u
[ $# -eq 2 ] || { echo "usage: sh tools/bench_lanes.sh NEW OLD" >&2; exit 2; }
cd "$(dirname "$0")/.." || exit 2
NEW=$1 OLD=$2 T=${TMPDIR:-/tmp}/bench_lanes
mkdir -p "$T/x1" "$T/r2"
src=testdata/train_stalled/rank-0.pt.trace.json.gz
[ -f "$T/x1/rank-0.json.gz" ] || python3 tools/scale.py $src "$T/x1/rank-0.json.gz" 65 0
for r in 0 1; do
	[ -f "$T/r2/rank-$r.json.gz" ] || python3 tools/scale.py $src "$T/r2/rank-$r.json.gz" 65 $r
done
f=$T/x1/rank-0.json.gz
printf 'machine: %s, %s CPUs\n' "$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" "$(nproc)"
echo "what: wall s, user s, system s, peak RSS KB"
t() { /usr/bin/time -f "%e %U %S %M" -o "$T/t" "$@" >/dev/null 2>&1; cat "$T/t"; }
for run in 1 2 3; do
	echo "floor: $(/usr/bin/time -f '%e %U %S' sh -c "gzip -dc $f | json_verify -q" 2>&1)"
	for j in 1 2 4 16; do
		echo "old temporal --no-cache -j $j: $(t "$OLD" temporal -q --no-cache -j $j "$f")"
		echo "new temporal --no-cache -j $j: $(t "$NEW" temporal -q --no-cache -j $j "$f")"
	done
	for b in old new; do
		bin=$OLD
		[ $b = new ] && bin=$NEW
		rm -rf "$T/shards"
		echo "$b ingest -j 16 (2 ranks): $(t "$bin" ingest -q -j 16 "$T/r2" -o "$T/shards/")"
	done
done
rm -rf "$T/shards"
