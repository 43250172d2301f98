#!/bin/sh
# Stops what tools/slurm/up.sh DIR started, and waits until it is gone
# (munged stays: other users of the machine may need it).
dir=$1
pids=""
for d in slurmd slurmctld; do
	[ -s "$dir/$d.pid" ] && pids="$pids $(cat "$dir/$d.pid")"
done
[ -n "$pids" ] || exit 0
# shellcheck disable=SC2086
kill $pids 2>/dev/null
i=0
for p in $pids; do
	while kill -0 "$p" 2>/dev/null && [ $i -lt 150 ]; do
		i=$((i + 1)); sleep 0.1
	done
done
exit 0
