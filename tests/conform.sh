#!/bin/sh
# HTA conformance: ../shared/tools/conform.py compares --hta-compat output
# with HTA's own CSVs. Skipped (with a message) where ../shared is absent.
cd "$(dirname "$0")/.." || exit 2
SHARED=${SHARED:-../shared}
ONLY=${CONFORM_ONLY:-temporal,idle,idle-stats,kernel-types,kernel-types-nomem,kernels,kernels-all,kernels-nomem-top3,overlap}
if [ ! -f "$SHARED/tools/conform.py" ]; then
	echo "conform: skipped: $SHARED/tools/conform.py not found"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "conform: skipped: python3 not found"
	exit 0
fi
TMP=$(mktemp -d /tmp/ta-conform.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP"
python3 "$SHARED/tools/conform.py" --bin ./traceanalyze \
	--cases "$SHARED/testdata/hta" --expected "$SHARED/testdata/hta-expected" \
	--only "$ONLY"
