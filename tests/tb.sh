#!/bin/sh
# --tb-compat against the TensorBoard plugin's own code (tests/tb_conform.py,
# value by value): our captures (testdata/oracle/tb/CAPTURE/, what
# ../shared/tools/tb_oracle.py wrote for testdata/CAPTURE) and the plugin's
# 27 test traces (../shared/testdata/tb, skipped where ../shared is absent).
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-./traceanalyze}
SHARED=${SHARED:-../shared}
rc=0
# TB_PLUGIN_ONLY=1 (CI's sanitizer pass): the plugin's test traces alone
if [ -z "${TB_PLUGIN_ONLY:-}" ]; then
	python3 tests/tb_conform.py --bin "$BIN" --trace testdata --expected testdata/oracle/tb || rc=1
fi
if [ -d "$SHARED/testdata/tb-expected" ]; then
	python3 tests/tb_conform.py --bin "$BIN" --trace "$SHARED/testdata/tb" \
		--expected "$SHARED/testdata/tb-expected" || rc=1
else
	echo "tb_conform: the plugin's test traces skipped: $SHARED/testdata/tb-expected not found"
	# CI always has it: there a skip is a failure
	[ -n "${TA_REQUIRE_SHARED:-}" ] && rc=1
fi
exit $rc
