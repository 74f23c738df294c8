#!/usr/bin/env bash
# --gpu-heap=shared on a device that shares host memory (PoCL's CPU device
# here): the device marks the heap in place through buffers kept across
# collections, and nothing is transferred: the roots are written in place
# into queues the host maps, so the statistics have no `gpu transfer`
# phase (the heap made per collection, direct, has one). Skipped where the
# device has memory of its own, or where there is no device.
#   tests/gpu/shared_heap_test.sh VM SOURCE_DIR
set -u
vm=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$top/tests/cli/lib.sh"

if ! "$vm" --gc=gpu --cl-list 2>/dev/null | grep -q "host-shared memory"; then
  echo "skipped: no OpenCL device shares memory with the host"
  exit 0
fi

phases() { jq -r '.phases[].name' "$1"; }
count() { jq -r --arg n "$2" '[.counters[] | select(.name == $n) | .total] | add // 0' "$1"; }

# Many collections, each verified (the mark set against the verifier's).
out=$("$vm" --gc=gpu --gpu-heap=shared --gc-stress=500 --gc-verify --gc-stats=json:"$tmp/shared.json" \
  "$top/samples/binary_trees.src" 10)
check "shared: the program's output" '[ "$out" = "$(cat "$top/samples/binary_trees.expected-10")" ]'
collections=$(jq -r '.collections.total' "$tmp/shared.json")
check "shared: many collections ($collections)" '[ "$collections" -ge 20 ]'
check "shared: no transfer phase" '! phases "$tmp/shared.json" | grep -qx "gpu transfer"'
check "shared: the roots written in place" 'phases "$tmp/shared.json" | grep -qx "gpu roots in place"'
check "shared: the device marked" '[ "$(count "$tmp/shared.json" "gpu kernel device ns")" -gt 0 ]'
made=$(count "$tmp/shared.json" "gpu heap buffers made")
check "shared: buffers kept across collections ($made made)" '[ "$made" -ge 1 ] && [ "$made" -lt "$collections" ]'

"$vm" --gc=gpu --gc-stress=500 --gc-stats=json:"$tmp/direct.json" "$top/samples/binary_trees.src" 10 >/dev/null
check "direct: a transfer phase" 'phases "$tmp/direct.json" | grep -qx "gpu transfer"'
check "direct: no buffers kept" '[ "$(count "$tmp/direct.json" "gpu heap buffers made")" -eq 0 ]'
exit $fail
