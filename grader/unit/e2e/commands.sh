#!/usr/bin/env bash
# commands.sh: every grader command end to end, in a copy of the course: --help, bad input,
# test --json, hint, read, reset, card, session, bench, the regression re-check and a broken
# progress file.
source "$(dirname "$0")/lib.sh"
make_course
out=$course/out.txt err=$course/err.txt

# ---- help and bad input -------------------------------------------------------------------
"$G" --help >"$out" 2>&1
expect "grader --help lists every command" "$out" "grader test" "grader watch" "grader hint" \
  "grader read" "grader reset" "grader card" "grader session" "grader bench"
for cmd in test watch hint read reset card session bench list lists selftest; do
  "$G" "$cmd" --help >"$out" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && head -1 "$out" | grep -q "^usage: grader $cmd"; then ok "grader $cmd --help"
  else not_ok "grader $cmd --help" "exit $rc" "$(cat "$out")"; fi
done
bad() { # bad WHAT EXPECTED-TEXT ARGS...
  local what=$1 text=$2
  shift 2
  "$G" "$@" >"$out" 2>&1
  local rc=$?
  if [ $rc -eq 2 ] && grep -qF -- "$text" "$out"; then ok "$what"
  else not_ok "$what" "grader $* exited $rc, said:" "$(cat "$out")"; fi
}
bad "an unknown command is named" "there is no command 'frobnicate'" frobnicate
bad "an unknown chapter is named" "there is no chapter '9.9'" hint 9.9
bad "test of nothing is a sentence" "'week9' names no chapter" test week9
bad "a missing chapter is asked for" "name a chapter, e.g. grader reset 1.3" reset
bad "an unknown option names the command" "grader card: unknown argument '--wide'" card --wide
bad "a bad week is a sentence" "--week takes a week of the course, 1 to 3, not 'x'" card --week x
bad "a week beyond the course is a sentence" "1 to 3, not '1099511627776'" card --week 1099511627776
bad "a goal that is not UTF-8 is refused" "the goal is not UTF-8 text" session start $'caf\xe9'
check "and nothing was saved of it" bash -c '! grep -q "\"session\"" .tshmem-progress.json 2>/dev/null' 
bad "a bad PE count is a sentence" "--pes takes a number of PEs" bench 1.3 --pes 0
bad "session needs a goal" "start takes your goal" session start

for term in "" dumb no-such-terminal; do
  TERM=$term script -qec "$G" /dev/null >"$out" 2>&1 </dev/null
  expect "on a terminal with TERM='$term' the grader prints the summary and says why" "$out" \
    "instead of the dashboard" "1.1   Initialization & bootstrap" "Next: grader test 1.1"
done
"$G" >"$out" 2>&1 </dev/null
expect "grader with no terminal prints the summary" "$out" "1.1   Initialization & bootstrap" \
  "3.2   Pipeline-parallel handoff" "0 of $counted chapters done" "Next: grader test 1.1"
width=$(LC_ALL=C.UTF-8 wc -L <"$out")
[ "$width" -le 80 ] && ok "the summary fits 80 columns" ||
  not_ok "the summary fits 80 columns" "widest line: $width" "$(cat "$out")"
if [ -n "$optional_ids" ]; then
  expect "the summary says which chapters are optional and left out of the counts" "$out" \
    "Optional: $optional_ids, left out of the chapters done and the points"
fi
cols=$(grep -E '^[0-9]+\.[0-9]+ ' "$out" | awk '{ print index($0, "stub") }' | sort -u | wc -l)
[ "$cols" -eq 1 ] && ok "every row of the summary has its columns in line" ||
  not_ok "every row of the summary has its columns in line" "$(cat "$out")"

# ---- hints: one more each call, counted ------------------------------------------------------
for i in 1 2 3 4; do "$G" hint 1.3 >"$course/hint$i.txt" 2>&1; done
expect "the first hint is a nudge" "$course/hint1.txt" "-> Hint 1 of 3 (a nudge)" "2 more"
if grep -q "Hint 2" "$course/hint1.txt"; then not_ok "the first call shows one hint only"; else
  ok "the first call shows one hint only"; fi
