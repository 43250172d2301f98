#!/bin/sh
# Tables with a row per launch, kernel or point go out row by row in CSV
# and JSON (the table keeps one row). They must print exactly what the
# whole table prints: a --fail-if that never fires keeps the table whole.
# An analysis that fails before its first row leaves no -o file behind.
SUITE=stream
. "$(dirname "$0")/lib.sh"
dirs="testdata/decode_graph testdata/copies testdata/train_stalled"
[ -d ../shared/testdata/hta/trace_filter ] &&
	dirs="$dirs ../shared/testdata/hta/trace_filter"

for dir in $dirs; do
	while read -r cmd; do
		for fmt in csv json; do
			$BIN $cmd -q --format $fmt "$dir" > "$TMP/a"
			$BIN $cmd -q --format $fmt --fail-if 'rank < 0' "$dir" > "$TMP/b"
			check "$cmd --format $fmt $dir" cmp -s "$TMP/a" "$TMP/b"
		done
	done <<-CMDS
	launch
	launch --hta-compat
	annotations --kernels
	queue --series
	queue --series --hta-compat
	membw --series
	CMDS
done
$BIN launch -q --format csv --ranks 9 -o "$TMP/none.csv" testdata/copies 2>/dev/null
check "no file after a failure" test ! -e "$TMP/none.csv"
$BIN launch -q --format csv -o "$TMP/some.csv" testdata/copies
$BIN launch -q --format csv testdata/copies > "$TMP/stdout.csv"
check "-o file = stdout" cmp -s "$TMP/some.csv" "$TMP/stdout.csv"
# a baseline from a pipe: its first bytes, read to tell a trace from a
# CSV, are not lost (they were: "has the columns nk, idle_us", helper-55);
# a spreadsheet's byte order mark is no part of the header
$BIN temporal -q --format csv testdata/two_ranks > "$TMP/bl.csv"
cat "$TMP/bl.csv" | $BIN temporal --baseline - --max-increase idle_us=10% \
	testdata/two_ranks > /dev/null 2> "$TMP/pipe.err"
check "--baseline - from a pipe reads the whole CSV" \
	grep -q "2 rows matched, 0 new, 0 gone" "$TMP/pipe.err"
{ printf '\357\273\277'; cat "$TMP/bl.csv"; } > "$TMP/bom.csv"
$BIN temporal --baseline "$TMP/bom.csv" --max-increase idle_us=10% \
	testdata/two_ranks > /dev/null 2> "$TMP/bom.err"
check "--baseline with a UTF-8 byte order mark" grep -q "2 rows matched" "$TMP/bom.err"
gzip -c "$TMP/bl.csv" | $BIN temporal -q --baseline - testdata/two_ranks \
	> /dev/null 2> "$TMP/gz.err"
check "--baseline - of gzip from a pipe is refused as such" grep -q "is a gzipped trace" "$TMP/gz.err"
finish
