#!/bin/sh
# Progress: on a terminal (tmux), ingestion leaves a summary line on
# stderr; piped, it prints nothing.
cd "$(dirname "$0")/.." || exit 2
if ! command -v tmux >/dev/null; then
	echo "tty: skipped: tmux not installed"
	exit 0
fi
TMP=$(mktemp -d /tmp/ta-tty.XXXXXX)
S=ta-tty-$$
trap 'tmux kill-session -t $S 2>/dev/null; rm -rf "$TMP"' EXIT
pass=0 fail=0
tmux new-session -d -s $S -x 160 -y 20 \
	"./traceanalyze temporal --no-cache testdata/train_stalled > /dev/null; echo DONE; sleep 30"
i=0
while [ $i -lt 100 ] && ! tmux capture-pane -p -t $S | grep -q DONE; do
	sleep 0.1; i=$((i + 1))
done
if tmux capture-pane -p -t $S | grep -q "traceanalyze: read 1 of 1 files, [0-9]* events"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "FAIL tty: no progress line on a terminal:"; tmux capture-pane -p -t $S
fi
./traceanalyze temporal --no-cache testdata/train_stalled > /dev/null 2> "$TMP/err"
if [ -s "$TMP/err" ]; then
	fail=$((fail + 1)); echo "FAIL tty: progress written to a pipe:"; cat "$TMP/err"
else
	pass=$((pass + 1))
fi
# on a terminal, a long parse shows its bytes and rate while it runs
if command -v script >/dev/null; then
	python3 tools/scale.py testdata/train_stalled/rank-0.pt.trace.json.gz "$TMP/big.json.gz" 12 0
	script -q -c "./traceanalyze temporal --no-cache $TMP/big.json.gz" "$TMP/typescript" > /dev/null
	if grep -q "reading .*big.json.gz (1/1): [0-9]* of [0-9]* MB, [0-9]* MB/s" "$TMP/typescript"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL tty: no bytes and rate while parsing:"; cat -v "$TMP/typescript" | head -5
	fi
fi
# shard by shard (400 ranks, about 2 s here): "stragglers: rank N of
# 400" after a second, wiped at the end (the last one is followed by
# the erase sequence)
if command -v script >/dev/null; then
	python3 tools/ranks.py "$TMP/r400" 400 7 20000 > /dev/null
	./traceanalyze ingest -q -j 2 "$TMP/r400" -o "$TMP/s400/"
	script -q -c "./traceanalyze stragglers -j 2 $TMP/s400 > /dev/null" "$TMP/ts2" > /dev/null
	if grep -q "stragglers: rank [0-9]* of 400" "$TMP/ts2" &&
	   tr '\r' '\n' < "$TMP/ts2" | grep -A1 "stragglers: rank [0-9]* of 400" | tail -1 | grep -q "$(printf '\033')\[K"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL tty: no shard progress, or not wiped:"; tr '\r' '\n' < "$TMP/ts2" | tail -3 | cat -v
	fi
fi
echo "tty: $pass passed, $fail failed"
[ "$fail" = 0 ]
