#!/bin/sh
# The roofline's walk (the counted calls and their launches) is kept in a
# cache entry by the first run that walks every rank (main.roof_calls,
# main.roof_launches) and read from there after. The run that keeps it,
# the runs that read it (every rank selection) and --no-cache must print
# the same bytes; a walk another build kept, or one that does not hold
# together (an edited entry), is walked again, never trusted into a crash;
# a run on a selection of ranks keeps none; a user's database is only read.
SUITE=roof_cache
. "$(dirname "$0")/lib.sh"
command -v sqlite3 >/dev/null || { echo "roof_cache: sqlite3 missing"; exit 1; }

for dir in testdata/roof_train testdata/autocast testdata/fsdp2 testdata/tb_gloo; do
	for ranks in all 0 1; do
		[ "$ranks" = 1 ] && [ "$dir" != testdata/fsdp2 ] && continue
		cached_as_fresh "$dir" "$ranks" <<-CMDS
		roofline
		roofline --by step
		roofline --by kernel
		roofline --group-by shape
		diagnose --findings
		CMDS
	done
	rm -rf "$TMP/cache"
done

# from here the entries are read and edited with sqlite3: plain, not
# packed (the runs above read and wrote packed ones)
export TRACEANALYZE_CACHE_COMPRESS=0
rm -rf "$TMP/cache"
d=testdata/roof_train
$BIN roofline --ranks 0 --format csv $d > /dev/null
db=$(ls "$TMP"/cache/*.db)
calls() { sqlite3 "$1" "SELECT count(*) FROM roof_calls" 2>/dev/null; }
check "a walk of a selection of ranks is not kept" test -z "$(calls "$db")"
$BIN roofline --format csv $d > "$TMP/a" 2>&1
check "the walk of every rank is kept" test "$(calls "$db")" -gt 0
check "with its launches" test "$(sqlite3 "$db" "SELECT count(*) FROM roof_launches")" -gt 0
check "as this build's" test "$(sqlite3 "$db" "SELECT count(*) FROM info WHERE key = 'roof_walk'")" = 1
kept() { # the kept walk, every value
	sqlite3 "$1" "SELECT count(*), sum(seq * 7 + op * 3 + gpu_ns + kernel + tf32 + ts % 1000003),
		group_concat(typeof(ts) || length(dims) || typeof(conc), '') FROM roof_calls;
		SELECT count(*), sum(rank * 5 + correlation % 1000003 + call * 11) FROM roof_launches" 2>/dev/null
}
whole=$(kept "$db")

edited() { # NAME SQL: the entry edited so, a run prints what --no-cache does
	sqlite3 "$db" "$2"
	$BIN roofline --format csv $d > "$TMP/b" 2>&1
	echo "exit $?" >> "$TMP/b"
	$BIN roofline --no-cache --format csv $d > "$TMP/a" 2>&1
	echo "exit $?" >> "$TMP/a"
	same "$1: walked again" "$TMP/a" "$TMP/b"
}
# another build's walk (here: half of it, and its name) is not read
edited "another build's walk" "DELETE FROM roof_calls WHERE seq % 2 = 0;
	UPDATE info SET value = 'another build' WHERE key = 'roof_walk'"
check "and kept again" test "$(sqlite3 "$db" "SELECT value != 'another build'
	FROM info WHERE key = 'roof_walk'")" = 1
# what does not hold together, each alone on the kept walk
for sql in "UPDATE roof_calls SET op = -5 WHERE seq = 3" \
	"UPDATE roof_calls SET op = (SELECT max(name_id) + 7 FROM names) WHERE seq = 4" \
	"UPDATE roof_calls SET op = (SELECT name_id FROM names WHERE name = 'ProfilerStep#2') WHERE seq = 5" \
	"UPDATE roof_calls SET gpu_ns = -1 WHERE seq = 6" \
	"UPDATE roof_calls SET ts = 'soon' WHERE seq = 7" \
	"UPDATE roof_calls SET ts = 9223372036854775807 WHERE seq = 7" \
	"UPDATE roof_calls SET dims = x'00ff' WHERE seq = 8" \
	"UPDATE roof_launches SET call = 999999 WHERE rowid = 2" \
	"UPDATE roof_launches SET rank = 7 WHERE rowid = 3" \
	"UPDATE roof_launches SET call = NULL WHERE rowid = 4" \
	"DROP TABLE roof_launches" \
	"ALTER TABLE roof_calls DROP COLUMN conc"; do
	rm -rf "$TMP/cache"
	$BIN roofline -q $d > /dev/null
	db=$(ls "$TMP"/cache/*.db)
	edited "kept walk edited: $sql" "$sql"
	# walked again, and kept again whole: the next run reads it
	check "kept walk edited: $sql: kept again" test "$(kept "$db")" = "$whole"
done

# a user's database is only read: ingest -o keeps no walk
$BIN ingest -q $d -o "$TMP/user.db"
$BIN roofline -q "$TMP/user.db" > /dev/null
check "a user's database keeps no walk" test -z "$(calls "$TMP/user.db")"
finish
