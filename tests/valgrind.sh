#!/bin/sh
# CLI runs under valgrind: every analysis, damaged input, a usage error,
# shards (with -j 1: in this process; a child of fork exits without
# freeing what its parent held, which valgrind would count as lost).
cd "$(dirname "$0")/.." || exit 2
TMP=$(mktemp -d /tmp/ta-vg.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
gzip -dc testdata/decode_graph/rank-0.pt.trace.json.gz | head -c 40000 > "$TMP/cut.json"
pass=0 fail=0
while read -r args; do
	# shellcheck disable=SC2086
	$VG ./traceanalyze $args > /dev/null 2> "$TMP/err"
	if [ $? = 99 ]; then
		fail=$((fail + 1)); echo "FAIL valgrind: $args"; cat "$TMP/err"
	else pass=$((pass + 1)); fi
done <<EOF2
report --no-cache testdata/copies
temporal --hta-compat testdata/decode_graph
idle --stats testdata/copies
kernels --top 2 testdata/copies
kernels --by type --hta-compat testdata/copies
overlap testdata/copies
launch --summary testdata/decode_graph
queue --blocked-at 2 testdata/copies
membw testdata/copies
annotations --kernels testdata/copies
diagnose --findings testdata/spin
stragglers testdata/ddp_straggler
ingest -j 1 testdata/ddp_straggler/rank-0.pt.trace.json.gz testdata/ddp_straggler/rank-1.pt.trace.json.gz -o $TMP/shards/
stragglers -j 1 $TMP/shards
temporal -j 1 $TMP/shards
critical-path -j 1 --top 5 $TMP/shards
diagnose -j 1 $TMP/shards
diagnose -j 1 --findings --format csv $TMP/shards
critical-path --top 3 --trace $TMP/path.json.gz testdata/ddp_straggler --ranks 1
overlap testdata/fsdp2
temporal --fail-if idle_pct>1 testdata/copies
temporal $TMP/cut.json
temporal --frobnicate testdata/copies
EOF2
echo "valgrind: $pass passed, $fail failed"
[ "$fail" = 0 ]
