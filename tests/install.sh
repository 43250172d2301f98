#!/bin/sh
# make install DESTDIR=... installs a working binary, a man page that
# man -l renders, and the completion; make uninstall removes them.
cd "$(dirname "$0")/.." || exit 2
D=$(mktemp -d /tmp/ta-install.XXXXXX)
trap 'rm -rf "$D"' EXIT
pass=0 fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL install: $1"; fi; }
make -s install DESTDIR="$D" PREFIX=/usr >/dev/null
check "binary runs" '"$D/usr/bin/traceanalyze" --version | grep -q "^traceanalyze "'
if command -v man >/dev/null; then
	check "man page renders" 'MANWIDTH=80 man -l "$D/usr/share/man/man1/traceanalyze.1" 2>/dev/null | grep -q "DIFFERENCES FROM HTA"'
fi
check "completion installed" '[ -f "$D/usr/share/bash-completion/completions/traceanalyze" ]'
check "completion parses" 'bash -n completions/traceanalyze.bash'
# completing a --fail-if column asks the command itself, with its options
complete_cols() { # WORDS...: what completing the last (empty) word offers
	bash -c '. completions/traceanalyze.bash; PATH="$PWD:$PATH"
		COMP_WORDS=(traceanalyze "$@" ""); COMP_CWORD=$(($# + 1))
		_traceanalyze; echo "${COMPREPLY[*]}"' sh "$@"
}
check "completion: launch columns" 'complete_cols launch dir --fail-if | grep -qw nth'
check "completion: ops columns" 'complete_cols ops --group-by shape --fail-if | grep -qw input_shapes'
check "completion: kernels --by type" '[ "$(complete_cols kernels --by type --fail-if)" = "kernel_type total_us pct" ]'
# the completion offers every command the binary has (and help), no other
check "completion: every command" '[ "$(./traceanalyze --help | sed -n "/^commands:/,/^$/p" | awk "NR > 1 && NF { print \$1 }" | sort | tr "\n" " ")" = "$(bash -c ". completions/traceanalyze.bash; PATH=\"\$PWD:\$PATH\"; COMP_WORDS=(traceanalyze \"\"); COMP_CWORD=1; _traceanalyze; printf \"%s\\n\" \"\${COMPREPLY[@]}\"" | grep -v "^-" | sort | tr "\n" " ")" ]'
check "completion: --ranks offers the ranks of the directory" '[ "$(complete_cols temporal testdata/two_ranks --ranks)" = "0 1 all" ]'
check "completion: diagnose --findings --fail-if offers the findings' columns" 'complete_cols diagnose --findings --fail-if | grep -qw cost_us && ! complete_cols diagnose --findings --fail-if | grep -qw verdict'
make -s uninstall DESTDIR="$D" PREFIX=/usr >/dev/null
check "uninstall removes" '[ ! -e "$D/usr/bin/traceanalyze" ] && [ ! -e "$D/usr/share/man/man1/traceanalyze.1" ]'
echo "install: $pass passed, $fail failed"
[ "$fail" = 0 ]
