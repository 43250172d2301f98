#!/usr/bin/env python3
"""Every example in README.md and docs/*.md that shows a command's output
is what the command prints now: a block of ``` with lines "$ traceanalyze
ARGS" followed by its output. In the expected output a line "..." stands
for any number of lines, and "..." inside a line for any text (a cut
column); trailing spaces are ignored. Run from the project root; exit 1
with a diff-like message on the first line that differs in each example.
"""
import glob
import os
import re
import shlex
import subprocess
import sys

BIN = os.environ.get("BIN", "./traceanalyze")


def examples(path):
    """(line number, command, expected lines) of each example in path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i, out = 0, []
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        block = lines[i + 1:j]
        k = 0
        while k < len(block):
            if block[k].startswith("$ traceanalyze "):
                m = k + 1
                while m < len(block) and not block[m].startswith("$ "):
                    m += 1
                out.append((i + 2 + k, block[k][2:], block[k + 1:m]))
                k = m
            else:
                k += 1
        i = j + 1
    return out


def pattern(line):
    parts = [re.escape(p) for p in line.rstrip().split("...")]
    return re.compile(".*".join(parts) + r"\s*$")


def matches(want, got):
    """None when got (lines) fits want (lines, with "..." lines), else
    want."""
    pats = [None if w.strip() == "..." else pattern(w) for w in want]
    memo = {}

    def fit(a, b):
        if (a, b) in memo:
            return memo[(a, b)]
        if a == len(pats):
            r = b == len(got)
        elif pats[a] is None:
            r = any(fit(a + 1, c) for c in range(b, len(got) + 1))
        else:
            r = b < len(got) and pats[a].match(got[b]) is not None and fit(a + 1, b + 1)
        memo[(a, b)] = r
        return r

    return None if fit(0, 0) else want


def main():
    env = dict(os.environ, LC_ALL="C.UTF-8")
    env.pop("COLUMNS", None)
    env["TRACEANALYZE_CACHE_DIR"] = env.get("TRACEANALYZE_CACHE_DIR", "/tmp/ta-docs-cache")
    bad = n = 0
    for path in ["README.md"] + sorted(glob.glob("docs/*.md")):
        for at, cmd, want in examples(path):
            n += 1
            args = shlex.split(cmd)[1:]
            r = subprocess.run([BIN] + args, capture_output=True, text=True, env=env)
            got = [l.rstrip() for l in r.stdout.rstrip("\n").split("\n")]
            while want and not want[-1].strip():
                want = want[:-1]
            if matches(want, got) is not None:
                bad += 1
                print("FAIL docs: %s:%d: '%s' prints otherwise; now:" % (path, at, cmd))
                for l in got[:20]:
                    print("    " + l)
    print("docs_examples: %d passed, %d failed" % (n - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
