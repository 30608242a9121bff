#!/usr/bin/env bash
# Runs stubgen on the fixtures here: NAME.c must give NAME.expected.c, bad-*.c must be rejected.
# Usage: run-tests.sh PATH/TO/stubgen
set -eu
stubgen=$1
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*" >&2; failed=$((failed + 1)); }

for expected in "$dir"/*.expected.c; do
    input=${expected%.expected.c}.c
    name=$(basename "$input")
    out=$tmp/new/dirs/$name # parent directories do not exist yet
    if "$stubgen" "$input" "$out" && diff -u "$expected" "$out" >&2; then
        ok
    else
        bad "$name: output differs from $(basename "$expected")"
    fi
    if "$stubgen" "$input" - | cmp -s "$expected" -; then
        ok
    else
        bad "$name: stdout output (-) differs from $(basename "$expected")"
    fi
done

for input in "$dir"/bad-*.c; do
    name=$(basename "$input")
    out=$tmp/bad/$name
    rc=0
    "$stubgen" "$input" "$out" 2>"$tmp/err" || rc=$?
    first=$(head -n 1 "$tmp/err")
    if [ "$rc" -ne 1 ]; then
        bad "$name: exit status $rc, expected 1"
    elif ! [[ $first =~ ^(.*):[0-9]+:\ .+ && ${BASH_REMATCH[1]} == "$input" ]]; then
        bad "$name: no '$input:LINE: ...' message on stderr (got: $first)"
    elif [ -e "$out" ] || [ -e "$out.tmp" ]; then
        bad "$name: an output file was left behind"
    else
        ok
    fi
done

if "$stubgen" --help | grep -q '^usage: stubgen INPUT OUTPUT'; then ok; else bad "--help prints no usage"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
