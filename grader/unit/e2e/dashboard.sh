#!/usr/bin/env bash
# dashboard.sh: the dashboard driven for real in tmux (send-keys, capture-pane), in a copy of the
# course: the roadmap at 80x24, selecting a chapter, running its tests with a live progress
# bar, scrolling, zoom, hint, read, reset, watch; resizing; NO_COLOR; and the terminal given
# back on every way out: q, Ctrl-C, SIGTERM, a crashing test run, a run cancelled midway.
source "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "not ok - tmux is installed (make deps installs it)"; exit 1; }
make_course
tmux_socket=tshmem-e2e-$$
screen=$course/screen.txt
T() { tmux -L "$tmux_socket" "$@"; }

# A terminal of W x H running a plain shell in the copy. Each on a server of its own: a new
# session on the socket of a server still shutting down can die with it (seen under load).
terminals=0
terminal() {
  T kill-server 2>/dev/null
  terminals=$((terminals + 1))
  tmux_socket=tshmem-e2e-$$-$terminals
  T -f /dev/null new-session -d -x "$1" -y "$2" -s e2e \
    "cd '$course' && env PS1='$ ' LANG=C.UTF-8 NO_PROGRESS=1 bash --norc --noprofile"
  T set-option -g status off
  sleep 0.3
}
capture() { T capture-pane -p -t e2e "$@" >"$screen"; }
# see TEXT [SECONDS]: until the screen shows the text
see() {
  local i
  for i in $(seq $((${2:-20} * 5))); do
    capture
    grep -qF -- "$1" "$screen" && return 0
    sleep 0.2
  done
  return 1
}
# on_screen WHAT TEXT... [within 20 s each]
on_screen() {
  local what=$1 t
  shift
  for t in "$@"; do
    if ! see "$t" 20; then not_ok "$what" "not on the screen: $t" "the screen:" "$(cat "$screen")"; return 1; fi
  done
  ok "$what"
}
keys() { T send-keys -t e2e "$@"; sleep 0.3; }
# Starts the grader in the shell with the given environment; when it ends, the shell prints its
# exit status and saves the terminal's settings to compare with those from before.
dashboard() {
  rm -f tty.before tty.after
  keys "clear; stty -g > tty.before; env $* build/grader/grader; echo EXIT=\$?; stty -g > tty.after" Enter
  see "Enter test" 20
}
# restored WHAT STATUS: the grader exited with STATUS and the terminal is as it was
restored() {
  if ! see "EXIT=$2" 30; then not_ok "$1" "no EXIT=$2 on the screen:" "$(cat "$screen")"; return 1; fi
  for _ in $(seq 20); do [ -s tty.after ] && break; sleep 0.1; done
  if ! cmp -s tty.before tty.after; then not_ok "$1" "the terminal's settings changed"; return 1; fi
  if grep -qF "Enter test" "$screen"; then not_ok "$1" "the dashboard is still on the screen:" "$(cat "$screen")"; return 1; fi
  ok "$1"
}
grader_pid() { pgrep -P "$(T display -p -t e2e '#{pane_pid}')" -f build/grader/grader | head -1; }

# ---- the roadmap at 80x24 --------------------------------------------------------------------
terminal 80 24
dashboard
on_screen "the roadmap at 80x24" "tshmem: build your own NVSHMEM" "0/$counted done" "Code" "Test" \
  "Points" "Perf" "Doc" "1.1  Initialization & bootstrap" "1.4  Signals, atomics, barriers" \
  "2.2  AllReduce" "○ to do" "Enter test" "q quit"
on_screen "the selected chapter's overview" "Status: to do" "week1/1.1-init/ (init.c): the stub" \
  "Its tests have not run yet: press Enter"
# fits WHAT: no line of the screen wider than 80 columns (characters, not bytes), at most 24
fits() {
  capture
  local width
  width=$(LC_ALL=C.UTF-8 wc -L <"$screen")
  if [ "$(wc -l <"$screen")" -le 24 ] && [ "$width" -le 80 ]; then ok "$1"; else
    not_ok "$1" "widest line: $width columns" "$(cat "$screen")"; fi
}
fits "it fits 80x24"
if [ -n "$optional_ids" ]; then
  on_screen "the title says which chapters are optional, left out of the count" \
    "0/$counted done ($optional_ids optional)"
fi
nrows=$(course_ids all | wc -l)
on_screen "the legend says which chapters the table shows, and that more are below" \
  "chapters 1-" "of $nrows ↓"
# select ID: Down until the chapter is selected (its overview's header names it)
select_chapter() {
  local i
  for i in $(seq "$nrows"); do
    capture
    grep -q "^ $1 " "$screen" && return 0
    keys Down
  done
  return 1
}
for id in $(course_ids optional); do
  select_chapter "$id"
  row=$(grep -F " $id  " "$screen" | head -1)
  case "$row" in
    *optional*) ok "the table labels optional chapter $id" ;;
    *) not_ok "the table labels optional chapter $id" "its row: $row" "$(cat "$screen")" ;;
  esac
  on_screen "its overview says why it is optional" "Optional: it needs" "left out of the chapters done"
  fits "at chapter $id, it still fits 80x24"
done
last=$(course_ids all | tail -1)
select_chapter "$last"
on_screen "the table scrolls to the last chapter" " $last " "of $nrows ↑"
fits "at the last chapter, it still fits 80x24"
keys Tab
fits "zoomed, it fits 80x24"
keys Tab
for _ in $(seq "$nrows"); do keys Up; done
on_screen "and back up to the first" "1.1  Initialization & bootstrap" " 1.1 Initialization & bootstrap"
keys Down
on_screen "Down selects the next chapter" " 1.2 Symmetric heap" "week1/1.2-symmetric-heap/"
keys Up
on_screen "Up selects the one before" " 1.1 Initialization & bootstrap"

