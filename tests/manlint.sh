#!/bin/sh
# The man page passes mandoc's linter, documents every option that a
# command's --help lists, and its EXAMPLES ("$ traceanalyze ...") run.
cd "$(dirname "$0")/.." || exit 2
MAN=man/traceanalyze.1
pass=0 fail=0
if command -v mandoc >/dev/null; then
	if mandoc -Tlint -Wwarning $MAN; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
else
	echo "manlint: mandoc not installed: lint skipped"
fi
# every command the binary lists (but help and schema, which have none)
for cmd in $(./traceanalyze --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF && $1 != "help" && $1 != "schema" { print $1 }'); do
	for opt in $(./traceanalyze $cmd --help | grep -o -- '^  --[a-z-]*' | sed 's/^  --//'); do
		if grep 'Fl ' $MAN | grep -q -- "-$opt\b"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL manlint: $cmd --$opt is not in the man page"
		fi
	done
done
# every column of every table (as --columns derives it from the analysis)
# is documented; the option sets cover each command's other tables
while read -r cmd opts; do
	# shellcheck disable=SC2086
	for col in $(./traceanalyze $cmd $opts --columns | cut -f1); do
		if grep -q -- "$col" $MAN; then pass=$((pass + 1)); else
			fail=$((fail + 1)); echo "FAIL manlint: $cmd $opts: column $col is not in the man page"; fi
	done
done <<-VARIANTS
temporal
idle
idle --stats
kernels
kernels --by type
overlap
launch
launch --summary
queue
queue --series
queue --blocked-at 2
membw
membw --series
annotations
annotations --kernels
ops --group-by shape
ops --group-by stack:1
diagnose
diagnose --findings
stragglers
critical-path
critical-path --top 3
VARIANTS
TMP=$(mktemp -d /tmp/ta-man.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP"
grep '^\.Dl \$ traceanalyze ' $MAN | sed 's/^\.Dl \$ traceanalyze //; s/\\(dq/"/g' > "$TMP/examples"
while read -r args; do
	eval "./traceanalyze $args" > /dev/null 2>&1
	rc=$?
	if [ $rc -le 1 ]; then pass=$((pass + 1)); else
		fail=$((fail + 1)); echo "FAIL manlint: example 'traceanalyze $args' exited $rc"; fi
done < "$TMP/examples"
echo "manlint: $pass passed, $fail failed"
[ "$fail" = 0 ]
