#!/usr/bin/env bash
# The mark on compute units sharing one queue (--gpu-cus) waits in two
# places: a work-group for an entry another reserved (await_entry), and an
# idle work-group while others are active. Both must end when the device
# runs its work-groups one after another, one thread playing them all
# (PoCL with POCL_MAX_PTHREAD_COUNT=1), as well as side by side: every
# collection verified, under two heap forms, with two work-groups on one
# device thread (a --gpu-cus past the compute units is held to them).
# Skipped where there is no OpenCL device.
#   tests/gpu/shared_queue_test.sh VM SOURCE_DIR
set -u
vm=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$top/tests/cli/lib.sh"

if ! "$vm" --gc=gpu --cl-list >/dev/null 2>&1; then
  echo "skipped: no OpenCL device"
  exit 0
fi

expected=$(cat "$top/samples/binary_trees.expected-10")
for threads in 1 2; do
  for cus in 2 4; do
    for heap in direct graph; do
      name="$threads device thread(s), $cus work-groups, --gpu-heap=$heap"
      out=$(POCL_MAX_PTHREAD_COUNT=$threads timeout 120 "$vm" --gc=gpu --gpu-cus=$cus --gpu-heap=$heap \
        --gc-stress=500 --gc-verify "$top/samples/binary_trees.src" 10 2>"$tmp/err")
      status=$?
      check "$name: ends (status $status)" '[ "$status" -eq 0 ]'
      check "$name: the program's output" '[ "$out" = "$expected" ]'
    done
  done
done
exit $fail
