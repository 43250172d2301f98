#!/bin/sh
# report --html in a real browser (headless Chromium, Debian's chromium):
# the page loads with no console error and nothing fetched, --dump-dom has
# every section with the numbers the CSV of each command gives, and a
# screenshot of each sample is kept in tests/html-artifacts/ (not
# committed). A 1024-rank job stays under 2 MB and renders.
SUITE=html
. "$(dirname "$0")/lib.sh"
BIN=${BIN:-./traceanalyze}
BROWSER=$(command -v chromium || command -v chromium-browser)
if [ -z "$BROWSER" ]; then
	echo "html: skipped: chromium is not installed (tools/setup.sh installs it)"
	exit 0
fi
ART=tests/html-artifacts
mkdir -p "$ART"
ok() { check "$@"; }
no() { # NAME COMMAND...: passes when the command fails (finds nothing)
	what=$1; shift
	if "$@" > /dev/null; then
		fail=$((fail + 1)); echo "FAIL $SUITE: $what"
	else
		pass=$((pass + 1))
	fi
}
# no name resolves: a fetch could not succeed, and would say so
browse() {
	timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu \
		--host-resolver-rules="MAP * ~NOTFOUND" --enable-logging=stderr --v=0 "$@"
}

# bounds PAGE WIDTH: the page in an iframe WIDTH px wide; tests/html_bounds.js
# prints its height and anything drawn outside its figure or the page
bounds() {
	sed '/<\/body>/e cat tests/html_bounds.js' "$1" > "$TMP/bounds.html"
	printf '<!DOCTYPE html><html><body style="margin:0"><iframe src="bounds.html" width="%s" height="900" style="border:0"></iframe></body></html>' "$2" > "$TMP/frame.html"
	browse --allow-file-access-from-files --virtual-time-budget=5000 --window-size=1000,900 \
		--dump-dom "file://$TMP/frame.html" 2> /dev/null |
		sed -n '/<pre id="bounds">/,/<\/pre>/p' | sed 's/<[^>]*>//g'
}

check_page() { # NAME DIR
	pg=$1 dir=$2 page="$TMP/$1.html"
	$BIN report -q --html "$page" "$dir"
	ok "$pg: the page is written" test -s "$page"
	browse --dump-dom "file://$page" > "$TMP/$pg.dom" 2> "$TMP/$pg.log"
	ok "$pg: Chromium renders it" grep -q '<section id="temporal">' "$TMP/$pg.dom"
	no "$pg: no console message, no failed load" grep -E 'CONSOLE|Failed to load' "$TMP/$pg.log"
	no "$pg: nothing to fetch (no src, href or url() with a scheme)" \
		grep -Eo '(src|href)="[a-z]+:|url\(' "$page"
	for s in temporal idle overview diagnose kernels comm; do
		ok "$pg: section $s" grep -q "<section id=\"$s\">" "$TMP/$pg.dom"
	done
	# every number of the CSV is in the page's table: shown, or as the
	# cell's data-v (a person reads 55.68 ms, a script 55684.206)
	for cmd in temporal overlap; do
		$BIN $cmd -q --format csv "$dir" | tail -n +2 | tr ',' '\n' | sort -u > "$TMP/want"
		missing=0
		while read -r v; do
			grep -q -e ">$v<" -e "data-v=\"$v\"" "$TMP/$pg.dom" || missing=$((missing + 1))
		done < "$TMP/want"
		ok "$pg: every value of $cmd's CSV in the page" test "$missing" = 0
	done
	# "Why the GPU was idle" sums to temporal's idle time, rank by rank
	$BIN temporal -q --format csv "$dir" > "$TMP/temporal.csv"
	ok "$pg: idle's bars sum to temporal's idle_us" python3 - "$page" "$TMP/temporal.csv" <<'PY'
import csv, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
sec = page[page.index('<section id="idle">'):]
sec = sec[:sec.index('</section>')]
shown = [t.replace("&#160;", " ") for t in
         re.findall(r'<text x="\d+" y="\d+" class="small">([^<]*)</text>', sec)]
def fmt(us):  # the page's: 3 or 4 significant figures
    a = abs(us)
    v, u = (us / 1e6, "s") if a >= 1e6 else (us / 1e3, "ms") if a >= 1e3 else (us, "µs")
    return "%.*f %s" % (1 if abs(v) >= 100 else 2 if abs(v) >= 10 else 3, v, u)
want = [fmt(float(r["idle_us"])) for r in csv.DictReader(open(sys.argv[2]))]
sys.exit(0 if shown[:len(want)] == want[:32] and want else 1)
PY
	# the first screen: each rank's verdict, the costliest causes
	ok "$pg: the verdict first" test "$(grep -o '<section id="[a-z]*"' "$TMP/$pg.dom" |
		head -1)" = '<section id="verdict"'
	no "$pg: no number with more than 4 decimals shown" \
		grep -Eo '>[0-9]+\.[0-9]{5,}[^<]*<' "$TMP/$pg.dom"
	# a desktop and a phone: nothing clipped, nothing past the page's edge
	for w in 1400 390; do
		bounds "$page" $w > "$TMP/$pg.$w.bounds"
		ok "$pg at $w px: measured" grep -q '^HEIGHT' "$TMP/$pg.$w.bounds"
		no "$pg at $w px: nothing clipped or outside the page" \
			grep -E '^(CLIPPED|OUTSIDE)' "$TMP/$pg.$w.bounds"
		browse --screenshot="$ART/$pg.$w.png" --window-size=$w,2400 "file://$page" \
			> /dev/null 2>&1
		ok "$pg: screenshot at $w px kept" test -s "$ART/$pg.$w.png"
	done
}

