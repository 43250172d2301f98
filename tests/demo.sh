#!/bin/sh
# make demo's run over the samples (tools/demo.sh), as README's first
# command does it on a fresh machine: every sample analysed, exit 0. It
# broke once unseen, when samples without traces (snapshots) came.
cd "$(dirname "$0")/.." || exit 2
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
if sh tools/demo.sh > "$TMP/out" 2>&1; then
	echo "demo: $(grep -c '^== ' "$TMP/out") samples, 0 failed"
else
	tail -5 "$TMP/out"
	echo "FAIL demo: make demo stopped at $(grep '^== ' "$TMP/out" | tail -1)"
	exit 1
fi
