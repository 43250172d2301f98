#!/bin/sh
# The man page passes mandoc's linter, documents every option that a
# command's --help lists, and its EXAMPLES ("$ traceanalyze ...") run.
cd "$(dirname "$0")/.." || exit 2
MAN=${MAN:-man/traceanalyze.1}
pass=0 fail=0
TMP=$(mktemp -d /tmp/ta-man.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
export TRACEANALYZE_CACHE_DIR="$TMP"
if command -v mandoc >/dev/null; then
	if mandoc -Tlint -Wwarning $MAN; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
else
	echo "manlint: mandoc not installed: lint skipped"
fi
# every option a command's --help lists is documented where a reader looks
# for it: in that command's entries under COMMANDS (.It Cm CMD ...), or
# under OPTIONS (those every command takes)
section() { # CMD: its entries' text under COMMANDS, then OPTIONS
	awk -v cmd="$1" '
		/^\.Sh / { sh = $2 }
		sh == "COMMANDS" && /^\.It Cm / { on = ($3 == cmd) }
		(sh == "COMMANDS" && on) || sh == "OPTIONS" { print }' $MAN
}
for cmd in $(./traceanalyze --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF && $1 != "help" && $1 != "schema" { print $1 }'); do
	section "$cmd" > "$TMP/section"
	# (section always holds OPTIONS: the command's own entry is looked for)
	if awk -v cmd="$cmd" '/^\.Sh / { sh = $2 } sh == "COMMANDS" && /^\.It Cm / && $3 == cmd { f = 1 } END { exit !f }' $MAN; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); echo "FAIL manlint: no .It Cm $cmd under COMMANDS"
	fi
	for opt in $(./traceanalyze $cmd --help | grep -o -- '^  --[a-z-]*' | sed 's/^  --//'); do
		if grep 'Fl ' "$TMP/section" | grep -q -- "-$opt\b"; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL manlint: $cmd --$opt is not in its section nor OPTIONS"
		fi
	done
done
# every column of every table (as --columns derives it from the analysis)
# is documented; the option sets cover each command's other tables
while read -r cmd opts; do
	# shellcheck disable=SC2086
	for col in $(./traceanalyze $cmd $opts --columns | cut -f1); do
		if grep -qw -- "$col" $MAN; then pass=$((pass + 1)); else
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
# and every command's default table, listed above or not (a new command)
./traceanalyze --list-commands | awk -F'\t' '$3 == 1 { print $1 }' | while read -r cmd; do
	for col in $(./traceanalyze $cmd --columns 2>/dev/null | cut -f1); do
		grep -qw -- "$col" $MAN || echo "FAIL manlint: $cmd: column $col is not in the man page"
	done
done > "$TMP/cols"
if [ -s "$TMP/cols" ]; then fail=$((fail + 1)); cat "$TMP/cols"; else pass=$((pass + 1)); fi
grep '^\.Dl \$ traceanalyze ' $MAN | sed 's/^\.Dl \$ traceanalyze //; s/\\(dq/"/g' > "$TMP/examples"
# an example runs, says something, and a gate that trips says why
while read -r args; do
	eval "./traceanalyze $args" > "$TMP/out" 2> "$TMP/err"
	rc=$?
	if [ $rc -gt 1 ]; then
		fail=$((fail + 1)); echo "FAIL manlint: example 'traceanalyze $args' exited $rc"
	elif [ ! -s "$TMP/out" ] && ! grep -q "written\|wrote" "$TMP/err"; then
		fail=$((fail + 1)); echo "FAIL manlint: example 'traceanalyze $args' wrote nothing"
	elif [ $rc -eq 1 ] && ! grep -q "tripped" "$TMP/err"; then
		fail=$((fail + 1)); echo "FAIL manlint: example 'traceanalyze $args' exit 1 without a tripped gate"
	else
		pass=$((pass + 1))
	fi
done < "$TMP/examples"
echo "manlint: $pass passed, $fail failed"
[ "$fail" = 0 ]
