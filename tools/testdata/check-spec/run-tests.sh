#!/usr/bin/env bash
# The fixture of tools/check-spec: book/1.1-init.md drifts from the tree in every way a check
# looks for, and each check must name the page, the line and what disagrees (tools/check-site
# runs this). A check that passed on this page could not fail.
set -uo pipefail
cd "$(dirname "$0")/../../.."
fixture=tools/testdata/check-spec/book
page=$fixture/1.1-init.md
status=0
expect() { # expect CHECK TEXT...: the check fails, and its output has every TEXT
  local check=$1 out
  shift
  if out=$(tools/check-spec --book "$fixture" "$check" 2>&1); then
    echo "check-spec $check passed on $page, which it must fail:"; echo "$out"; status=1; return
  fi
  for text in "$@"; do
    grep -qF -- "$text" <<<"$out" || { echo "check-spec $check: expected '$text' in:"; echo "$out"; status=1; }
  done
}
never() { # never CHECK TEXT: the check's output does not have TEXT (what is right is not named)
  local out
  out=$(tools/check-spec --book "$fixture" "$1" 2>&1)
  if grep -qF -- "$2" <<<"$out"; then echo "check-spec $1 named '$2', which is right:"; echo "$out"; status=1; fi
}
expect stubs "$page:8: where: week1/1.1-init/init.c:17, but tshmem_require_live()'s TODO is at line 18" \
             "$page:7: task: 'a task the stub does not give'" "$page:9: read:"
expect names "$page:12: tshmem_no_such_function is not a name of the tree" \
             "$page:25: a bonus task asks to add tshmem_my_pe, which the tree already has"
never names tshmem_a_new_function
expect commands "$page:14: make no-such-target" "$page:14: grader frobnicate" \
                "$page:15: tools/no-such-script does not exist"
never commands "make lib"
never commands "tools/check-spec does not"
expect ratios "$page:20: 'MPI / ours' says 1.33 but MPI (us) / ours (us) = 3 / 4 = 0.75" \
              "$page:17: the column 'ratio' is a ratio that names no two columns"
never ratios "$page:19:"
never ratios "$page:21:"
expect messages "grader/chapters/1.2/suite_1_2.c" "tshmem_align: alignment 3 is not a power of two"
expect messages "grader/chapters/3.8/pe_3_8.c" "belongs to tenant 1"
[ $status -eq 0 ] && echo "check-spec: every check fails on its fixture, naming page and line"
exit $status
