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

finish
