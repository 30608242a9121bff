#!/usr/bin/env bash
# watch.sh: grader watch in a copy of the course: the first run, a run when a file of the
# chapter is saved, a run on the r key, q to quit; a chapter that passes moves watch on to the
# next one; Ctrl-C in the middle of a run leaves nothing running.
source "$(dirname "$0")/lib.sh"
make_course
out=$course/watch.txt
mkfifo keys.fifo
exec 3<>keys.fifo # held open here, so that watch sees no end of its input
"$G" watch 1.1 <keys.fifo >"$out" 2>&1 &
watch_pid=$!

if wait_for "$out" "Watching week1/1.1-init (init.c)" 90; then ok "the first run, then it watches the chapter"
else not_ok "the first run, then it watches the chapter" "$(cat "$out")"; fi
expect "the first run is the chapter's tests" "$out" "---- run 1: chapter 1.1" "0 passed, 12 failed"
sleep 1
touch week1/1.1-init/init.c
if wait_for "$out" "---- run 2: chapter 1.1" 20; then ok "saving a file runs the tests again"
else not_ok "saving a file runs the tests again" "$(cat "$out")"; fi
wait_for "$out" "Watching week1/1.1-init: save to run again" 90
echo r >&3
if wait_for "$out" "---- run 3: chapter 1.1" 20; then ok "r runs the tests now (when notifications do not arrive)"
else not_ok "r runs the tests now (when notifications do not arrive)" "$(cat "$out")"; fi
wait_for "$out" "0 passed, 12 failed" 90
sleep 1
echo q >&3
for _ in $(seq 100); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.2; done
wait "$watch_pid"
rc=$?
[ $rc -eq 0 ] && expect "q quits" "$out" "Stopped watching." || not_ok "q quits" "exit $rc" "$(tail -5 "$out")"
no_leftovers "nothing is left running after q"

# A chapter that passes: watch (of no chapter named) moves on to the next one.
cp solutions/week1/1.1-init/init.c week1/1.1-init/init.c
: >"$out"
"$G" watch <keys.fifo >"$out" 2>&1 &
watch_pid=$!
if wait_for "$out" "Chapter 1.1 is done. On to 1.2, Symmetric heap" 120; then ok "a passing chapter moves watch on to the next"
else not_ok "a passing chapter moves watch on to the next" "$(cat "$out")"; fi
if wait_for "$out" "---- run 2: chapter 1.2" 20; then ok "and runs the next chapter's tests"
else not_ok "and runs the next chapter's tests" "$(cat "$out")"; fi
sleep 2
kill -INT "$watch_pid"
for _ in $(seq 150); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.2; done
wait "$watch_pid"
rc=$?
[ $rc -eq 130 ] && ok "Ctrl-C during a run stops watch (exit 130)" || not_ok "Ctrl-C during a run stops watch (exit 130)" "exit $rc" "$(tail -5 "$out")"
no_leftovers "Ctrl-C during a run leaves nothing running"
exec 3>&-
