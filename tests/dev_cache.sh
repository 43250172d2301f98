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
		cached_as_fresh "$dir" "$ranks" <<-CMDS
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

# from here the entries are read and edited with sqlite3: plain, not
# packed (the runs above read and wrote packed ones)
export TRACEANALYZE_CACHE_COMPRESS=0
rm -rf "$TMP/cache"
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

# rows of another shape (an edited entry) are made again, not read
sqlite3 "$db" "ALTER TABLE dev_rows DROP COLUMN kind"
$BIN idle --format csv testdata/ddp_straggler > "$TMP/b" 2>&1
same "dev_rows of another shape are made again" "$TMP/a" "$TMP/b"

# a run killed while writing the entry left its journal: rolled back
sqlite3 "$db" "DROP TABLE dev_rows; DELETE FROM info WHERE key = 'dev_rows'"
sqlite3 "$db" "PRAGMA cache_size = 1; BEGIN; DELETE FROM events;" \
	".shell sleep 60" 2>/dev/null &
holder=$!
i=0
while [ ! -s "$db-journal" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kill -9 $holder 2>/dev/null
wait $holder 2>/dev/null
check "a journal is left (the test's own setup)" test -s "$db-journal"
$BIN idle --format csv testdata/ddp_straggler > "$TMP/b" 2>&1
same "an interrupted write's journal is rolled back" "$TMP/a" "$TMP/b"

# another process writing the entry: no wait, the rows built for the run
check "and its rows kept" test "$(rows "$db")" -gt 0
sqlite3 "$db" "DROP TABLE dev_rows; DELETE FROM info WHERE key = 'dev_rows'"
sqlite3 "$db" "BEGIN IMMEDIATE; INSERT INTO info VALUES ('held', 1);" \
	".shell sleep 60" "ROLLBACK;" 2>/dev/null &
holder=$!
sleep 1
timeout 30 $BIN idle --format csv testdata/ddp_straggler > "$TMP/b" 2>&1
same "an entry another process writes is not waited for" "$TMP/a" "$TMP/b"
kill -9 $holder 2>/dev/null
wait $holder 2>/dev/null

# runs at once on a new entry: each gives the rows (one entry is kept,
# none written over while another reads it)
rm -rf "$TMP/cache"
for i in 1 2 3 4 5 6; do
	$BIN idle --format csv testdata/ddp_straggler > "$TMP/p$i" 2>&1 &
done
wait
for i in 1 2 3 4 5 6; do
	same "run $i of 6 at once on a new entry" "$TMP/a" "$TMP/p$i"
done

# a copy of an entry under another name is a user's database
db=$(ls "$TMP"/cache/*.db)
cp "$db" "$TMP/copy.db"
sqlite3 "$TMP/copy.db" "DROP TABLE IF EXISTS dev_rows; DELETE FROM info WHERE key = 'dev_rows'"
sum=$(cksum < "$TMP/copy.db")
$BIN idle --format csv "$TMP/copy.db" > "$TMP/b" 2>&1
same "a copied entry gives the same rows" "$TMP/a" "$TMP/b"
check "a copied entry is not written" test "$(cksum < "$TMP/copy.db")" = "$sum"

# a user's database: read, never written
$BIN ingest -q testdata/ddp_straggler -o "$TMP/user.db"
sum=$(cksum < "$TMP/user.db")
$BIN idle --format csv "$TMP/user.db" > "$TMP/b" 2>&1
same "a user's database gives the same rows" "$TMP/a" "$TMP/b"
check "a user's database is not written" test "$(cksum < "$TMP/user.db")" = "$sum"

# a cache entry of one file (-j 2 on a directory) keeps its part of a
# cross-rank command the first time one is exported from it; the join
# reads the parts after, with the same table
$BIN stragglers -q -j 1 --no-cache --format csv testdata/ddp_straggler > "$TMP/a" 2>&1
for run in first again; do
	TRACEANALYZE_CACHE_DIR="$TMP/parts" $BIN stragglers -q -j 2 --format csv \
		testdata/ddp_straggler > "$TMP/b" 2>&1
	same "stragglers, an entry per file ($run)" "$TMP/a" "$TMP/b"
done
n=0
for db in "$TMP"/parts/*.db; do
	[ "$(sqlite3 "$db" "select count(*) from info where key = 'part'")" = 1 ] && n=$((n + 1))
done
check "each file's entry keeps its part ($n)" test "$n" = 2
# what the join reads is the kept part: emptied, a rank's collectives go
for db in "$TMP"/parts/*.db; do sqlite3 "$db" "delete from part_coll"; done
TRACEANALYZE_CACHE_DIR="$TMP/parts" $BIN stragglers -q -j 2 --format csv \
	testdata/ddp_straggler > "$TMP/b" 2>&1
check "the kept parts are what the join reads" sh -c "! cmp -s '$TMP/a' '$TMP/b'"

# one file's entry keeps its part from its first command that matches
# collectives (comms), and later single-rank commands read its coll from it
one=$(ls testdata/ddp_straggler/*.json* | head -1)
$BIN comms -q --no-cache --format csv "$one" > "$TMP/a" 2>&1
for run in first again; do
	TRACEANALYZE_CACHE_DIR="$TMP/one" $BIN comms -q --format csv "$one" > "$TMP/b" 2>&1
	same "comms on one file's entry ($run)" "$TMP/a" "$TMP/b"
done
db=$(ls "$TMP"/one/*.db)
check "one file's entry keeps its part after comms" \
	test "$(sqlite3 "$db" "select count(*) from info where key = 'part'")" = 1
sqlite3 "$db" "delete from part_coll"
TRACEANALYZE_CACHE_DIR="$TMP/one" $BIN comms -q --format csv "$one" > "$TMP/b" 2>&1
check "a single-rank command reads the kept coll" sh -c "! cmp -s '$TMP/a' '$TMP/b'"

# whether a kept row has a negative duration (a sweep cannot stream then)
# is kept as a fact by the first command that asks; remade rows drop it
rm -rf "$TMP/neg"
export TRACEANALYZE_CACHE_DIR="$TMP/neg"
$BIN overlap -q --format csv "$one" > /dev/null
db=$(ls "$TMP"/neg/*.db)
fact() { sqlite3 "$db" "SELECT substr(value, instr(value, ':') + 1) FROM info WHERE key = 'dev_negative'"; }
check "overlap keeps the fact: no negative duration" test "$(fact)" = 0
sqlite3 "$db" "UPDATE info SET value = 'another build' WHERE key = 'dev_rows'"
$BIN temporal -q "$one" > /dev/null
check "rows made again drop it" test -z "$(fact)"
# the parser keeps no negative duration (HTA's rounding alone makes one):
# a row edited so is what the fact then says
sqlite3 "$db" "UPDATE dev_rows SET dur = -5 WHERE rowid = (SELECT min(rowid) FROM dev_rows)"
$BIN overlap -q --format csv "$one" > /dev/null
check "the fact: a negative duration" test "$(fact)" = 1
finish
