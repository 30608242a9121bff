#!/usr/bin/env bash
# Runs tools/check-symbols on two small libraries made here: one whose globals all start with
# tshmem_ (it must pass), one that also exports serve and net (it must fail, naming both and
# the object file they come from). make lint runs it before the check of the real library.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
check=$dir/../../check-symbols
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
bad() { echo "FAIL: check-symbols fixture: $*" >&2; failed=1; }

cat >"$tmp/good.c" <<'C'
static int hidden(void) { return 2; }
int tshmem_counter;
int tshmem_uses(void) { return hidden() + tshmem_counter; }
C
cat >"$tmp/proxy.c" <<'C'
int net;
int serve(void) { return net; }
C
"$cc" -c "$tmp/good.c" -o "$tmp/good.o" && "$cc" -c "$tmp/proxy.c" -o "$tmp/proxy.o" &&
  ar rc "$tmp/libgood.a" "$tmp/good.o" && ar rc "$tmp/libbad.a" "$tmp/good.o" "$tmp/proxy.o" ||
  { echo "FAIL: check-symbols fixture: could not build its libraries with $cc and ar" >&2; exit 1; }

"$check" "$tmp/libgood.a" >"$tmp/good.out" 2>&1 || bad "a library of tshmem_ globals and a static was refused: $(cat "$tmp/good.out")"
if "$check" "$tmp/libbad.a" >"$tmp/bad.out" 2>&1; then
  bad "a library that exports serve and net passed"
fi
for symbol in serve net; do
  grep -q "exports '$symbol' (from proxy.o)" "$tmp/bad.out" || bad "no line names '$symbol' and proxy.o: $(cat "$tmp/bad.out")"
done
grep -q "hidden\|tshmem_uses\|tshmem_counter" "$tmp/bad.out" && bad "a static or a tshmem_ global was named: $(cat "$tmp/bad.out")"
exit $failed