expect "the second call shows one more" "$course/hint2.txt" "   Hint 1 of 3" "-> Hint 2 of 3 (more specific)"
expect "the third is nearly the answer" "$course/hint3.txt" "-> Hint 3 of 3 (nearly the answer)"
expect "then there are no more" "$course/hint4.txt" "That was every hint of chapter 1.3"
expect "hints used are counted in progress" .tshmem-progress.json '"hints_used": 3'

# ---- read ------------------------------------------------------------------------------------
"$G" read 1.3 >"$out" 2>&1
expect "read prints the page when not on a terminal" "$out" "One-sided put/get" "Put and get"
expect "read marks the chapter read" .tshmem-progress.json '"read": true'
"$G" read performance >"$out" 2>&1
expect "read shows a page that is not a chapter's, by its name" "$out" "The performance guide"
bad "an unknown page gets the list of pages" "the pages you can read are preface, setup," read nosuch
expect "and the list names the chapters and the guides" "$out" "1.3" "debugging" "glossary"
if command -v pandoc >/dev/null; then
  for page in 1.1 2.2 performance; do
    COLUMNS=80 "$G" read $page >"$out" 2>&1
    wide=$(grep -v '^    ' "$out" | LC_ALL=C.UTF-8 wc -L)
    if [ "$wide" -le 80 ]; then ok "read $page fits 80 columns with COLUMNS=80 (code aside)"
    else not_ok "read $page fits 80 columns with COLUMNS=80 (code aside)" \
      "a line outside code is $wide columns wide:" "$(grep -v '^    ' "$out" | awk 'length > 80')"; fi
  done
fi

# ---- test --json on a stub -------------------------------------------------------------------
"$G" test 1.1 --json >"$out" 2>"$err"
rc=$?
[ $rc -eq 1 ] && ok "test of a stub exits 1" || not_ok "test of a stub exits 1" "exit $rc" "$(cat "$err")"
bad_lines=$(grep -cv '^{"event":' "$out")
[ "$bad_lines" -eq 0 ] && ok "test --json prints only JSON objects, one per line" ||
  not_ok "test --json prints only JSON objects, one per line" "$(grep -v '^{"event":' "$out")"
expect "test --json: chapter, phases, 9 tests, end, summary" "$out" '"event":"chapter","chapter":"1.1"' \
  '"event":"phase"' '"phase":"run"' '"tests":12' '"event":"test"' '"done":12' \
  '"event":"chapter_end"' '"event":"summary","passed":0,"failed":12'
expect "a failing test's message teaches" "$out" "is not written yet (chapter 1.1)" "week1/1.1-init/init.c:"
expect "test records progress" .tshmem-progress.json '"total": 12' '"passed": 0' '"max_points": 19'
"$G" test >"$out" 2>&1
expect "test with no chapter grades the one you are on, and says so" "$out" \
  "Chapter 1.1 is the one you are on" "1.1  Initialization & bootstrap" "0 passed, 12 failed"
check "and only that one" bash -c "! grep -q '^  1.2 ' '$out'"
cp week1/1.1-init/init.c "$course/init.c.saved"
echo 'this is not C' >>week1/1.1-init/init.c
"$G" test 1.1 >"$out" 2>&1
expect "a chapter that does not build keeps its totals and says what to fix" "$out" \
  "the build failed; the compiler said:" "0/12   0/19  pts  does not build:" "fix the compiler's first error above"
cp "$course/init.c.saved" week1/1.1-init/init.c
printf 'int tshmem_probe_of_warnings(int x);\nint tshmem_probe_of_warnings(int x)\n{\n    int unused;\n    return x;\n}\n' \
  >>week1/1.1-init/init.c
