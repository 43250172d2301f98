#!/bin/sh
# Shards (ingest FILE... -o DIR/): written by separate processes at once,
# read as a directory, every command's output byte for byte the one from
# the traces themselves; writers killed midway leave nothing that is read.
SUITE=shards
. "$(dirname "$0")/lib.sh"

# every command that reads one PATH of traces (the registry says which)
cmds=$($BIN --list-commands | awk -F'\t' '$3 == 1 { print $1 }' | tr '\n' ' ')
case " $cmds " in *" temporal "*" stragglers "*) ;; *) echo "FAIL $SUITE: --list-commands: '$cmds'"; exit 1 ;; esac
# every sample with traces (snapshots alone are not traces)
for s in $(cd testdata && ls -d */ | tr -d /); do
	ls testdata/$s/*.json.gz > /dev/null 2>&1 || continue
	# a worker profiled in two spans (a repeating schedule) is one rank
	# twice, not a job of two: its files are not shards of one job
	case $s in tb_cnn|vit_item) continue ;; esac
	# every command on every job of several ranks, and on one-rank
	# samples that stand for the rest (memory, the roofline, CUDA graphs,
	# nn.Module frames, a stalled run): the whole sweep on all of them
	# took CI past its 30 minutes
	if [ "$(ls testdata/$s/*.json.gz | wc -l)" -lt 2 ]; then
		case " train_stalled mem_leak roof_formulas decode_graph cnn_stack " in
		*" $s "*) ;;
		*) continue ;;
		esac
	fi
	d="$TMP/$s"
	# one process per file, four at once
	ls testdata/$s/*.json.gz | xargs -P 4 -I{} $BIN ingest -q {} -o "$d/"
	cksum "$d"/*.tadb > "$TMP/shard_sums"
	# CSV (the rows) and text (what is said of them, from the parts that
	# travel beside them); JSON is the CSV's rows written otherwise
	# (tests/golden has it), and a cache entry holds rows, not formats
	for c in $cmds; do
		for f in csv text; do
			$BIN $c -q -j 1 --format $f testdata/$s > "$TMP/a" 2>&1
			$BIN $c -q --format $f "$d" > "$TMP/b" 2>&1
			same "$s: $c --format $f from shards" "$TMP/a" "$TMP/b"
			[ $f = csv ] || continue
			# -j 4: the cache keeps an entry per file (merged for what
			# reads across ranks)
			TRACEANALYZE_CACHE_DIR="$TMP/cache4" $BIN $c -q -j 4 --format $f \
				testdata/$s > "$TMP/b" 2>&1
			same "$s: $c --format $f, a cache entry per file" "$TMP/a" "$TMP/b"
		done
	done
	# the verdicts without the path, and the findings: shard by shard
	for f in csv text; do
		for o in --no-path --findings --findings,--summary; do
			o=$(echo $o | tr , ' ')
			# shellcheck disable=SC2086
			$BIN diagnose $o -q -j 1 --format $f testdata/$s > "$TMP/a" 2>&1
			# shellcheck disable=SC2086
			$BIN diagnose $o -q --format $f "$d" > "$TMP/b" 2>&1
			same "$s: diagnose $o --format $f from shards" "$TMP/a" "$TMP/b"
		done
	done
	# options that need the job's start (series), or a sort over all
	# ranks (--by-op), or each rank's own step (ops --step), or every
	# rank at once (the plugin's distributed view)
	for c in "membw --series" "queue --series" "annotations --kernels" \
		"launch --by-op" "ops --step 2 --kernels" "kernels --sequences" \
		"kernels --sequences --top 0 --min-len 1" "kernels --sequences --op aten" \
		"overlap --by step" "kernels --by op" "comms --by step --tb-compat"; do
		for f in csv text; do
			# shellcheck disable=SC2086
			$BIN $c -q -j 1 --format $f testdata/$s > "$TMP/a" 2>&1
			# shellcheck disable=SC2086
			$BIN $c -q --format $f "$d" > "$TMP/b" 2>&1
			same "$s: $c --format $f from shards" "$TMP/a" "$TMP/b"
		done
	done
	for c in temporal idle kernels overlap queue; do
		$BIN $c -q --hta-compat --format csv testdata/$s > "$TMP/a" 2>&1
		$BIN $c -q --hta-compat --format csv "$d" > "$TMP/b" 2>&1
		same "$s: $c --hta-compat from shards" "$TMP/a" "$TMP/b"
	done
	# a user's shards are read, never written: every index a command
	# reads is there when ingest is done (ops, diagnose and memory once
	# added theirs, and a run killed then left a journal beside them)
	cksum "$d"/*.tadb > "$TMP/sums_after"
	same "$s: the shards as ingest wrote them" "$TMP/shard_sums" "$TMP/sums_after"
	check "$s: nothing else in the shards' directory: $(ls "$d" | tr '\n' ' ')" \
		test -z "$(ls "$d" | grep -v '\.tadb$')"
done
# a gate's count of ranks with none of what the command reads adds up
# over the shards (each counts its own ranks): neither of two_ranks' has
# nn.Module frames (shards said 1 rank, one database 2)
for j in 1 2; do
	$BIN modules -q -j $j --fail-if 'calls < 0' "$TMP/two_ranks" > /dev/null 2> "$TMP/e"
	check "modules -j $j from shards: both ranks without module frames counted" \
		grep -q "gate tripped: 2 ranks of the job" "$TMP/e"
done
$BIN memory -q --format csv testdata/mem_leak > "$TMP/a"
$BIN memory -q --format csv "$TMP/mem_leak" > "$TMP/b"
same "memory from shards" "$TMP/a" "$TMP/b"
$BIN diff -q --format csv testdata/train_healthy "$TMP/train_stalled" > "$TMP/b"
$BIN diff -q --format csv testdata/train_healthy testdata/train_stalled > "$TMP/a"
same "diff with a side of shards" "$TMP/a" "$TMP/b"

# ingest -j 4 DIR -o SHARDS/: a process per file, four at once
$BIN ingest -q -j 4 testdata/fsdp2 -o "$TMP/fsdp2_j/"
check "ingest -j 4: a shard per file" test "$(ls "$TMP/fsdp2_j" | grep -c '\.tadb$')" = "$(ls testdata/fsdp2/*.json.gz | wc -l)"
for c in temporal stragglers; do
	$BIN $c -q --format csv testdata/fsdp2 > "$TMP/a" 2>&1
	$BIN $c -q --format csv "$TMP/fsdp2_j" > "$TMP/b" 2>&1
	same "ingest -j 4: $c from its shards" "$TMP/a" "$TMP/b"
done
# per-rank commands read the shards one by one (no merged database in
# the cache), in child processes with -j, in this one with -j 1: the same
python3 tools/ranks.py "$TMP/r6src" 6 2 20000 > /dev/null
$BIN ingest -q -j 3 "$TMP/r6src" -o "$TMP/r6/"
rm -rf "$TRACEANALYZE_CACHE_DIR"
for c in temporal idle "idle --stats" membw steps ops queue "queue --blocked-at 2" \
	launch "launch --summary" annotations "annotations --gpu"; do
	for j in 1 4; do
		# shellcheck disable=SC2086
		$BIN $c -q -j $j --format csv "$TMP/r6src" > "$TMP/a" 2>&1
		# shellcheck disable=SC2086
		$BIN $c -q -j $j --no-cache --format csv "$TMP/r6" > "$TMP/b" 2>&1
		same "$c -j $j shard by shard" "$TMP/a" "$TMP/b"
	done
done
# --no-cache -j 2: each file a shard in a temporary directory, removed
mkdir "$TMP/td"
TMPDIR="$TMP/td" $BIN temporal -q --no-cache -j 2 --format csv "$TMP/r6src" > "$TMP/b" 2>&1
$BIN temporal -q --no-cache -j 1 --format csv "$TMP/r6src" > "$TMP/a" 2>&1
same "--no-cache -j 2: shards in a temporary directory, the same table" "$TMP/a" "$TMP/b"
check "... and nothing left in TMPDIR" test "$(ls -A "$TMP/td" | wc -l)" = 0

# interrupted (SIGTERM, SIGHUP) at any moment: no temporary shards or
# gathered collectives left in TMPDIR, no child process left running
mkdir -p "$TMP/big" "$TMP/td2"
for r in 0 1; do
	python3 tools/scale.py testdata/train_stalled/rank-0.pt.trace.json.gz \
		"$TMP/big/rank-$r.json.gz" 12 $r
done
for round in 1 2 3 4 5 6; do
	for c in stragglers temporal; do
		sig=TERM; [ $((round % 2)) = 0 ] && sig=HUP
		TMPDIR="$TMP/td2" $BIN $c -q --no-cache -j 2 "$TMP/big" > /dev/null 2>&1 &
		pid=$!
		sleep 0.$((round * 15))
		kill -$sig $pid 2>/dev/null
		{ wait $pid; } 2> /dev/null # not "Terminated": it is what this test does
		sleep 0.2
		check "$c killed with SIG$sig after 0.$((round * 15)) s: TMPDIR empty" test "$(ls -A "$TMP/td2" | wc -l)" = 0
		check "... and no child left" test "$(pgrep -f -c "$TMP/big" || true)" = 0
	done
done

# many shards, few file descriptors: each child's table is taken as it
# comes (two files each were once kept open to the end, and 40 shards
# under 'ulimit -n 48' fell back to merging)
python3 tools/ranks.py "$TMP/r40src" 40 7 20000 > /dev/null
(ulimit -n 32; $BIN ingest -q -j 4 "$TMP/r40src" -o "$TMP/r40/")
check "40 files, ingest -j 4 under ulimit -n 32: 40 shards" test "$(ls "$TMP/r40" | grep -c '\.tadb$')" = 40
rm -rf "$TRACEANALYZE_CACHE_DIR"
(ulimit -n 48; $BIN temporal -q -j 4 --format csv "$TMP/r40") > "$TMP/b" 2>&1
$BIN temporal -q -j 1 --no-cache --format csv "$TMP/r40src" > "$TMP/a" 2>&1
same "40 shards under ulimit -n 48: the same table" "$TMP/a" "$TMP/b"
check "... shard by shard, nothing merged" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 0
rm -rf "$TRACEANALYZE_CACHE_DIR"
$BIN temporal -q "$TMP/r6" > /dev/null
check "temporal on shards: nothing merged into the cache" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 0
$BIN stragglers -q "$TMP/r6" > /dev/null
$BIN comms -q "$TMP/r6" > /dev/null
$BIN overlap -q "$TMP/r6" > /dev/null
for c in "kernels --by type" kernels report queue "queue --blocked-at 2" launch \
	"launch --summary" annotations "annotations --gpu" "diagnose --no-path --format csv" \
	critical-path "critical-path --top 5" diagnose "diagnose --findings" \
	"membw --series" "queue --series" "annotations --kernels" "launch --by-op" \
	"kernels --sequences"; do
	# shellcheck disable=SC2086
	$BIN $c -q "$TMP/r6" > /dev/null
done
check "stragglers, overlap, kernels (--sequences too), report, queue, launch, annotations, critical-path, diagnose, series on shards: nothing merged" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 0
$BIN kernels --sequences --hta-compat -q "$TMP/r6" > /dev/null
check "... kernels --sequences --hta-compat: merged (HTA's reads rank 0's call graph)" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 1

# stragglers: every shard's collectives first, then shard by shard; the
# same table as one database, with -j 1 (here) and -j 4 (children)
mkdir -p "$TMP/td"
for j in 1 4; do
	$BIN diagnose --no-path -j $j --no-cache --format csv "$TMP/r6src" > "$TMP/a" 2>&1
	TMPDIR="$TMP/td" $BIN diagnose --no-path -j $j --format csv "$TMP/r6" > "$TMP/b" 2>&1
	same "diagnose --no-path -j $j --format csv shard by shard" "$TMP/a" "$TMP/b"
	for c in stragglers comms overlap "kernels --by type" kernels report; do
		for f in csv text; do
			# shellcheck disable=SC2086
			$BIN $c -j $j --no-cache --format $f "$TMP/r6src" > "$TMP/a" 2>&1
			# shellcheck disable=SC2086
			TMPDIR="$TMP/td" $BIN $c -j $j --format $f "$TMP/r6" > "$TMP/b" 2>&1
			same "$c -j $j --format $f shard by shard" "$TMP/a" "$TMP/b"
		done
	done
done
check "... and the gathered collectives are gone from TMPDIR" test "$(ls -A "$TMP/td" | wc -l)" = 0

# critical-path on shards: each shard walks its own steps; a path that
# reaches a late member in another shard goes on there in the next round.
# A different rank late at every collective: paths hop from rank to rank
# (up to four times a step) and come back to their own
python3 tools/ranks.py "$TMP/rotsrc" 6 -1 20000 3 4 > /dev/null
$BIN ingest -q -j 3 "$TMP/rotsrc" -o "$TMP/rot/"
$BIN critical-path -q -j 1 --no-cache --top 50 --format csv "$TMP/rotsrc" > "$TMP/a"
check "rotating stragglers: paths run through other ranks" grep -q ",rank 3: between kernels," "$TMP/a"
check "... and come back to their own" grep -q "^0,1,gap,before the first kernel," "$TMP/a"
for j in 1 4; do
	for o in "" "--top 7" "--step 2" "--what-if kernel:gemm=0.5" "--what-if gap:*=0"; do
		for f in csv json text; do
			# shellcheck disable=SC2086
			$BIN critical-path -j $j --no-cache $o --format $f "$TMP/rotsrc" > "$TMP/a" 2>&1
			# shellcheck disable=SC2086
			TMPDIR="$TMP/td" $BIN critical-path -j $j $o --format $f "$TMP/rot" > "$TMP/b" 2>&1
			same "critical-path -j $j $o --format $f shard by shard" "$TMP/a" "$TMP/b"
		done
	done
	# diagnose's verdicts, checked by the path walked the same way
	for f in csv json; do
		$BIN diagnose -j $j --no-cache --format $f "$TMP/rotsrc" > "$TMP/a" 2>&1
		TMPDIR="$TMP/td" $BIN diagnose -j $j --format $f "$TMP/rot" > "$TMP/b" 2>&1
		same "diagnose -j $j --format $f shard by shard, path and all" "$TMP/a" "$TMP/b"
	done
	# the text's summary and --findings: every shard's findings, named
	for o in "" --findings; do
		# shellcheck disable=SC2086
		$BIN diagnose -j $j --no-cache $o "$TMP/rotsrc" > "$TMP/a" 2>&1
		# shellcheck disable=SC2086
		TMPDIR="$TMP/td" $BIN diagnose -j $j $o "$TMP/rot" > "$TMP/b" 2>&1
		same "diagnose -j $j $o (text) shard by shard" "$TMP/a" "$TMP/b"
	done
done
# two one-rank samples as ranks 0 and 1 of a job: diagnose --findings
# (CSV) on the traces in $TMP/a, on their shards in $TMP/b
pair() {
	mkdir -p "$TMP/$1"
	python3 tools/scale.py testdata/"$2"/*.json.gz "$TMP/$1/rank-0.json.gz" 1 0
	python3 tools/scale.py testdata/"$3"/*.json.gz "$TMP/$1/rank-1.json.gz" 1 1
	$BIN ingest -q -j 2 "$TMP/$1" -o "$TMP/$1_sh/"
	$BIN diagnose --findings -q -j 1 --no-cache --format csv "$TMP/$1" > "$TMP/a"
	$BIN diagnose --findings -q --no-cache --format csv "$TMP/$1_sh" > "$TMP/b"
}
# advice weighs what the whole job uses: a rank with CUDA graphs beside
# one without (each shard's traits are gathered with its collectives)
pair mix decode_graph decode_eager
check "mixed ranks: rank 1's advice knows the job uses CUDA graphs" \
	grep -q "^1,.*although the run uses CUDA graphs" "$TMP/a"
same "... and says so from the shards" "$TMP/a" "$TMP/b"
# memory's findings come after every rank's others, as one run says them
pair mm mem_leak mem_train
check "two ranks with [memory] events: memory's findings last" \
	sh -c "tail -1 '$TMP/a' | grep -q '^1,,memory_peak'"
same "... from the shards too" "$TMP/a" "$TMP/b"
# memory's sentences (text) name every rank's leak and peak, not the
# first shard's alone
$BIN memory -q -j 1 --no-cache "$TMP/mm" > "$TMP/a"
check "memory, text: both ranks' peaks said" test "$(grep -c ': peak ' "$TMP/a")" = 2
$BIN memory -q --no-cache "$TMP/mm_sh" > "$TMP/b"
same "... from the shards too" "$TMP/a" "$TMP/b"
rm -rf "$TRACEANALYZE_CACHE_DIR"
$BIN critical-path -v "$TMP/rot" 2> "$TMP/v" > /dev/null
check "critical-path on rotating stragglers: five rounds" grep -q "critical path: 5 rounds" "$TMP/v"
check "... nothing merged" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 0
check "... and nothing left in TMPDIR" test "$(ls -A "$TMP/td" | wc -l)" = 0
# --trace rewrites one rank's file, --hta-compat draws HTA's graph: merged
$BIN critical-path -q --hta-compat "$TMP/rot" > /dev/null
check "critical-path --hta-compat: merged" test "$(ls "$TRACEANALYZE_CACHE_DIR" 2>/dev/null | grep -c '\.db$')" = 1
$BIN stragglers -j 4 "$TMP/r6" 2> "$TMP/b" > /dev/null
check "... which the synthetic ranks have" grep -q "matched collectives" "$TMP/b"

# a cache entry per file: one rank file changed, that file alone is
# parsed again for what reads one rank at a time
export TRACEANALYZE_CACHE_DIR="$TMP/cache5"
cp -r "$TMP/r6src" "$TMP/r6c"
$BIN temporal -q -j 4 "$TMP/r6c" > /dev/null
$BIN temporal -q -j 4 "$TMP/r6c" > /dev/null
check "-j 4, temporal twice: the six entries, nothing merged" test "$(ls "$TMP/cache5" | grep -c '\.db$')" = 6
$BIN stragglers -q -j 4 "$TMP/r6c" > "$TMP/a"
check "-j 4: stragglers reads the same six entries" test "$(ls "$TMP/cache5" | grep -c '\.db$')" = 6
sleep 1; touch "$TMP/r6c/rank-3.json.gz"
$BIN temporal -v -j 4 "$TMP/r6c" 2> "$TMP/v" > /dev/null
check "one file touched: temporal parses it alone" grep -q "parsing 1 of 6 files" "$TMP/v"
sleep 1; touch "$TMP/r6c/rank-4.json.gz"
$BIN stragglers -v -j 4 "$TMP/r6c" > "$TMP/b" 2> "$TMP/v"
check "another touched: stragglers parses it alone" grep -q "parsing 1 of 6 files" "$TMP/v"
same "... and says the same" "$TMP/a" "$TMP/b"
check "the stale entries are gone" test "$(ls "$TMP/cache5" | grep -c '\.db$')" = 6
export TRACEANALYZE_CACHE_DIR="$TMP/cache"

# a directory with a file that is no trace among the ranks: with an entry
# per file (-j 4) the same warnings, once, and the same table as one
# database (-j 1)
mkdir "$TMP/mixed"
cp testdata/ddp_straggler/*.json.gz "$TMP/mixed/"
echo '{"lr": 0.1}' > "$TMP/mixed/config.json"
echo 'lr: 0.1' > "$TMP/mixed/notes.txt"
for c in temporal stragglers; do
	TRACEANALYZE_CACHE_DIR="$TMP/c6" $BIN $c -j 1 --format csv "$TMP/mixed" > "$TMP/a" 2>&1
	TRACEANALYZE_CACHE_DIR="$TMP/c7" $BIN $c -j 4 --format csv "$TMP/mixed" > "$TMP/b" 2>&1
	same "a file that is no trace, $c: -j 4 says what -j 1 says" "$TMP/a" "$TMP/b"
done

# a second shard of one rank is an error naming it
cp "$TMP/fsdp2/rank-0.pt.trace.tadb" "$TMP/fsdp2/again.tadb"
$BIN temporal -q "$TMP/fsdp2" > /dev/null 2> "$TMP/err"
check "two shards of one rank: exit 3, named" test $? = 3
check "... the message says so" grep -q "a second shard of rank 0" "$TMP/err"
rm "$TMP/fsdp2/again.tadb"

# ingest -o keeps in each shard the model's device rows and its part of
# a cross-rank command (#37): the join reads the parts (no process a
# shard), and the table is the same; a part another build made is not read
d="$TMP/part"
ls testdata/ddp_straggler/*.json.gz | xargs -P 2 -I{} $BIN ingest -q {} -o "$d/"
for db in "$d"/*.tadb; do
	check "ingest -o: $db keeps dev_rows and its part" test "$(sqlite3 "$db" \
		"select count(*) from info where key in ('dev_rows', 'part')")" = 2
done
for c in comms stragglers; do
	$BIN $c -q --format csv testdata/ddp_straggler > "$TMP/a"
	$BIN $c -q --format csv "$d" > "$TMP/b"
	same "$c from the shards' kept parts" "$TMP/a" "$TMP/b"
done
# what the join reads is the part: emptied, the rank's collectives go
sqlite3 "$d/rank-1.pt.trace.tadb" "delete from part_coll"
$BIN stragglers -q --format csv "$d" > "$TMP/b" 2> /dev/null
check "an emptied part is what the join reads" sh -c "! cmp -s '$TMP/a' '$TMP/b'"
# under another build's id it is made again, as without it
sqlite3 "$d/rank-1.pt.trace.tadb" "update info set value = 'x' where key = 'part'"
$BIN stragglers -q --format csv "$d" > "$TMP/b"
same "another build's part is made again" "$TMP/a" "$TMP/b"
# --no-cache: no note of the check in the cache
TRACEANALYZE_CACHE_DIR="$TMP/nc" $BIN ingest -q --no-cache \
	testdata/ddp_straggler/rank-1.pt.trace.json.gz -o "$TMP/nc_shards/"
check "ingest -o --no-cache notes nothing in the cache" test ! -e "$TMP/nc/checked"

# a shard damaged in the middle (a page of its events overwritten) is
# the input's fault wherever it is found: exit 3 naming it, never 4. The
# check that passed when ingest wrote it (noted in the cache, not racy
# after two seconds) does not hold for the file changed since.
mkdir -p "$TMP/dmg"
ls testdata/ddp_straggler/*.json.gz | xargs -P 2 -I{} $BIN ingest -q {} -o "$TMP/dmg/"
check "ingest -o notes its shards as checked" test "$(ls "$TMP/cache/checked" | wc -l)" -ge 2
sleep 2
$BIN temporal -q "$TMP/dmg" > /dev/null
check "whole shards noted as checked: read" test $? = 0
python3 -c "import sys; f = open(sys.argv[1], 'r+b'); f.seek(4 * 65536); f.write(bytes(range(256)) * 64)" \
	"$TMP/dmg/rank-1.pt.trace.tadb"
for c in temporal diagnose stragglers; do
	$BIN $c -q "$TMP/dmg" > /dev/null 2> "$TMP/err"
	rc=$?
	check "a damaged shard: $c exits 3 (got $rc)" test $rc = 3
	check "... naming it" grep -q "rank-1.pt.trace.tadb': damaged database" "$TMP/err"
done

# the note is by what stat says, not by name: a shard edited since its
# check passed (more than two seconds after it was written) is checked
# again, and an event moved to a rank the shard is not of is found
sqlite3 "$TMP/part/rank-0.pt.trace.tadb" "update events set rank = 7 where rowid = 5"
$BIN temporal -q "$TMP/part" > /dev/null 2> "$TMP/err"
check "a shard edited since its check passed: exit 3" test $? = 3
check "... checked again" grep -q "events of rank '7' in the shard of rank 0" "$TMP/err"

# a note is of the kind of check that passed: a database of two ranks,
# checked as a database, is no shard (exit 3 when it sits among shards)
mkdir -p "$TMP/kind"
$BIN ingest -q testdata/ddp_straggler -o "$TMP/kind/rank-0.pt.trace.tadb"
cp "$TMP/part/rank-1.pt.trace.tadb" "$TMP/kind/"
sleep 2
$BIN kernels -q "$TMP/kind/rank-0.pt.trace.tadb" > /dev/null
$BIN stragglers -q "$TMP/kind" > /dev/null 2> "$TMP/err"
check "a database noted as checked is still no shard: exit 3" test $? = 3
check "... saying why" grep -q "a shard holds one trace file, not 2" "$TMP/err"

# a shard's kept GPU rows speak for its own rank only: rows of a rank
# with no shard make them rows to build again, not rows of rank 7
d="$TMP/dev7"
ls testdata/ddp_straggler/*.json.gz | xargs -P 2 -I{} $BIN ingest -q {} -o "$d/"
check "rows of rank 7 added to a shard's dev_rows" sqlite3 "$d/rank-0.pt.trace.tadb" \
	"insert into dev_rows select 7, idx, name, ts, dur,
	stream, correlation, gbps, kind, idle_kernel, launch_ts, ord, pid, tid,
	blocks_per_sm, occupancy, shared_mem, cut from dev_rows"
for c in idle kernels; do
	$BIN $c -q --format csv testdata/ddp_straggler > "$TMP/a"
	$BIN $c -q --format csv "$d" > "$TMP/b"
	same "$c: another rank's rows in a shard's dev_rows are not read" "$TMP/a" "$TMP/b"
done

# writers killed with -9 midway, 20 times, in random order: only whole
# shards are ever read, and writing again makes the job whole
k=0
while [ $k -lt 20 ]; do
	d="$TMP/kill$k"
	for f in testdata/fsdp2/*.json.gz testdata/ddp_straggler/rank-1.pt.trace.json.gz; do
		$BIN ingest -q "$f" -o "$d/" & echo $! >> "$TMP/pids$k"
	done
	sleep 0.0$((k % 5))
	for p in $(shuf -n 2 "$TMP/pids$k"); do kill -9 "$p" 2>/dev/null; done
	{ wait; } 2> /dev/null
	bad=0
	for db in "$d"/*.tadb; do
		[ -e "$db" ] || continue
		[ "$(sqlite3 "$db" 'pragma integrity_check')" = ok ] || bad=$((bad + 1))
		sqlite3 "$db" "select value from info where key = 'schema_version'" | grep -q . ||
			bad=$((bad + 1))
	done
	check "kill -9 round $k: every shard there is whole" test "$bad" = 0
	if ls "$d"/*.tadb > /dev/null 2>&1; then
		$BIN temporal -q --format csv "$d" > /dev/null 2>&1
		rc=$?
		check "kill -9 round $k: reading what is there works (exit $rc)" test "$rc" = 0 -o "$rc" = 3
	fi
	k=$((k + 1))
done
d="$TMP/kill0"
rm -f "$d"/*.tadb
ls testdata/fsdp2/*.json.gz | xargs -P 2 -I{} $BIN ingest -q {} -o "$d/"
$BIN stragglers -q --format csv testdata/fsdp2 > "$TMP/a"
$BIN stragglers -q --format csv "$d" > "$TMP/b"
same "written again: whole" "$TMP/a" "$TMP/b"
# what is said on stderr, shard by shard as in one database: a shard's
# count of its own rank's things is added up, not said once (helper-63:
# roofline said "10 of 10 calls" on shards, "20 of 20" in one database)
for s in testdata/ddp_dataload testdata/fsdp2 ../shared/testdata/hta/trace_filter; do
	[ -d "$s" ] || continue
	for c in roofline diagnose overlap stragglers critical-path ops; do
		$BIN $c -j 1 --no-cache "$s" > /dev/null 2> "$TMP/a"
		TRACEANALYZE_CACHE_DIR="$TMP/cache_said" $BIN $c -j 4 "$s" > /dev/null 2> "$TMP/b"
		same "$s: $c's warnings, -j 4 as -j 1" "$TMP/a" "$TMP/b"
	done
done
finish
