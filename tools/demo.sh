#!/bin/sh
# make demo: every sample in testdata/ analysed as a user would: report
# and diagnose on its traces, its HTML page in demo/NAME/report.html, and
# memory on its allocator snapshot (placed in its trace when it has one).
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-./traceanalyze}
for d in testdata/*/; do
	name=$(basename "$d")
	[ "$name" = oracle ] && continue
	echo "== $d"
	d=${d%/}
	snap="$d/snapshot.pickle.gz"
	if ls "$d"/*.json.gz > /dev/null 2>&1; then
		mkdir -p "demo/$name"
		# a trace whose GPU work was not recorded (cpu_only): the GPU
		# commands say so and exit 3; the host side still reads
		if $BIN report -q "$d" > /dev/null 2> "demo/$name/err" ||
		   ! grep -q "holds no GPU activity" "demo/$name/err"; then
			$BIN report "$d" && echo && $BIN diagnose "$d" || exit 1
		else
			cat "demo/$name/err" && echo && $BIN ops "$d" || exit 1
			rm -f "demo/$name/err"
			continue
		fi
		rm -f "demo/$name/err"
		if [ -f "$snap" ]; then
			$BIN report -q --html "demo/$name/report.html" --snapshot "$snap" "$d" || exit 1
			echo && $BIN memory --trace "$d" "$snap" || exit 1
		else
			$BIN report -q --html "demo/$name/report.html" "$d" || exit 1
		fi
		echo "(the page: demo/$name/report.html)"
	elif [ -f "$snap" ]; then
		$BIN memory "$snap" && echo && $BIN memory --leaks "$snap" || exit 1
	fi
done
