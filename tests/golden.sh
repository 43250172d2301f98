#!/bin/sh
# Golden CLI tests: each line of tests/golden/cases is "NAME ARGS...";
# ./traceanalyze ARGS must print tests/golden/NAME.out on stdout, exit with
# the code in NAME.rc, and print NAME.err on stderr (paths of the scratch
# directory show as TMP). UPDATE=1 rewrites the expected files.
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-./traceanalyze}
TMP=$(mktemp -d /tmp/ta-golden.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
# µs and … in text (the C locale gets us and ...: checked below)
export LC_ALL=C.UTF-8
pass=0 fail=0

# inputs made on the fly from the committed traces
mkdir -p "$TMP/empty" "$TMP/cut" "$TMP/mixed" "$TMP/twins" "$TMP/rank0_of_2"
# a kernel whose duration is negative (a damaged trace)
mkdir -p "$TMP/negative"
gzip -dc testdata/gpt2_train/rank-0.pt.trace.json.gz | python3 -c "
import json, sys
t = json.load(sys.stdin)
k = [e for e in t['traceEvents'] if e.get('cat') == 'kernel']
k[len(k) // 2]['dur'] = -5
json.dump(t, sys.stdout)" > "$TMP/negative/rank-0.json"
# kernels' launch figures: over 48 KB of shared memory, an occupancy of 0
# is Kineto's "not known" (counted apart), an absent one is neither; a
# small kernel's 0 is real; blocks per SM weighted by time, 0 not known
# an op that starts inside a counted one and ends after it (not nested):
# the counted op ends there, its later launches are not its own (the
# roofline walk once left uncounted ops out and gave them to it); and ops,
# ranges and modules that start and end together: the later in the file
# names a sync (an index ordered by name id once picked the other)
mkdir -p "$TMP/overlap" "$TMP/ties"
python3 -c "
import json
ev = []
def X(cat, name, ts, dur, tid=101, pid=100, args=None):
    ev.append(dict(ph='X', cat=cat, name=name, pid=pid, tid=tid, ts=ts, dur=dur, args=args or {}))
c = [5000]
def launch(ts, kts):
    c[0] += 1
    X('cuda_runtime', 'cudaLaunchKernel', ts, 2, args={'correlation': c[0], 'External id': 1})
    X('kernel', 'ampere_sgemm_128x64_nn', kts, 300, pid=0, tid=7,
      args={'correlation': c[0], 'stream': 7, 'device': 0, 'External id': 1})
props = [{'id': 0, 'name': 'NVIDIA H200', 'totalGlobalMem': 150109880320, 'computeMajor': 9,
          'computeMinor': 0, 'numSms': 132}]
for n in range(1, 4):
    t0 = n * 10000
    X('user_annotation', 'ProfilerStep#%d' % n, t0, 9000)
    for i in range(5):
        t = t0 + 100 + i * 1000
        X('cpu_op', 'aten::mm', t, 100, args={'Input Dims': [[2048, 2048], [2048, 2048]],
                                              'Input type': ['float', 'float'], 'External id': 1})
        X('cpu_op', 'aten::resolve_conj', t + 10, 90.5)
        launch(t + 20, t + 30)
json.dump({'deviceProperties': props, 'traceEvents': ev}, open('$TMP/overlap/rank-0.json', 'w'))
ev = []
X('cpu_op', 'aten::aa', 1, 1); X('user_annotation', 'rng_a', 1, 1)
X('python_function', 'nn.Module: A', 1, 1)
for n in range(1, 4):
    t0 = n * 10000
    X('user_annotation', 'ProfilerStep#%d' % n, t0, 9000)
    for i in range(4):
        t = t0 + 100 + i * 2000
        launch(t, t + 5)
        X('user_annotation', 'rng_z', t + 10, 1500); X('user_annotation', 'rng_a', t + 10, 1500)
        X('python_function', 'nn.Module: Z', t + 10, 1500)
        X('python_function', 'nn.Module: A', t + 10, 1500)
        X('cpu_op', 'aten::zz', t + 20, 1000); X('cpu_op', 'aten::aa', t + 20, 1000)
        X('cuda_runtime', 'cudaDeviceSynchronize', t + 30, 900, args={'correlation': 0})
        launch(t + 950, t + 1200)
json.dump({'deviceProperties': props, 'traceEvents': ev}, open('$TMP/ties/rank-0.json', 'w'))"
mkdir -p "$TMP/launch"
python3 -c "
import json
k = lambda ts, dur, a: {'ph': 'X', 'cat': 'kernel', 'name': 'k', 'pid': 0, 'tid': 7, 'ts': ts, 'dur': dur,
                       'args': dict(a, stream=7, correlation=ts, device=0)}
ev = [k(10, 10, {'shared memory': 65536, 'est. achieved occupancy %': 0, 'blocks per SM': 2.0}),
      k(30, 10, {'shared memory': 65536, 'blocks per SM': 4.0}),
      k(50, 20, {'shared memory': 1024, 'est. achieved occupancy %': 0, 'blocks per SM': 0}),
      k(80, 20, {'shared memory': 1024, 'est. achieved occupancy %': 60, 'blocks per SM': 1.0})]
json.dump({'traceEvents': ev}, open('$TMP/launch/rank-0.json', 'w'))"
# overview --tb-compat's tail rule: step 3 launched 3 kernels against
# step 2's 5 (under 80 %), so the plugin drops it; step 1's kernels end
# after its host range, which the step stretches to
mkdir -p "$TMP/tb_tail"
python3 -c "
import json
ev, c = [], 0
for s, (t0, n) in enumerate(((0, 5), (200, 5), (400, 3)), 1):
    ev.append({'ph': 'X', 'cat': 'user_annotation', 'name': 'ProfilerStep#%d' % s, 'pid': 1, 'tid': 1, 'ts': t0, 'dur': 150})
    for i in range(n):
        c += 1
        ev.append({'ph': 'X', 'cat': 'cuda_runtime', 'name': 'cudaLaunchKernel', 'pid': 1, 'tid': 1,
                   'ts': t0 + 10 + 20 * i, 'dur': 5, 'args': {'correlation': c, 'External id': c}})
        ev.append({'ph': 'X', 'cat': 'kernel', 'name': 'k', 'pid': 0, 'tid': 7, 'ts': t0 + 20 + 30 * i, 'dur': 25,
                   'args': {'correlation': c, 'External id': c, 'stream': 7, 'device': 0}})
json.dump({'traceEvents': ev}, open('$TMP/tb_tail/rank-0.json', 'w'))"
# rank 0 of a two-rank job, rank 1's trace lost
cp testdata/ddp_straggler/rank-0.pt.trace.json.gz "$TMP/rank0_of_2/"
gzip -dc testdata/decode_graph/rank-0.pt.trace.json.gz | head -c 30000 > "$TMP/cut/rank-0.json"
cp testdata/decode_graph/rank-0.pt.trace.json.gz "$TMP/mixed/"
echo "lr: 0.1" > "$TMP/mixed/notes.txt"
# a GPU the table of peaks does not know, and a trace without shapes
mkdir -p "$TMP/strange_gpu" "$TMP/no_shapes"
gzip -dc testdata/roof_resnet/rank-0.pt.trace.json.gz | sed 's/NVIDIA H200/NVIDIA Frobnitz 9000/' > "$TMP/strange_gpu/rank-0.json"
gzip -dc testdata/roof_resnet/rank-0.pt.trace.json.gz | sed 's/"Input Dims"/"Input Dimz"/' > "$TMP/no_shapes/rank-0.json"
echo '{"lr": 0.1}' > "$TMP/mixed/config.json"
cp testdata/decode_graph/rank-0.pt.trace.json.gz "$TMP/twins/a.json.gz"
cp testdata/decode_graph/rank-0.pt.trace.json.gz "$TMP/twins/b.json.gz"
$BIN temporal -q --format csv testdata/train_healthy > "$TMP/old.csv"
sed "1s/window_us/kernel_us/" "$TMP/old.csv" > "$TMP/old_renamed.csv"  # saved before the rename
awk -F, -v OFS=, 'NR == 1 { $5 = $5 ",kernel_us" } NR > 1 { $5 = $5 "," $5 } 1' "$TMP/old.csv" > "$TMP/old_twice.csv"
$BIN idle -q --format csv testdata/train_healthy > "$TMP/old_idle.csv"
$BIN launch -q --format csv testdata/decode_graph > "$TMP/old_launch.csv"
$BIN kernels -q --format csv testdata/copies > "$TMP/old_kernels.csv"
$BIN diagnose --findings -q --format csv testdata/train_healthy > "$TMP/old_findings.csv"
$BIN diagnose --findings --summary -q --format csv testdata/mem_train > "$TMP/old_summary.csv"
$BIN idle -q --format csv testdata/ddp_straggler > "$TMP/idle_2ranks.csv"
$BIN stragglers -q --format csv testdata/ddp_straggler > "$TMP/stragglers.csv"

run_case() {
	name=$1; shift
	dir=tests/golden
	out="$TMP/$name.out" err="$TMP/$name.err"
	# shellcheck disable=SC2086
	eval "$BIN $*" > "$out" 2> "$err"
	rc=$?
	sed -i "s#$TMP#TMP#g" "$out" "$err"
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$out" "$dir/$name.out"; cp "$err" "$dir/$name.err"
		echo "$rc" > "$dir/$name.rc"
		return
	fi
	if [ "$rc" = "$(cat "$dir/$name.rc")" ] && cmp -s "$out" "$dir/$name.out" &&
	    cmp -s "$err" "$dir/$name.err"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL golden $name (exit $rc, want $(cat "$dir/$name.rc"))"
		diff -u "$dir/$name.out" "$out" | head -20
		diff -u "$dir/$name.err" "$err" | head -10
	fi
}

# GOLDEN_ONLY=REGEX: the cases whose line matches it (CI's ThreadSanitizer
# pass: those that read several files at once)
while read -r name args; do
	case "$name" in ''|'#'*) continue ;; esac
	if [ -n "${GOLDEN_ONLY:-}" ] && ! printf '%s %s\n' "$name" "$args" | grep -Eq "$GOLDEN_ONLY"; then
		continue
	fi
	run_case "$name" "$args"
done < tests/golden/cases

# ingest keeps a database that every command accepts: a failed ingest is
# a failure, not a skipped case; without sqlite3 the suite cannot check
command -v sqlite3 >/dev/null || { echo "golden: sqlite3 missing"; exit 1; }
if $BIN ingest -q testdata/train_stalled -o "$TMP/run.db"; then
	run_case db_temporal temporal --format csv "$TMP/run.db"
else
	fail=$((fail + 1)); echo "FAIL golden: ingest -o failed"
fi
if [ "$(sqlite3 "$TMP/run.db" "select count(*) from kernels")" -gt 0 ]; then
	pass=$((pass + 1))
else
	fail=$((fail + 1)); echo "FAIL golden: kernels view is empty"
fi
# the cache is reused: the second run says it used the cached database
# and parses nothing (the database file is not rewritten)
export TRACEANALYZE_CACHE_DIR="$TMP/cache2"
$BIN temporal -v testdata/decode_eager 2>"$TMP/v1" >/dev/null
db=$(sed -n "s/.*parsing 1 files into the cached database '\(.*\)'/\1/p" "$TMP/v1")
m1=$(stat -c %Y.%i "$db" 2>/dev/null)
sleep 1
$BIN temporal -v testdata/decode_eager 2>"$TMP/v2" >/dev/null
m2=$(stat -c %Y.%i "$db" 2>/dev/null)
if [ -n "$db" ] && grep -q "^traceanalyze: using the cached database '$db'$" "$TMP/v2" &&
    [ "$m1" = "$m2" ]; then pass=$((pass + 1)); else
	fail=$((fail + 1)); echo "FAIL golden: cache not reused ($(cat "$TMP/v1" "$TMP/v2"))"; fi

# text for people: no line ends in spaces; µ and … only in a UTF-8 locale
check_text() { # NAME CONDITION
	if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL golden $1"; fi
}
check_text no_trailing_spaces '! grep -l " $" tests/golden/*.out'
check_text c_locale_us 'LC_ALL=C $BIN temporal testdata/copies | grep -q "554.134 us"'
check_text c_locale_dots 'LC_ALL=C $BIN kernels testdata/train_stalled | grep -q "[.][.][.]" &&
	! LC_ALL=C $BIN kernels testdata/train_stalled | grep -q "…"'
check_text dev_stdin 'gzip -dc testdata/copies/rank-0.pt.trace.json.gz | $BIN temporal -q /dev/stdin | grep -q "554.134"'
# --version names the inflater: ISA-L's when linked in, zlib's when asked
check_text version_inflater '$BIN --version | grep -qx "traceanalyze .* (inflate: $(ldd $BIN | grep -q libisal && echo isa-l || echo zlib))" &&
	TA_INFLATE=zlib $BIN --version | grep -q "(inflate: zlib)$"'
# $COLUMNS cuts the names (962 wide with --wide) to fit; kernels' other
# 12 columns take 150 of it
check_text columns_env 'COLUMNS=170 $BIN kernels testdata/train_stalled | python3 -c "import sys; sys.exit(max(len(l.rstrip()) for l in sys.stdin) > 170)"'
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