check_page train_stalled testdata/train_stalled
check_page ddp_straggler testdata/ddp_straggler
ok "ddp_straggler: the straggler sentence on the first screen" \
	grep -q '<p class="straggler">rank 1 holds the others back' "$TMP/ddp_straggler.dom"
h=$(sed -n 's/^HEIGHT //p' "$TMP/ddp_straggler.1400.bounds")
# (its per-step communication chart included)
ok "a 2-rank job at 1400 px: ${h:-no} px, under 2,300" test "${h:-9999}" -lt 2300
ok "stragglers: right after the verdict" test "$(grep -o '<section id="[a-z]*"' "$TMP/ddp_straggler.dom" |
	sed -n 2p)" = '<section id="stragglers"'
ok "stragglers: the grid's values, the latest rank first" grep -q \
	'<tr><th scope="row">rank 1</th><td class="n" data-v="23055.903"' "$TMP/ddp_straggler.dom"
ok "kernels: names shortened, whole on hover" grep -q \
	'<td class="name" title="void at::native::vectorized_elementwise_kernel&lt;4, ' "$TMP/ddp_straggler.dom"
ok "charts: times with their unit past each bar" grep -q '>45.02&nbsp;ms</text>' "$TMP/ddp_straggler.dom"
ok "charts: an axis" grep -q '>100 %</text>' "$TMP/ddp_straggler.dom"
check_page mem_leak testdata/mem_leak
# the headline's GPU busy is busy time over step time, as temporal's, not
# a mean of the steps' shares (steps of 14, 66 and 20 ms: 9.8 %, not 6.5)
$BIN report -q --html "$TMP/loader.html" testdata/loader_starved 2> /dev/null
b=$($BIN temporal -q --format csv testdata/loader_starved | awk -F, 'NR == 2 { printf "%.1f", $7 + $8 }')
ok "headline GPU busy: temporal's ${b:-none} %" grep -q "GPU busy ${b:-none} %" "$TMP/loader.html"
ok "several ranks: the stragglers grid" grep -q 'Who keeps the others waiting' "$TMP/ddp_straggler.dom"
ok "overview: a bar per rank" test "$(sed -n '/<section id="overview">/,/<\/section>/p' "$TMP/ddp_straggler.dom" | grep -o '<text x="114"[^>]*>rank [0-9]*<' | wc -l)" = 2
ok "overview: what to do, as the text says it" grep -q '<li>rank 1: data loading takes 65.6 % of the step' "$TMP/ddp_straggler.dom"
# on shards, each section runs rank by rank (exec/plan.c) and joins: the
# same page, but for the PATH its commands name
for d in ddp_straggler mem_train; do
	rm -rf "$TMP/$d.sh"
	$BIN ingest -q "testdata/$d" -o "$TMP/$d.sh/"
	$BIN report -q --html "$TMP/$d.merged.html" "testdata/$d"
	$BIN report -q -v --html "$TMP/$d.shards.html" "$TMP/$d.sh" 2> "$TMP/$d.v"
	no "$d: the page on shards merges nothing" grep -q 'cached database' "$TMP/$d.v"
	sed "s|$TMP/$d.sh|testdata/$d|g" "$TMP/$d.shards.html" > "$TMP/$d.shards.same"
	ok "$d: the page on shards is the page" cmp "$TMP/$d.merged.html" "$TMP/$d.shards.same"
