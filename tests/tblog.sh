#!/bin/sh
# What torch.profiler.tensorboard_trace_handler writes (parse/tblog.c): a
# log directory of runs, WORKER.SPAN.pt.trace.json.gz files, several
# spans per worker when the schedule repeats. The newest run, each
# worker's last span, ranks from the workers' names without a warning;
# --run and --span pick others; the same as reading the chosen files
# alone.
SUITE=tblog
. "$(dirname "$0")/lib.sh"
A=testdata/train_stalled/rank-0.pt.trace.json.gz
B=testdata/gpt2_train/rank-0.pt.trace.json.gz
C=testdata/roof_train/rank-0.pt.trace.json.gz
L=$TMP/log
mkdir -p "$L/older" "$L/newer" "$TMP/one" "$TMP/two"
cp "$C" "$L/older/host_7.1764700000001.pt.trace.json.gz"
touch -d '1 hour ago' "$L/older/host_7.1764700000001.pt.trace.json.gz"
# two workers, two spans each; span numbers of unequal length sort as numbers
cp "$A" "$L/newer/host_1.999999999999.pt.trace.json.gz"
cp "$B" "$L/newer/host_1.1764700099999.pt.trace.json.gz"
cp "$B" "$L/newer/host_2.999999999999.pt.trace.json.gz"
cp "$A" "$L/newer/host_2.1764700099999.pt.trace.json.gz"
cp "$B" "$TMP/one/rank-0.json.gz"; cp "$A" "$TMP/one/rank-1.json.gz"
cp "$A" "$TMP/two/rank-0.json.gz"; cp "$B" "$TMP/two/rank-1.json.gz"

$BIN temporal --format csv "$L" > "$TMP/log.csv" 2> "$TMP/log.err"
check "a log directory reads" test $? = 0
check "the newest run, said" grep -q "holds 2 runs (newer, older): reading the newest, 'newer'" "$TMP/log.err"
check "the last span, said" grep -q "reading span 2 of each" "$TMP/log.err"
check "ranks from the workers' names, no warning" sh -c "! grep -q 'no distributedInfo' '$TMP/log.err'"
$BIN temporal --format csv "$TMP/one" > "$TMP/one.csv" 2> /dev/null
same "each worker's last span, host_1 rank 0, host_2 rank 1" "$TMP/one.csv" "$TMP/log.csv"
$BIN temporal -q --format csv --span 1 "$L" > "$TMP/s1.csv"
$BIN temporal -q --format csv "$TMP/two" > "$TMP/two.csv"
same "--span 1: the first (by number, not by name)" "$TMP/two.csv" "$TMP/s1.csv"
$BIN temporal -q --format csv --run older "$L" > "$TMP/older.csv"
$BIN temporal -q --format csv "$C" > "$TMP/c.csv"
same "--run older" "$TMP/c.csv" "$TMP/older.csv"
$BIN temporal -q --run nope "$L" 2> "$TMP/nope.err"
check "--run that is no run: exit 3" test $? = 3
check "... naming the runs" grep -q "no run 'nope' (its runs: newer, older)" "$TMP/nope.err"
$BIN temporal -q --span 3 "$L" 2> /dev/null
check "--span past every worker's: exit 3" test $? = 3
$BIN temporal -q --span 0 "$L" 2> /dev/null
check "--span 0: exit 2" test $? = 2
# names that are not the handler's: rank.0 / rank.1 are ranks, not spans
mkdir -p "$TMP/dots"
cp "$A" "$TMP/dots/rank.0.pt.trace.json.gz"; cp "$B" "$TMP/dots/rank.1.pt.trace.json.gz"
$BIN temporal -q --format csv "$TMP/dots" > "$TMP/dots.csv"
check "rank.N names are two ranks" test "$(wc -l < "$TMP/dots.csv")" = 3
finish
