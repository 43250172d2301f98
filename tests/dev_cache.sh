#!/bin/sh
# The model's GPU rows (main.dev_rows) are kept in a cache entry the first
# time a command reads them, and read from there after. The run that
# writes them, the runs that read them and --no-cache (which keeps none)
# must print the same bytes, for every rank selection; rows another build
# wrote (info.dev_rows names the model's source) are written again, not
# trusted; a user's own database is only read.
SUITE=dev_cache
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "dev_cache: sqlite3 missing"; exit 1; }

for dir in testdata/ddp_straggler testdata/train_stalled testdata/multistream; do
	for ranks in all 0 1; do
		[ "$ranks" = 1 ] && [ "$dir" != testdata/ddp_straggler ] && continue
		while read -r cmd; do
			# shellcheck disable=SC2086
			$BIN $cmd --ranks $ranks --no-cache --format csv "$dir" \
				> "$TMP/a" 2>&1
			echo "exit $?" >> "$TMP/a"
			check "$cmd --ranks $ranks $dir succeeds" grep -qx "exit 0" "$TMP/a"
			for run in first again; do
				# shellcheck disable=SC2086
				$BIN $cmd --ranks $ranks --format csv "$dir" > "$TMP/b" 2>&1
				echo "exit $?" >> "$TMP/b"
				same "$cmd --ranks $ranks $dir ($run)" "$TMP/a" "$TMP/b"
			done
		done <<-CMDS
		temporal
		idle --stats
		overlap --by step
		queue
		critical-path
		stragglers
		diagnose --findings
		CMDS
		rm -rf "$TMP/cache" # the next selection writes them again
	done
done

# kept, with the build that wrote them
$BIN temporal -q testdata/ddp_straggler > /dev/null
db=$(ls "$TMP"/cache/*.db)
rows() { sqlite3 "$1" "SELECT count(*) FROM dev_rows" 2>/dev/null; }
check "dev_rows kept in the cache entry" test "$(rows "$db")" -gt 0
$BIN idle --format csv testdata/ddp_straggler > "$TMP/a" 2>&1
# another build's rows (here: half of them, and its name) are not read
sqlite3 "$db" "DELETE FROM dev_rows WHERE rowid % 2 = 0;
	UPDATE info SET value = 'another build' WHERE key = 'dev_rows'"
$BIN idle --format csv testdata/ddp_straggler > "$TMP/b" 2>&1
same "another build's dev_rows are made again" "$TMP/a" "$TMP/b"
check "and kept" test "$(sqlite3 "$db" "SELECT value != 'another build'
	FROM info WHERE key = 'dev_rows'")" = 1

# a user's database: read, never written
$BIN ingest -q testdata/ddp_straggler -o "$TMP/user.db"
sum=$(cksum < "$TMP/user.db")
$BIN idle --format csv "$TMP/user.db" > "$TMP/b" 2>&1
same "a user's database gives the same rows" "$TMP/a" "$TMP/b"
check "a user's database is not written" test "$(cksum < "$TMP/user.db")" = "$sum"
finish
