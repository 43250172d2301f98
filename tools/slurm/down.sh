#!/bin/sh
# Stops what tools/slurm/up.sh DIR started (munged and its key only if it
# started and made them), and waits until it is gone.
dir=$1
pids=""
for d in slurmd slurmctld munged; do
	[ -s "$dir/$d.pid" ] && pids="$pids $(cat "$dir/$d.pid")"
done
if [ -n "$pids" ]; then
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null
	i=0
	for p in $pids; do
		while kill -0 "$p" 2>/dev/null && [ $i -lt 150 ]; do
			i=$((i + 1)); sleep 0.1
		done
	done
fi
if [ -e "$dir/made.munge.key" ]; then
	rm -f /etc/munge/munge.key "$dir/made.munge.key"
fi
exit 0