# as a learner builds (CI=1, as in make test's CI, makes warnings errors)
env -u CI "$G" test 1.1 >"$out" 2>&1
expect "the compiler's warnings on your files are shown above the results" "$out" \
  "the compiler warned about your code (it builds, but read these first):" \
  "week1/1.1-init/init.c:$(( $(wc -l <"$course/init.c.saved") + 4 )): unused variable"
env -u CI "$G" test 1.1 --json >"$out" 2>&1
expect "and again on the next run, in --json too" "$out" '"warnings":"week1/1.1-init/init.c:'
cp "$course/init.c.saved" week1/1.1-init/init.c

# ---- reset -----------------------------------------------------------------------------------
echo "/* my attempt */" >>week1/1.3-put-get/rma.c
"$G" reset 1.3 >"$out" 2>&1 </dev/null
expect "reset asks for --yes when it cannot ask" "$out" "grader reset 1.3 --yes"
"$G" reset 1.3 --yes >"$out" 2>&1
expect "reset names the backup" "$out" "Chapter 1.3 is the stub again. Your files are in .grader-backups/1.3-"
check "the file is the stub again" cmp -s week1/1.3-put-get/rma.c build/stubs/week1/1.3-put-get/rma.c
first=$(ls -d .grader-backups/1.3-* | head -1)
check "the backup holds the learner's file" grep -q "my attempt" "$first/rma.c"
echo "/* second attempt */" >>week1/1.3-put-get/rma.c
"$G" reset 1.3 --yes >/dev/null 2>&1
n=$(ls -d .grader-backups/1.3-* | wc -l)
[ "$n" -eq 2 ] && ok "a second reset makes a second backup" || not_ok "a second reset makes a second backup" "$(ls .grader-backups)"
check "the first backup is untouched" grep -q "my attempt" "$first/rma.c"
"$G" reset 1.3 --yes >"$out" 2>&1
expect "reset of a stub does nothing" "$out" "is the stub already: nothing to reset"

# ---- bench -----------------------------------------------------------------------------------
"$G" bench 1.1 >"$out" 2>&1
expect "a chapter without a benchmark says so" "$out" "There is no benchmark for chapter 1.1 yet"
fx=$course/bench-fixture
mkdir -p "$fx/solutions" "$fx/learner"
if mpicc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Iinclude -Igrader/bench grader/unit/fixtures/bench_fixture.c \
     "$src/build/solutions/lib/libtshmem.a" -lucp -lucs -lpthread -lm -o "$fx/solutions/bench_1_3" 2>"$err"; then
  cp "$fx/solutions/bench_1_3" "$fx/learner/bench_1_3"
  TSHMEM_GRADER_BENCH_FIXTURE=$fx "$G" bench 1.3 --quick >"$out" 2>&1
  rc=$?
  expect "bench prints a table per op and size" "$out" "put on 2 PEs" "latency (us)" "you/ref" \
    "ref/base" "8 B" "1 MiB"
  expect "bench writes a CSV" "$out" "All figures: build/bench/bench_1.3-"
  expect "bench ends with the worst ratio of each operation" "$out" \
    "Worst ratio against the baseline, per operation" "  1.3  put "
  expect "bench shows the program's other figures" "$out" "More figures from the reference run:" \
    "  ring pes=2 sizes=" "More figures from your code's run:"
  csv=$(ls build/bench/bench_1.3-*.csv 2>/dev/null | head -1)
  [ -n "$csv" ] && expect "the CSV has every run" "$csv" "chapter,run,op" ",yours,put,tshmem," \
    ",reference,put,mpi," || not_ok "the CSV has every run" "no CSV in build/bench"
  expect "bench records the best ratios" .tshmem-progress.json '"vs_mpi":' '"vs_ref":'
  [ $rc -eq 0 ] && ok "bench exits 0" || not_ok "bench exits 0" "exit $rc" "$(cat "$out")"
else
  not_ok "the bench fixture builds" "$(cat "$err")"
fi

