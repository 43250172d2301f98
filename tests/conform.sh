#!/bin/sh
# HTA conformance: ../shared/tools/conform.py compares --hta-compat output
# with HTA's own CSVs. Skipped (with a message) where ../shared is absent.
#
# conform.py reads a memory-bandwidth summary that HTA left empty (two
# header lines, no rows: amd_trace and both MTIA cases have no bandwidth
# data) as one bogus row, so those cases are checked here instead: ours
# must be empty too.
cd "$(dirname "$0")/.." || exit 2
SHARED=${SHARED:-../shared}
ALL=temporal,idle,idle-stats,kernel-types,kernel-types-nomem,kernels,kernels-all,kernels-nomem-top3,overlap,launch,queue,queue-blocked,annotations,annotations-gpu,diff,diff-short,aten-delay,sequences
ONLY=${CONFORM_ONLY:-$ALL}
if [ ! -f "$SHARED/tools/conform.py" ]; then
	echo "conform: skipped: $SHARED/tools/conform.py not found"
	# CI always has it: there a skip is a failure
	[ -n "${TA_REQUIRE_SHARED:-}" ] && exit 1
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "conform: skipped: python3 not found"
	exit 0
fi
TMP=$(mktemp -d /tmp/ta-conform.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP"
EXP="$SHARED/testdata/hta-expected"
python3 "$SHARED/tools/conform.py" --bin ./traceanalyze \
	--cases "$SHARED/testdata/hta" --expected "$EXP" --only "$ONLY" || exit 1
[ -n "${CONFORM_ONLY:-}" ] && exit 0

full="" empty=""
for f in "$EXP"/*/memory_bw_summary.csv; do
	c=$(basename "$(dirname "$f")")
	if [ "$(wc -l < "$f")" -gt 2 ]; then full="$full${full:+,}$c"; else empty="$empty $c"; fi
done
python3 "$SHARED/tools/conform.py" --bin ./traceanalyze \
	--cases "$SHARED/testdata/hta" --expected "$EXP" --only membw --case "$full" || exit 1
pass=0 fail=0
for c in $empty; do
	rows=$(./traceanalyze membw --hta-compat --format csv "$SHARED/testdata/hta/$c" | wc -l)
	if [ "$rows" = 1 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "  membw $c: HTA's table is empty, ours has $((rows - 1)) rows"; fi
done
echo "membw (HTA empty)      $pass/$((pass + fail)) cases match"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