done
# several ranks: each kept step's computation and communication, a bar
# per step of each rank, the parts' shares from overlap --by step
sed -n '/<section id="comm">/,/<\/section>/p' "$TMP/ddp_straggler.dom" > "$TMP/comm.sec"
ok "comm steps: its chart" grep -q 'Computation and communication per step' "$TMP/comm.sec"
$BIN overlap --by step -q --format csv testdata/ddp_straggler > "$TMP/steps.csv"
bars=$(grep -o '>rank [0-9]* step [0-9]*</text>' "$TMP/comm.sec" | wc -l)
ok "comm steps: a bar per rank and step ($bars)" test "$bars" = "$(($(wc -l < "$TMP/steps.csv") - 1))"
want=$(awk -F, 'NR == 2 { printf "%.1f", 100 * $4 / $3 }' "$TMP/steps.csv")
got=$(grep -o 'rank 0 step 2: computation [^<]*' "$TMP/comm.sec" | sed 's/.*(\([0-9.]*\) %)$/\1/')
ok "comm steps: rank 0's first step computes ${got:-?} % alone, overlap --by step $want %" \
	awk -v a="${got:-x}" -v b="$want" 'BEGIN { exit !(a != "x" && a - b < 0.11 && b - a < 0.11) }' 
no "comm steps: none on one rank" grep -q 'Computation and communication per step' "$TMP/train_stalled.dom"
# gloo: no collective kernel, but the chart per step counts the ranges;
# the page says why the two differ (it said "No communication kernels"
# beside "communication alone 8.7 ms")
$BIN report -q --html "$TMP/gloo.html" testdata/two_ranks
ok "comm, gloo: says the collectives ran on the CPU" grep -q 'No communication kernels: the collectives ran on the CPU (gloo)' "$TMP/gloo.html"
no "comm, NCCL: no such sentence" grep -q 'ran on the CPU (gloo)' "$TMP/ddp_straggler.html"
# nn.Module frames (train_stalled has them): the module tree, every
# module of rank 0 a row; none without the frames
sed -n '/<section id="modules">/,/<\/section>/p' "$TMP/train_stalled.dom" > "$TMP/modules.sec"
ok "modules: its section" test -s "$TMP/modules.sec"
$BIN modules -q --format csv testdata/train_stalled | awk -F, 'NR > 1 && $1 == 0 { n = split($2, p, "/"); print p[n] }' > "$TMP/mods.want"
missing=0
while read -r m; do grep -q ">$m<" "$TMP/modules.sec" || missing=$((missing + 1)); done < "$TMP/mods.want"
ok "modules: every module of rank 0 is a row ($missing missing)" test "$missing" = 0
ok "modules: some modules" test -s "$TMP/mods.want"
no "modules: no section without nn.Module frames" grep -q "<section id=\"modules\">" "$TMP/ddp_straggler.dom"
ok "memory events: memory over time" grep -q '<section id="memory">' "$TMP/mem_leak.dom"
ok "a leak costs memory, said as memory, not 0 µs" grep -q 'leaky_cache: <span class="n">+4.0 MiB a step</span>' "$TMP/mem_leak.dom"
ok "the header counts the job's steps, not rank x step" grep -q '2 ranks, 2 steps analysed (steps 2 to 3)' "$TMP/ddp_straggler.dom"
ok "the top kernels over the job, each with its rank" grep -q '>rank 0: ncclDevKernel_AllReduce_Sum_f32_RING_LL<' "$TMP/ddp_straggler.dom"
no "no empty list of advice" grep -q '(0 points)' "$TMP/train_stalled.dom"
no "one rank: no straggler map" grep -q 'Who keeps the others waiting' "$TMP/train_stalled.dom"

