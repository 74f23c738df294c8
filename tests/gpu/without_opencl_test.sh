#!/usr/bin/env bash
# A vm built with GCLAB_OPENCL=OFF: --list-gcs says gpu cannot run and why
# (so the suite's collector loop leaves it out), --gc=gpu stops with one
# line and exit status 69 whatever gpu options it is given, --cl-list says
# why there are no devices, --compare leaves gpu out and runs the others,
# and every other collector runs a program (stressed where it collects).
#   tests/gpu/without_opencl_test.sh VM
set -u
vm=$1
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }
why="this vm was built without OpenCL"

check "--list-gcs: gpu cannot run, and why" '"$vm" --list-gcs | grep -q "^gpu .*(cannot run: $why"'
for flags in "" "--gpu-heap=graph" "--gpu-fallback=cpu"; do
  # shellcheck disable=SC2086
  err=$("$vm" --gc=gpu $flags -e 'print(1);' 2>&1 >/dev/null)
  status=$?
  check "--gc=gpu $flags: exit status 69" '[ "$status" -eq 69 ]'
  check "--gc=gpu $flags: one line that says why" \
    '[ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ] && printf "%s" "$err" | grep -q "^vm: --gc=gpu: $why"'
done
check "--cl-list says why there are no devices" '"$vm" --gc=gpu --cl-list | grep -q "$why"'
out=$("$vm" --compare -e 'let a = []; for (let i = 0; i < 2000; i += 1) { push(a, [i]); } print(len(a));' 2>&1)
check "--compare leaves gpu out, saying why" 'grep -q "leaving out gpu (cannot run: $why" <<<"$out"'
others=$("$vm" --list-gcs | grep -v "cannot run" | awk '{print $1}')
check "the other collectors are listed as runnable" '[ "$(wc -w <<<"$others")" -ge 5 ]'
for gc in $others; do
  # --gc-stress is refused for a collector that never collects.
  stress=--gc-stress=1
  "$vm" --list-gcs | grep -q "^$gc .*(never collects)" && stress=
  # shellcheck disable=SC2086
  out=$("$vm" --gc="$gc" $stress --gc-verify -e 'let a = [[1], [2, [3]]]; gc(); print(a);' 2>&1)
  check "$gc runs a program, verified${stress:+ and stressed}" '[ "$out" = "[[1], [2, [3]]]" ]'
done
exit $fail
