#!/bin/sh
# --hta-compat keeps HTA's rows in a cached database (main.hta_rows) the
# first time; a database it cannot write (here --no-cache's private one)
# gets them for the run only. Both ways, and the run that reuses them,
# must print the same bytes, for every rank selection.
SUITE=compat_cache
. "$(dirname "$0")/lib.sh"
dirs="testdata/train_stalled testdata/decode_graph"
[ -d ../shared/testdata/hta/trace_filter ] &&
	dirs="$dirs ../shared/testdata/hta/trace_filter"

for dir in $dirs; do
	for ranks in all 0 1; do
		[ "$ranks" = 1 ] && [ "$(basename "$dir")" != trace_filter ] && continue
		while read -r cmd; do
			$BIN $cmd --hta-compat --ranks $ranks --no-cache --format csv \
				"$dir" > "$TMP/a" 2>"$TMP/a.err"
			echo "exit $?" >> "$TMP/a"
			for run in first again; do
				$BIN $cmd --hta-compat --ranks $ranks --format csv \
					"$dir" > "$TMP/b" 2>"$TMP/b.err"
				echo "exit $?" >> "$TMP/b"
				# exit codes compared too, and the first must succeed
				check "$cmd --ranks $ranks $dir ($run) succeeds" \
					grep -qx "exit 0" "$TMP/a"
				same "$cmd --ranks $ranks $dir ($run)" "$TMP/a" "$TMP/b"
			done
			rm -rf "$TMP/cache" # the next command builds them again
		done <<-CMDS
		temporal
		idle --stats
		kernels
		kernels --by type
		overlap
		launch
		queue
		membw
		annotations
		CMDS
	done
done
# the kept rows are in the cache, not in a database we may not write
# (the entry plain, to be read with sqlite3; packed above)
rm -rf "$TMP/cache"
TRACEANALYZE_CACHE_COMPRESS=0 $BIN temporal --hta-compat -q testdata/copies > /dev/null
db=$(ls "$TMP"/cache/*.db)
command -v sqlite3 >/dev/null || { echo "compat_cache: sqlite3 missing"; exit 1; }
has_hta_rows() { sqlite3 "$1" "SELECT count(*) FROM hta_rows" > /dev/null 2>&1; }
check "hta_rows kept in the cache" has_hta_rows "$db"
finish