# ---- a session in which a chapter passes -----------------------------------------------------
"$G" session end >"$out" 2>&1
expect "ending no session is a sentence" "$out" "no session is open"
"$G" session start "finish chapter 1.1" >"$out" 2>&1
expect "session start" "$out" "Session started at" "finish chapter 1.1"
"$G" session start "again" >"$out" 2>&1
expect "one session at a time" "$out" "a session is open since"
cp solutions/week1/1.1-init/init.c week1/1.1-init/init.c
"$G" test 1.1 >"$out" 2>&1
rc=$?
expect "the reference's 1.1 passes, with points" "$out" "12 of 12 tests, 19 of 19 points" "12 passed, 0 failed"
[ $rc -eq 0 ] && ok "a passing test exits 0" || not_ok "a passing test exits 0" "exit $rc"
"$G" session end >"$out" 2>&1
expect "session end prints the session card" "$out" "### Study session: finish chapter 1.1" \
  "chapters passed: 1.1 Initialization & bootstrap" "tests fixed: 12" "hints used: 0" "now: 1/$counted chapters done"
expect "the session is kept in progress" .tshmem-progress.json '"goal": "finish chapter 1.1"' '"tests_fixed": 12'

# ---- a regression: 1.1 breaks while working on 1.2 ---------------------------------------------
cp build/stubs/week1/1.1-init/init.c week1/1.1-init/init.c
"$G" test 1.2 >"$out" 2>&1
expect "a change to a passed chapter re-checks it" "$out" \
  "Re-checking 1.1: it passed before, and your files changed since." \
  "1.1 passed before and fails now"
expect "a test stopped by an earlier chapter's stub points to --ref-deps" "$out" \
  "Some tests stopped in chapter 1.1's unwritten code (1.2 builds on it): finish 1.1 first," \
  "grader test 1.2 --ref-deps"
"$G" test 1.2 --json >"$out" 2>&1
expect "test --json names the earlier chapter a test stopped in (the dashboard shows it)" "$out" \
  '"event":"chapter_end","chapter":"1.2"' '"blocked_by":"1.1"'
"$G" card --format markdown >"$out" 2>&1
expect "the Markdown card shows the regression as in progress" "$out" "| 🚧 | 1.1 | Initialization & bootstrap |" \
  "(broke since it passed)" "| ⬜ | 1.2 |" "| ⬜ | 3.1 | MoE all-to-all dispatch/combine |" "| ⬜ | 3.2 | Pipeline-parallel handoff |"
"$G" card --week 2 --format markdown >"$out" 2>&1
if grep -q "| 1.1 |" "$out"; then not_ok "card --week 2 shows week 2 only" "$(cat "$out")"
else expect "card --week 2 shows week 2 only" "$out" "| 2.1 |"; fi
"$G" card >"$out" 2>&1
expect "the chat card is a list with emoji and bold" "$out" "**Week 1**" \
  "- 🚧 **1.1** Initialization & bootstrap · " "broke since it passed" "- ⬜ 1.2 Symmetric heap" \
  "- ⬜ 3.2 Pipeline-parallel handoff"
if grep -q "|" "$out"; then not_ok "the chat card has no table" "$(cat "$out")"; else ok "the chat card has no table"; fi
chars=$(LC_ALL=C.UTF-8 wc -m <"$out")
[ "$chars" -le 2000 ] && ok "the chat card fits one Discord message ($chars characters)" ||
  not_ok "the chat card fits one Discord message" "$chars characters"

# ---- a study group's card: members' --json cards merged --------------------------------------
"$G" card --json --name alice >"$course/alice.json" 2>"$err"
sed 's/"name": "alice"/"name": "bob"/; s/"status": "in progress"/"status": "done"/' \
  "$course/alice.json" >"$course/bob.json"
"$G" card --merge "$course/alice.json" "$course/bob.json" >"$out" 2>&1
rc=$?
expect "card --merge puts the members side by side" "$out" "group card · 2 members" "- **alice** 🚧" \
  "- **bob** ✅" "**Who is where**" "- **1.1** Initialization & bootstrap: 🚧"
