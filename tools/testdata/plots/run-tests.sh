#!/usr/bin/env bash
# The plotting tools on a fixture: tools/bench-csv turns benchmark lines into the expected CSV,
# tools/plot-bench draws it (one line per series) and refuses a CSV without the column it needs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
here=tools/testdata/plots
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
check() { if eval "$2"; then echo "  ok    $1"; else echo "  FAIL  $1"; fail=1; fi; }

tools/bench-csv "$here/bench-output.txt" >"$work/got.csv"
check "bench-csv keeps the bench lines, in columns" "diff -u '$here/expected.csv' '$work/got.csv'"

{ echo "# title: Allreduce, 4 PEs (fixture)"; echo "# y: busbw_GBps"; cat "$work/got.csv"; } >"$work/plot.csv"
tools/plot-bench "$work/plot.csv" "$work/plot.svg" 2>"$work/err"
check "plot-bench draws an SVG" "grep -q '<svg' '$work/plot.svg' && [ ! -s '$work/err' ]"
check "one line per series, named" "grep -q '>tshmem<' '$work/plot.svg' && grep -q '>mpi<' '$work/plot.svg'"
check "the title is drawn" "grep -q 'Allreduce, 4 PEs (fixture)' '$work/plot.svg'"

sed '/^op,/s/busbw_GBps/other/' "$work/plot.csv" >"$work/bad.csv"
check "a CSV without the y column is refused, by name" \
  "! tools/plot-bench '$work/bad.csv' '$work/bad.svg' 2>'$work/err' && grep -q 'no column busbw_GBps' '$work/err'"
# What grader bench writes (build/bench/*.csv): two runs (yours, the reference), several ops.
tools/plot-bench "$here/grader-bench.csv" "$work/g.svg" --op fcollect --y busbw_GBps 2>"$work/err"
check "plot-bench reads grader bench's CSV, one op of it" "grep -q '<svg' '$work/g.svg' && [ ! -s '$work/err' ]"
check "series are named by run and impl when both vary" \
  "grep -q '>yours tshmem<' '$work/g.svg' && grep -q '>reference tshmem<' '$work/g.svg' && grep -q '>yours mpi<' '$work/g.svg'"
check "--op leaves the other operations out" "! grep -q 'broadcast' '$work/g.svg'"
exit $fail
