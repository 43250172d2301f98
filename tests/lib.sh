# Shared by the shell tests that count checks (jobs.sh, compat_cache.sh,
# stream.sh): sourced with SUITE set, it moves to the project root, makes
# a scratch directory removed at exit with a cache of its own, and counts.
cd "$(dirname "$0")/.." || exit 2
BIN=${BIN:-./traceanalyze}
TMP=$(mktemp -d) || exit 2
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP/cache"
pass=0 fail=0

check() { # NAME COMMAND...: passes when the command succeeds
	name=$1; shift
	if "$@"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL $SUITE: $name"
		return 1
	fi
}

same() { # NAME FILE1 FILE2: byte for byte; shows how they differ if not
	check "$1" cmp -s "$2" "$3" || diff "$2" "$3" | head -12
}

cached_as_fresh() { # DIR RANKS, commands on standard input: each succeeds
	# --no-cache, and its first and second cached runs print the same bytes
	while read -r cmd; do
		# shellcheck disable=SC2086
		$BIN $cmd --ranks "$2" --no-cache --format csv "$1" > "$TMP/a" 2>&1
		echo "exit $?" >> "$TMP/a"
		check "$cmd --ranks $2 $1 succeeds" grep -qx "exit 0" "$TMP/a"
		for run in first again; do
			# shellcheck disable=SC2086
			$BIN $cmd --ranks "$2" --format csv "$1" > "$TMP/b" 2>&1
			echo "exit $?" >> "$TMP/b"
			same "$cmd --ranks $2 $1 ($run)" "$TMP/a" "$TMP/b"
		done
	done
}

finish() { # the summary line and the exit status
	echo "$SUITE: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
