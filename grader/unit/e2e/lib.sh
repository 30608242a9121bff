# lib.sh: what the grader's end-to-end scripts share. Each script works in a copy of the course
# in a temp folder whose chapters are fresh stubs (a learner who has not started), so that it
# never touches your files or your progress; it prints "ok - what" or "not ok - what" with
# "# detail" lines, which `grader selftest` (make test) counts.
set -u
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
course=""

ok() { echo "ok - $1"; }

# not_ok WHAT [DETAIL...]: each detail may hold several lines
not_ok() {
  echo "not ok - $1"
  shift
  local d
  for d in "$@"; do printf '%s\n' "$d" | head -40 | sed 's/^/# /'; done
}

# check WHAT COMMAND...: ok when the command succeeds
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else not_ok "$what" "failed: $*"; fi
}

# expect WHAT FILE TEXT...: ok when the file holds every text (fixed strings)
expect() {
  local what=$1 file=$2 t
  shift 2
  for t in "$@"; do
    if ! grep -qF -- "$t" "$file"; then
      not_ok "$what" "missing: $t" "in:" "$(cat "$file")"
      return 1
    fi
  done
  ok "$what"
}

# The copy: course files without build/, your progress or backups; chapters from build/stubs/;
# the grader, the suites and the stubs' build reused (the stubs' build is the learner's here).
make_course() {
  for need in build/grader/grader build/stubs/lib/libtshmem.a; do
    if [ ! -e "$src/$need" ]; then
      echo "not ok - $need exists (make test builds it first)"
      exit 1
    fi
  done
  course=$(mktemp -d /tmp/tshmem-e2e-XXXXXX)
  trap cleanup EXIT
  (cd "$src" && tar cf - --exclude=./build --exclude=./.git --exclude='./.tshmem-progress.json*' \
                         --exclude=./.grader-backups .) | (cd "$course" && tar xf -)
  (cd "$src/build/stubs" && find . -path './week*' -type f) | while IFS= read -r f; do
    cp -p "$src/build/stubs/$f" "$course/$f"
  done
  mkdir -p "$course/build/learner"
  cp -a "$src/build/grader" "$src/build/tools" "$src/build/stubs" "$course/build/"
  cp -a "$src/build/stubs/lib" "$src/build/stubs/bin" "$course/build/learner/"
  # the stubs' objects are the learner's here (objects are kept by source: build/obj/stubs-...)
  local objs
  mkdir -p "$course/build/obj"
  for objs in "$src"/build/obj/stubs*; do
    [ -d "$objs" ] && cp -a "$objs" "$course/build/obj/learner${objs##*/stubs}"
  done
  unset TSHMEM_PROGRESS TSHMEM_ROOT TSHMEM_GRADER_RUNNER TSHMEM_GRADER_BENCH_FIXTURE
  export NO_PROGRESS=1
  G="$course/build/grader/grader"
  cd "$course" || exit 1
}

# course_ids all|counted|optional: ids of grader/course.json's chapters, one a line: every one,
# the available ones that the counts take (no hardware needed), the optional ones (GPUs).
course_ids() {
  python3 - "$1" "$src/grader/course.json" <<'PY'
import json, sys
for ch in json.load(open(sys.argv[2]))["chapters"]:
    avail, opt = ch.get("available"), bool(ch.get("requires"))
    if sys.argv[1] == "all" or (avail and opt == (sys.argv[1] == "optional")):
        print(ch["id"])
PY
}
counted=$(course_ids counted | wc -l)
# the optional ids as the grader joins them: "3.3 and 3.7", "3.3, 3.7 and 3.9"
optional_ids=$(course_ids optional | paste -sd, | sed 's/,/, /g; s/\(.*\), /\1 and /')

# Processes still running from the copy (their command lines name its folder).
leftovers() {
  local pid out=""
  for pid in $(pgrep -f -- "$course" 2>/dev/null); do
    [ "$pid" = "$$" ] && continue
    case "$(ps -o comm= -p "$pid" 2>/dev/null)" in tmux*) continue ;; esac # the test's terminal
    out+="$(ps -o pid=,args= -p "$pid" 2>/dev/null)"$'\n'
  done
  printf '%s' "$out"
}

# no_leftovers WHAT: ok when nothing of the copy runs any more (after up to 10 s)
no_leftovers() {
  local left
  for _ in $(seq 50); do
    left=$(leftovers)
    [ -z "$left" ] && { ok "$1"; return 0; }
    sleep 0.2
  done
  not_ok "$1" "still running:" "$left"
}

cleanup() {
  local pid
  cd /
  [ -n "${tmux_socket:-}" ] && tmux -L "$tmux_socket" kill-server 2>/dev/null
  for pid in $(pgrep -f -- "$course" 2>/dev/null); do
    [ "$pid" != "$$" ] && kill -KILL "$pid" 2>/dev/null
  done
  [ -n "$course" ] && rm -rf "$course"
}

# wait_for FILE TEXT [SECONDS]: until the file holds the text
wait_for() {
  local i
  for i in $(seq $((${3:-60} * 5))); do
    grep -qF -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