[ $rc -eq 0 ] && ok "card --merge exits 0" || not_ok "card --merge exits 0" "exit $rc" "$(cat "$out")"
"$G" card --merge "$course/alice.json" "$course/bob.json" --format markdown >"$out" 2>&1
expect "card --merge --format markdown is a table" "$out" "| chapter | alice | bob |" "| 1.1 | Initialization & bootstrap | 🚧"
today=$(date +%Y-%m-%d)
"$G" card --merge "$course/alice.json" "$course/bob.json" >"$out" 2>&1
expect "the group card says when each member's card was made" "$out" "pts · updated $today"
old=$(date -d "10 days ago" +%Y-%m-%d)
sed "s/\"name\": \"alice\"/\"name\": \"carol\"/; s/\"updated\": \"$today/\"updated\": \"$old/" \
  "$course/alice.json" >"$course/carol.json"
"$G" card --merge "$course/alice.json" "$course/carol.json" >"$out" 2>&1
expect "a stale card shows: its day and its age" "$out" "updated $old ⚠️ 10 days ago"
if grep -F "**alice**" "$out" | grep -qF "⚠️"; then not_ok "a fresh card has no age warning" "$(cat "$out")"; else
  ok "a fresh card has no age warning"; fi
# 8 members with every chapter under way: more than one message holds
python3 - "$course/alice.json" "$course" <<'PY'
import json, sys
card = json.load(open(sys.argv[1]))
for ch in card["chapters"]:
    if ch["available"]:
        ch.update(status="in progress", passed=3, total=9, vs_mpi=1.25)
for k in range(8):
    card["name"] = "member-%d" % k
    json.dump(card, open("%s/m%02d.json" % (sys.argv[2], k), "w"))
PY
"$G" card --merge "$course"/m*.json >"$out" 2>&1
chars=$(LC_ALL=C.UTF-8 wc -m <"$out")
if [ "$chars" -le 2000 ] && grep -qF -- "more chapters: \`grader card --week" "$out" &&
   ! grep -qF -- "--format markdown" "$out"; then
  ok "a group card too long for one message says which --week card shows the rest ($chars characters)"
else
  not_ok "a group card too long for one message says which --week card shows the rest" "$chars characters" "$(cat "$out")"
fi
"$G" card --week 2 --merge "$course"/m*.json >"$out" 2>&1
chars=$(LC_ALL=C.UTF-8 wc -m <"$out")
expect "card --week 2 --merge shows that week's chapters" "$out" "group card, week 2 · 8 members" \
  "- **2.1** Communication buffers: 🚧 3/9"
[ "$chars" -le 2000 ] && ok "and fits one message ($chars characters)" ||
  not_ok "and fits one message" "$chars characters" "$(cat "$out")"
bad "merging nothing is a sentence" "name the members' cards" card --merge
bad "merging a file that is not a card is a sentence" "is not a progress card" card --merge Makefile

# ---- a broken progress file ------------------------------------------------------------------
for broken in '{"version": 1, "chapters": {"1.1": {"pas' '' '[1, 2]'; do
  printf '%s' "$broken" >.tshmem-progress.json
  "$G" card >"$out" 2>"$err"
  rc=$?
  if [ $rc -eq 0 ] && grep -q "could not be read" "$err" && grep -q "is kept as" "$err" &&
     grep -q "progress card" "$out"; then
    ok "a broken progress file ('${broken:0:12}') is kept aside, with a sentence"
  else
    not_ok "a broken progress file ('${broken:0:12}') is kept aside, with a sentence" "exit $rc" "$(cat "$err")"
  fi
done
n=$(ls .tshmem-progress.json.broken-* 2>/dev/null | wc -l)
[ "$n" -eq 3 ] && ok "every broken file is kept" || not_ok "every broken file is kept" "$(ls -a)"