# the roofline: the roof, a dot per op, the numbers, labels inside the chart
check_page roof_formulas testdata/roof_formulas
sed -n '/<section id="roofline">/,/<\/section>/p' "$TMP/roof_formulas.dom" > "$TMP/roof.sec"
ok "roofline: its section" test -s "$TMP/roof.sec"
ok "roofline: the roof drawn" grep -q '<polyline' "$TMP/roof.sec"
rows=$($BIN roofline -q --format csv testdata/roof_formulas | tail -n +2 | wc -l)
ok "roofline: a dot per op ($rows)" test "$(grep -o '<circle' "$TMP/roof.sec" | wc -l)" = "$rows"
$BIN roofline -q --format csv testdata/roof_formulas | tail -n +2 | cut -d, -f5 > "$TMP/want"
missing=0
while read -r v; do grep -q ">$v<" "$TMP/roof.sec" || missing=$((missing + 1)); done < "$TMP/want"
ok "roofline: every op's FLOPs in the page" test "$missing" = 0
ok "roofline: MFU per step drawn" grep -q 'rank 0 step 2' "$TMP/roof.sec"
# every label and dot inside the chart's 690 px (11 px text: < 7 px a character)
ok "roofline: nothing drawn outside the chart" python3 -c "
import re, sys
svg = open('$TMP/roof.sec').read().split('</svg>')[0]
bad = []
for m in re.finditer(r'<text x=\"([-0-9.]+)\"([^>]*)>([^<]*)<', svg):
    w = 7 * len(m.group(3))
    x = float(m.group(1)) - (w if 'end' in m.group(2) else w / 2 if 'middle' in m.group(2) else 0)
    bad += [m] if 'rotate' not in m.group(2) and (x < 0 or x + w > 700) else []
bad += [m for m in re.finditer(r'<circle cx=\"([-0-9.]+)\" cy=\"([-0-9.]+)\"', svg)
        if not (0 < float(m.group(1)) < 690 and 0 < float(m.group(2)) < 362)]
sys.exit(1 if bad else 0)"
mkdir -p "$TMP/no_shapes"
gzip -dc testdata/roof_resnet/rank-0.pt.trace.json.gz | sed 's/"Input Dims"/"Input Dimz"/' > "$TMP/no_shapes/rank-0.json"
$BIN report -q --html "$TMP/noshapes.html" "$TMP/no_shapes"
no "roofline: no section without shapes" grep -q '<section id="roofline">' "$TMP/noshapes.html"

# an allocator snapshot beside its trace: the verdict, the peak placed,
# the sawtooth
$BIN report -q --html "$TMP/snap.html" --snapshot testdata/snap_profiled/snapshot.pickle.gz \
	testdata/snap_profiled
browse --dump-dom "file://$TMP/snap.html" > "$TMP/snap.dom" 2> "$TMP/snap.log"
ok "snapshot: its section" grep -q '<section id="snapshot">' "$TMP/snap.dom"
ok "snapshot: the verdict and the parts of the baseline" grep -q 'MiB optimizer state' "$TMP/snap.dom"
ok "snapshot: the peak placed in the trace" grep -q 'the peak: in ProfilerStep#1, in aten::sum' "$TMP/snap.dom"
ok "snapshot: allocated and reserved drawn" test "$(sed -n '/<section id="snapshot">/,$p' "$TMP/snap.dom" | grep -o '<polyline' | wc -l)" -ge 2
no "snapshot: no console message" grep -E 'CONSOLE|Failed to load' "$TMP/snap.log"
browse --screenshot="$ART/snapshot.png" --window-size=1000,3600 "file://$TMP/snap.html" > /dev/null 2>&1
ok "snapshot: screenshot kept" test -s "$ART/snapshot.png"
$BIN report -q --snapshot testdata/snap_profiled/snapshot.pickle.gz testdata/snap_profiled > /dev/null 2>&1
ok "--snapshot without --html: a usage error" test $? = 2

python3 tools/ranks.py "$TMP/r1024" 1024 5 20000 > /dev/null 2>&1
$BIN report -q --html "$TMP/big.html" "$TMP/r1024"
size=$(wc -c < "$TMP/big.html")
ok "1024 ranks: $size bytes, under 2 MB" test "$size" -lt 2000000
browse --dump-dom "file://$TMP/big.html" > "$TMP/big.dom" 2> "$TMP/big.log"
ok "1024 ranks: renders" grep -q '<section id="comm">' "$TMP/big.dom"
ok "1024 ranks: the straggler is among the ranks shown" grep -q 'rank 5 step' "$TMP/big.dom"
ok "1024 ranks: a cause every rank shares is said once, and the straggler's own is among the three" \
	grep -q '<li><b>rank 5 host_region</b> data_loading' "$TMP/big.dom"
no "1024 ranks: no console message" grep -E 'CONSOLE|Failed to load' "$TMP/big.log"
finish
