#!/bin/sh
# A one-node Slurm for tests: munged and slurmctld + slurmd on this host,
# as root, with the configuration in this directory. Prints the
# SLURM_CONF to export; tools/slurm/down.sh stops it.
#   usage: tools/slurm/up.sh DIR     (DIR: state, logs and slurm.conf)
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir/state" "$dir/spool"
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
sed -e "s|@HOST@|$host|g" -e "s|@CPUS@|$cpus|g" -e "s|@MEM@|$mem|g" \
    -e "s|@DIR@|$dir|g" -e "s|@PORT@|${SLURM_TEST_PORT:-16817}|g" \
    -e "s|@DPORT@|${SLURM_TEST_DPORT:-16818}|g" "$here/slurm.conf.in" > "$dir/slurm.conf"
# munge: a key of our own when the machine has none, and munged when it
# is not running; each noted in DIR, for down.sh to undo (what the machine
# had stays)
if [ ! -s /etc/munge/munge.key ]; then
	mkdir -p /etc/munge
	dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
	chmod 400 /etc/munge/munge.key
	: > "$dir/made.munge.key"
fi
mkdir -p /run/munge /var/lib/munge /var/log/munge
if ! pgrep -x munged >/dev/null; then
	munged --force --pid-file="$dir/munged.pid" 2> "$dir/munged.log"
fi
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# up when the node takes jobs
i=0
until sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; do
	i=$((i + 1))
	if [ $i -gt 60 ]; then
		echo "slurm: the node never came up; logs in $dir" >&2
		tail -5 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
		exit 1
	fi
	sleep 0.5
done
echo "$SLURM_CONF"
