#!/bin/sh
# -j N changes how traces are read, never what comes out. Every command,
# plain and --hta-compat, gives the same bytes with -j 1, 2 and 5 on a
# directory of five ranks (the bundled samples), and on HTA's two-rank
# trace when ../shared exists. Also a directory with a file that is not a
# trace and a damaged one: the same warnings, in the same order.
SUITE=jobs
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/five" "$TMP/odd"
i=0
for d in copies decode_eager decode_graph train_healthy train_stalled; do
	ln -s "$PWD/testdata/$d/rank-0.pt.trace.json.gz" "$TMP/five/rank-$i.json.gz"
	i=$((i + 1))
done
cp testdata/copies/rank-0.pt.trace.json.gz "$TMP/odd/rank-0.json.gz"
echo '{"not": "a trace"}' > "$TMP/odd/notes.json"
gzip -dc testdata/decode_eager/rank-0.pt.trace.json.gz | head -c 300000 \
	> "$TMP/odd/rank-1.json"
cp testdata/train_stalled/rank-0.pt.trace.json.gz "$TMP/odd/rank-2.json.gz"
# distributedInfo after traceEvents, and against the file names: each
# file's rows are written under the rank its name suggests, then moved;
# read together, each move must take only its own file's rows
mkdir "$TMP/swapped"
python3 - "$TMP/swapped" <<'PY'
import gzip, json, sys
for name, src, rank in (("rank-0.json", "train_stalled", 1),
                        ("rank-1.json", "decode_eager", 0)):
    with gzip.open("testdata/%s/rank-0.pt.trace.json.gz" % src, "rt") as f:
        t = json.load(f)
    t.pop("distributedInfo", None)
    t["distributedInfo"] = {"rank": rank, "world_size": 2}  # last key
    with open("%s/%s" % (sys.argv[1], name), "w") as f:
        json.dump(t, f)
PY
for d in train_stalled decode_eager; do
	$BIN temporal -q --no-cache --format csv "testdata/$d" | tail -1 | cut -d, -f2- \
		> "$TMP/$d.want"
done
for j in 1 2; do
	$BIN temporal -q --no-cache -j $j --format csv "$TMP/swapped" > "$TMP/sw.$j"
	grep '^1,' "$TMP/sw.$j" | cut -d, -f2- > "$TMP/sw1"
	grep '^0,' "$TMP/sw.$j" | cut -d, -f2- > "$TMP/sw0"
	same "swapped ranks: rank 1 is train_stalled (-j $j)" "$TMP/train_stalled.want" "$TMP/sw1"
	same "swapped ranks: rank 0 is decode_eager (-j $j)" "$TMP/decode_eager.want" "$TMP/sw0"
done

dirs="testdata/two_ranks $TMP/five $TMP/odd $TMP/swapped"
[ -d ../shared/testdata/hta/trace_filter ] &&
	dirs="$dirs ../shared/testdata/hta/trace_filter"

# JOBS_LIGHT (CI's ThreadSanitizer pass): the commands that stand for the
# rest, since -j changes only how the files are read (every command reads
# them the same way; the analyses after run in one thread)
light=" report temporal diagnose temporal --hta-compat "
for dir in $dirs; do
	while read -r cmd; do
		[ -n "$JOBS_LIGHT" ] && case "$light" in *" $cmd "*) ;; *) continue ;; esac
		for j in 1 2 5; do
			$BIN $cmd --no-cache -j $j --format csv "$dir" \
				> "$TMP/out.$j" 2> "$TMP/err.$j"
			echo "exit $?" >> "$TMP/out.$j"
		done
		for j in 2 5; do
			same "$cmd $(basename "$dir") -j $j" "$TMP/out.1" "$TMP/out.$j"
			same "$cmd $(basename "$dir") -j $j (stderr)" "$TMP/err.1" "$TMP/err.$j"
		done
	done <<-CMDS
	report
	temporal
	idle --stats
	kernels
	kernels --by type
	overlap
	launch
	queue
	membw
	annotations
	annotations --kernels
	ops
	diagnose
	temporal --hta-compat
	kernels --hta-compat
	launch --hta-compat
	CMDS
done
finish