# ---- Enter: the tests, live, into a scrollable pane ------------------------------------------
keys Enter
on_screen "Enter runs the chapter's tests" "testing 1.1..."
if see "/12 tests" 40; then ok "a live progress bar counts the tests"; else
  not_ok "a live progress bar counts the tests" "$(cat "$screen")"; fi
on_screen "the results and their messages" "1.1: 0 passed, 12 failed" "FAIL" "It stopped these tests:"
capture
bottom=$(grep -o "lines [0-9]*-[0-9]* of [0-9]*" "$screen")
keys PPage
capture
up=$(grep -o "lines [0-9]*-[0-9]* of [0-9]*" "$screen")
[ -n "$bottom" ] && [ -n "$up" ] && [ "$bottom" != "$up" ] && ok "PgUp scrolls the pane ($bottom, then $up)" ||
  not_ok "PgUp scrolls the pane" "before: $bottom" "after: $up" "$(cat "$screen")"
on_screen "the first task's message, once, above the tests it stopped" "Start here:" "not written yet"
keys Tab
on_screen "Tab shows the roadmap again, with the result" "0/12     0/19"
keys h
on_screen "h shows the first hint" "Hint 1 of 3:" "1.1: hint 1 of 3."
keys b
on_screen "b on a chapter without a benchmark says so" "There is no benchmark for chapter 1.1 yet" \
  "1.1: benchmark finished"
keys q
restored "q quits and gives the terminal back" 0

# ---- r reads the page, x resets with confirmation, w watches -----------------------------------
dashboard
keys r
on_screen "r opens the page in a pager" "What you will be able to do"
keys q
on_screen "the pager returns to the dashboard, the chapter read" "1.1: page read." "read"
echo "/* my attempt */" >>week1/1.1-init/init.c
keys x
on_screen "x asks before it resets" "Reset 1.1 to the stub? y: yes"
keys n
on_screen "any other key keeps the files" "Nothing was changed."
keys x
keys y
on_screen "y resets and names the backup" "1.1 is the stub again; your files are in .grader-backups/1.1-"
check "the file is the stub again" cmp -s week1/1.1-init/init.c build/stubs/week1/1.1-init/init.c
keys w
on_screen "w watches the chapter" "watching 1.1"
sleep 0.5
touch week1/1.1-init/init.c
on_screen "a save runs the tests" "testing 1.1"
keys Escape
on_screen "Esc cancels a run" "1.1: run cancelled"
no_leftovers "a cancelled run leaves nothing running"
keys q
restored "the terminal is given back after a pager and a cancelled run" 0

# ---- every other way out ---------------------------------------------------------------------
dashboard
keys C-c
restored "Ctrl-C gives the terminal back" 130
dashboard
kill -TERM "$(grader_pid)"
restored "SIGTERM gives the terminal back" 143
dashboard
keys Enter
see "testing 1.1" 20
keys C-c
restored "Ctrl-C during a run gives the terminal back" 130
no_leftovers "Ctrl-C during a run leaves nothing running"
printf '#!/bin/sh\necho "{\\"event\\":\\"chapter\\",\\"chapter\\":\\"1.1\\",\\"title\\":\\"x\\",\\"dir\\":\\"y\\"}"\nkill -SEGV $$\n' >crash.sh
chmod +x crash.sh
dashboard "TSHMEM_GRADER_RUNNER=$course/crash.sh"
keys Enter
on_screen "a crashing test run is a message, the dashboard stays" "The run crashed (signal 11" \
  "tshmem: build your own NVSHMEM"
keys q
restored "after a crashed run, q gives the terminal back" 0

# ---- sizes and colour ------------------------------------------------------------------------
terminal 100 30
dashboard
on_screen "a wide terminal shows every key" "Up/Down select"
T resize-window -t e2e -x 80 -y 24
sleep 0.5
capture
if ! grep -qF "Up/Down select" "$screen" && see "Tab zoom" 5; then ok "it redraws for 80x24"; else
  not_ok "it redraws for 80x24" "$(cat "$screen")"; fi
T resize-window -t e2e -x 50 -y 14
on_screen "it redraws for 50x14, with fewer columns" "1.1  Initialization" "Enter test"
T resize-window -t e2e -x 30 -y 10
on_screen "a too small terminal says so" "make it at least 40x12"
T resize-window -t e2e -x 80 -y 24
on_screen "and recovers" "2.5  Multi-node"
keys q
restored "q after resizing gives the terminal back" 0
color_codes() { grep -oP '\x1b\[[0-9;]*m' "$screen" | tr -d '\033[m' | tr ';' '\n' | grep -cxE '3[0-7]|4[0-7]|9[0-7]|38|48'; }
dashboard
T capture-pane -e -p -t e2e >"$screen"
[ "$(color_codes)" -gt 0 ] && ok "colours on a colour terminal" || not_ok "colours on a colour terminal" "$(cat -v "$screen" | head -5)"
keys q
see "EXIT=0" 10
dashboard NO_COLOR=1
T capture-pane -e -p -t e2e >"$screen"
[ "$(color_codes)" -eq 0 ] && ok "NO_COLOR: no colour at all" || not_ok "NO_COLOR: no colour at all" "$(cat -v "$screen" | head -5)"
keys q
restored "q with NO_COLOR gives the terminal back" 0
no_leftovers "nothing of the dashboard is left running"
