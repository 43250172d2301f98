#!/bin/sh
# The critical path's tables are kept in a cache entry by the first run
# that walks them (main.path_kept, by a key of the build, the ranks and
# the options) and read from there after. The run that keeps them, the
# runs that read them and --no-cache must print the same bytes; tables
# another build kept, or that are not whole (an edited entry), are walked
# again; --what-if and --trace walk every time; a user's database is only
# read.
SUITE=path_cache
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "path_cache: sqlite3 missing"; exit 1; }

for dir in testdata/train_stalled testdata/ddp_straggler testdata/fsdp2 testdata/tb_gloo; do
	for ranks in all 1; do
		[ "$ranks" = 1 ] && [ "$dir" = testdata/train_stalled ] && continue
		cached_as_fresh "$dir" "$ranks" <<-CMDS
		diagnose
		diagnose --findings
		critical-path
		critical-path --top 3 --step 2
		CMDS
	done
	rm -rf "$TMP/cache"
done

# from here the entries are read and edited with sqlite3: plain, not
# packed (the runs above read and wrote packed ones)
export TRACEANALYZE_CACHE_COMPRESS=0
rm -rf "$TMP/cache"
d=testdata/train_stalled
$BIN diagnose -q $d > /dev/null
db=$(ls "$TMP"/cache/*.db)
rows() { # the keys kept (none: no table)
	n=$(sqlite3 "$db" "SELECT count(*) FROM path_kept" 2>/dev/null)
	echo "${n:-0}"
}
check "diagnose keeps its path" test "$(rows)" = 1
$BIN critical-path --top 3 --format csv $d > "$TMP/top3"
check "critical-path --top 3 keeps its own" test "$(rows)" = 2

# the tables of --top 3 put under --top 5's key: a run that prints three
# items a step read them, where a walk gives five
sqlite3 "$db" "INSERT INTO path_kept SELECT replace(key, char(31) || '3' || char(31),
	char(31) || '5' || char(31)), wire, crc FROM path_kept WHERE key LIKE '%' || char(31) || '3'
	|| char(31) || '%'"
$BIN critical-path --top 5 --format csv $d > "$TMP/top5"
same "a kept path is read, not walked again" "$TMP/top3" "$TMP/top5"
$BIN critical-path --top 5 --no-cache --format csv $d > "$TMP/walked"
check "(a walk gives more items)" test "$(wc -l < "$TMP/walked")" -gt "$(wc -l < "$TMP/top3")"

edited() { # NAME SQL: the entry edited so, a run prints what --no-cache does
	[ -z "$2" ] || sqlite3 "$db" "$2"
	: > "$TMP/a"
	: > "$TMP/b"
	for top in "" "--top 5"; do   # the path's table, then its items
		# shellcheck disable=SC2086
		$BIN critical-path $top --format csv $d >> "$TMP/b" 2>&1
		echo "exit $?" >> "$TMP/b"
		# shellcheck disable=SC2086
		$BIN critical-path $top --no-cache --format csv $d >> "$TMP/a" 2>&1
		echo "exit $?" >> "$TMP/a"
	done
	same "$1: walked again" "$TMP/a" "$TMP/b"
}
$BIN critical-path --format csv $d > /dev/null
$BIN critical-path --top 5 --format csv $d > /dev/null
whole() { sqlite3 "$db" "SELECT count(*) FROM path_kept WHERE length(wire) > 100"; }
n=$(whole)
edited "tables cut short" "UPDATE path_kept SET wire = substr(wire, 1, length(wire) - 9)"
edited "the items cut short" "UPDATE path_kept SET wire = substr(wire, 1, length(wire) * 3 / 4)"
# the values edited, the CRC made again (tests/path_wire.py): what the
# tables say must still be what a walk can give (helper-48)
rewired() { # NAME EDIT
	python3 tests/path_wire.py "$db" "$2"
	edited "$1" ""
}
rewired "a letter of a name changed, the CRC not made again" name
rewired "cut short, its CRC made again" cut
rewired "a rank the run did not ask for" rank99
rewired "parts that do not add up to the path" part
check "and kept whole again" test "$(whole)" = "$n"
edited "a byte more" "UPDATE path_kept SET wire = wire || x'00'"
edited "not a blob" "UPDATE path_kept SET wire = 'text'"
edited "nothing" "UPDATE path_kept SET wire = NULL"
edited "another build's tables" "UPDATE path_kept SET key = 'another build' ||
	substr(key, instr(key, char(31)))"
check "and theirs dropped" test "$(sqlite3 "$db" "SELECT count(*) FROM path_kept
	WHERE key LIKE 'another build%'")" = 0
edited "a table of another shape" "DROP TABLE path_kept; CREATE TABLE path_kept (key)"

# --what-if and --trace walk every time: nothing kept for them
rm -rf "$TMP/cache"
$BIN critical-path --what-if 'kernel:*gemm*=0.5' $d > /dev/null
$BIN critical-path --trace "$TMP/marked.json" $d > /dev/null 2>&1
db=$(ls "$TMP"/cache/*.db)
check "--what-if and --trace keep nothing" test "$(rows)" = 0

# at most 8 keys, the oldest going first
for n in 1 2 3 4 5 6 7 8 9 10; do
	$BIN critical-path --top $n $d > /dev/null
done
check "8 keys at most" test "$(rows)" = 8

# a user's database is only read
$BIN ingest -q -o "$TMP/user.db" $d
$BIN diagnose -q "$TMP/user.db" > /dev/null
check "a user's database gets no kept path" test -z "$(sqlite3 "$TMP/user.db" \
	"SELECT name FROM sqlite_master WHERE name = 'path_kept'")"

finish
