#!/usr/bin/env bash
# The samples print what their expected files say, under every collector.
#   tests/samples.sh VM_BINARY SOURCE_DIR
set -u
vm=$1
top=$2
fail=0
check() {  # name expected-file args...
  local name=$1 expected=$2
  shift 2
  if ! diff -u "$expected" <("$vm" "$@" 2>&1) >/dev/null; then
    echo "FAIL $name: $*"
    diff -u "$expected" <("$vm" "$@" 2>&1) | head -20
    fail=1
  else
    echo "PASS $name: $*"
  fi
}
for gc in $("$vm" --list-gcs | awk '!/cannot run/ {print $1}'); do
  check hello "$top/samples/hello.expected" --gc="$gc" "$top/samples/hello.src"
  check binary_trees "$top/samples/binary_trees.expected-10" --gc="$gc" "$top/samples/binary_trees.src" 10
  check fibers "$top/samples/fibers.expected" --gc="$gc" "$top/samples/fibers.src"
  # GCBench prints timings, so only its shape is checked (scaled down 6 levels).
  out=$("$vm" --gc="$gc" "$top/samples/gcbench.src" 6 2>&1)
  if grep -q '^Completed in [0-9]* ms\.$' <<<"$out" && grep -q 'Top down construction took' <<<"$out"; then
    echo "PASS gcbench: --gc=$gc"
  else
    echo "FAIL gcbench: --gc=$gc"
    printf '%s\n' "$out" | tail -5
    fail=1
  fi
done
exit $fail
