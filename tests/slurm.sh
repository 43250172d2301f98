#!/bin/sh
# README's Slurm recipe ("Many ranks, many machines"), run on a real
# scheduler: a one-node Slurm (tools/slurm/up.sh: munged, slurmctld,
# slurmd), a job array whose task i ingests rank i's trace into a shared
# shard directory, and then every command reads the shards and must say
# byte for byte what it says on the traces.
SUITE=slurm
. "$(dirname "$0")/lib.sh"
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	echo "slurm: skipped: slurm-wlm and munge are not installed (tools/setup.sh installs them)"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "slurm: skipped: a test cluster needs root (munged, slurmd)"
	exit 0
fi
S="$TMP/slurm"
trap 'sh tools/slurm/down.sh "$S"; rm -rf "$TMP"' EXIT
SLURM_CONF=$(sh tools/slurm/up.sh "$S") || { echo "FAIL slurm: the test cluster did not start"; exit 1; }
export SLURM_CONF
ABS=$(pwd)/$BIN
python3 tools/ranks.py "$TMP/r8" 8 3 20000 > /dev/null
for sample in testdata/ddp_straggler "$TMP/r8"; do
	smp=$(basename "$sample")
	ls "$(cd "$sample" && pwd)"/*.json* > "$TMP/$smp.list"
	n=$(wc -l < "$TMP/$smp.list")
	mkdir -p "$TMP/$smp.shards"
	# the recipe: task i ingests file i (the whole environment goes along)
	timeout 300 sbatch --wait -Q --array=0-$((n - 1)) -o "$TMP/$smp-%a.log" \
		--wrap "f=\$(sed -n \"\$((SLURM_ARRAY_TASK_ID + 1))p\" $TMP/$smp.list) &&
			$ABS ingest -q \"\$f\" -o $TMP/$smp.shards/"
	check "$smp: the job array ran ($n tasks)" test $? = 0 || cat "$TMP/$smp"-*.log
	check "$smp: a shard per rank" test "$(ls "$TMP/$smp.shards" | grep -c '\.tadb$')" = "$n"
	check "$smp: no temporary left" test "$(ls "$TMP/$smp.shards" | grep -vc '\.tadb$')" = 0
	for cmd in temporal idle kernels overlap stragglers diagnose "diagnose --findings" \
		critical-path steps report; do
		# shellcheck disable=SC2086
		$BIN $cmd -q --format csv "$sample" > "$TMP/want" 2>&1
		# shellcheck disable=SC2086
		$BIN $cmd -q --format csv "$TMP/$smp.shards" > "$TMP/got" 2>&1
		same "$smp: $cmd on the shards the scheduler wrote" "$TMP/want" "$TMP/got"
	done
done
finish