# ---- a hang: where each PE was, and nothing left behind --------------------------------------
hang=$course/hang
mkdir -p "$hang"
if mpicc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -Iinclude -Igrader/pe grader/unit/fixtures/pe_hang.c \
     "$src/build/solutions/lib/libtshmem.a" -lucp -lucs -lpthread -lm -o "$hang/pe_hang" 2>"$err" &&
   cc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Igrader/harness -Igrader/tests -Iinclude grader/unit/fixtures/suite_hang.c \
     grader/harness/job.c grader/harness/report.c grader/harness/sanitizer.c -lcriterion -ljansson -o "$hang/suite_hang" 2>>"$err"; then
  job_id=e2ehang$$
  E2E_JOB_ID=$job_id TSHMEM_ROOT=$course TSHMEM_TEST_BIN=$hang TSHMEM_REPORT=$hang/report.jsonl \
    "$hang/suite_hang" >"$out" 2>&1
  expect "a hang is reported: the timeout, each PE's last step" "$hang/report.jsonl" \
    "timed out after 4 s: 2 PEs, scenario hang" \
    'PE 0: last step \"waiting for a signal nobody sends\"' \
    'PE 1: last step \"waiting for a signal nobody sends\"'
  if command -v gdb >/dev/null; then
    expect "with gdb, where each PE waited" "$hang/report.jsonl" "in tshmem_uint64_wait_until"
    expect "with gdb, a PE looping in its own code is named as such, not as a wait" \
      "$hang/report.jsonl" "timed out after 8 s: 2 PEs, scenario spin" \
      "PE 0 was not waiting: it was running its own code, in count_forever (grader/unit/fixtures/pe_hang.c:" \
      "The PEs in a wait are most likely waiting for it"
    if grep -F "scenario spin" "$hang/report.jsonl" | grep -qF "waits for a signal nobody sends"; then
      not_ok "the looping PE's report does not speak of a signal nobody sends" "$(cat "$hang/report.jsonl")"
    else
      ok "the looping PE's report does not speak of a signal nobody sends"
    fi
  fi
  no_leftovers "a hung job leaves nothing running"
  left=$(ls /dev/shm | grep -F -- "$job_id")
  [ -z "$left" ] && ok "a hung job leaves nothing in /dev/shm" || not_ok "a hung job leaves nothing in /dev/shm" "$left"
else
  not_ok "the hang fixtures build" "$(cat "$err")"
fi

# ---- mutants ---------------------------------------------------------------------------------
# A patch that changes nothing the tests can see must fail the phase: the test it names passes
# on it. And a tests: line that names no test of the suite, or none at all, is refused at once.
cp -a "$src"/build/obj/solutions* "$course/build/obj/" 2>/dev/null
md=grader/chapters/1.3/mutants ref=solutions/week1/1.3-put-get/rma.c
harmless=$(mktemp)
sed '1i /* a comment, nothing more */' "$ref" >"$harmless"
mutant() { # mutant NAME TESTS-LINE: a mutant that adds a comment to 1.3's reference
  { printf 'mistake: a comment\npage: Put and get\n%sexpect: pe\n' "$2"
    diff -u --label "$ref" --label "$ref" "$ref" "$harmless"; } >"$md/$1.patch"
}
mutant harmless $'tests: bad_pe_is_an_error\n'
mutant unknown-test $'tests: no_such_test\n'
mutant untested ''
"$G" mutants 1.3/harmless 1.3/unknown-test 1.3/untested >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] && ok "mutants the suite does not catch fail the run" || not_ok "mutants the suite does not catch fail the run" "exit $rc" "$(cat "$out")"
expect "a harmless patch is not caught: its test passes on it" "$out" \
  "FAIL  1.3 harmless (Put and get): a comment" "the test passed on it" \
  "the whole suite ran on it:" "0 caught, 3 not caught"
expect "a tests: line naming no test of the suite is refused" "$out" \
  "names no_such_test, which is not a test of 1.3's suite"
expect "a mutant without a tests: line is refused" "$out" "its header has no tests: line"
rm -f "$harmless" "$md"/harmless.patch "$md"/unknown-test.patch "$md"/untested.patch

no_leftovers "nothing of the runs is left running"
