#!/usr/bin/env bash
# cacheaware's command line (gc/collectors/cacheaware/cacheaware_options.h):
# every bad value, and every combination with --heap that cannot run (more
# cores than partitions, partitions under 16K), stops at startup with one
# usage line and exit 64; its options name cacheaware as their owner when
# another collector is selected; --help --gc=cacheaware lists them all, and
# --man names the homing.
#   tests/cli/cacheaware_options_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

# Bad values, each alone.
usage_error "bad partition size '5000' (a multiple of the 4K clearing block, at least 16K)" \
  --gc=cacheaware --ca-partition-size=5000
usage_error "bad partition size '8K' (a multiple of the 4K clearing block, at least 16K)" \
  --gc=cacheaware --ca-partition-size=8K
usage_error "bad partition count '0' (1 to 16777216)" --gc=cacheaware --ca-partitions=0
usage_error "bad mesh '0x3' (WxH, each side 1 to 64, e.g. 8x8)" --gc=cacheaware --ca-mesh=0x3
usage_error "bad mesh 'banana' (WxH, each side 1 to 64, e.g. 8x8)" --gc=cacheaware --ca-mesh=banana
usage_error "bad mesh '65x1' (WxH, each side 1 to 64, e.g. 8x8)" --gc=cacheaware --ca-mesh=65x1
usage_error "bad reference cache size '3' (a power of two, 1 to 1048576 entries)" --gc=cacheaware --ca-ref-cache=3
usage_error "bad global search threshold '101' (0 to 100 percent)" --gc=cacheaware --ca-global-search=101
usage_error "bad huge object compaction 'middle' (top or sequential)" --gc=cacheaware --ca-huge=middle
usage_error "bad cache line homing 'bits' (partition or lines)" --gc=cacheaware --ca-homing=bits
usage_error "bad cache line homing '' (partition or lines)" --gc=cacheaware --ca-homing=
usage_error "bad collection trigger 'never' (sizing or full)" --gc=cacheaware --ca-trigger=never

# Values that are fine alone but not together with --heap.
usage_error "a mesh of 64 cores needs at least as many partitions; there are 16" \
  --gc=cacheaware --ca-mesh=8x8 --ca-partition-size=1M --heap=16M
usage_error "a mesh of 64 cores needs at least as many partitions; there are 16" \
  --heap=16M --ca-partition-size=1M --ca-mesh=8x8 --gc=cacheaware
usage_error "--ca-partitions=2000 leaves partitions under 16K in a heap of 16M" \
  --gc=cacheaware --heap=16M --ca-partitions=2000
usage_error "--ca-partitions=100 of 256K need more than the heap limit of 16M" \
  --gc=cacheaware --heap=16M --ca-partitions=100 --ca-partition-size=256K

# Its options belong to cacheaware.
usage_error "--ca-mesh is an option of cacheaware; add --gc=cacheaware" --ca-mesh=2x2
usage_error "--ca-mesh is an option of cacheaware; add --gc=cacheaware" --gc=markcompact --ca-mesh=2x2
usage_error "--ca-ref-cache is an option of cacheaware; add --gc=cacheaware" --ca-ref-cache=16
usage_error "--ca-homing is an option of cacheaware; add --gc=cacheaware" --gc=semispace --ca-homing=lines

# Fitting combinations run.
for args in "--gc=cacheaware --ca-mesh=2x2 --heap=64M" \
  "--gc=cacheaware --ca-mesh=8x8 --ca-partition-size=16K --heap=16M --gc-threads=2" \
  "--gc=cacheaware --ca-partitions=64 --heap=16M --ca-ref-cache=1 --ca-requests=0 --ca-global-search=0" \
  "--gc=cacheaware --ca-huge=sequential --heap=16M" \
  "--gc=cacheaware --ca-homing=lines --ca-mesh=8x8 --heap=16M --gc-threads=2" \
  "--gc=cacheaware --ca-homing=lines --ca-mesh=1x1 --gc-threads=1 --heap=16M"; do
  # shellcheck disable=SC2086
  out=$("$vm" $args -e 'let a = []; for (let i = 0; i < 50000; i += 1) { push(a, [i]); } gc(); print(len(a));' 2>&1)
  check "$args: runs" '[ "$out" = 50000 ]'
done

# --help with --gc=cacheaware lists every --ca-* option, and nothing of
# another collector's.
for order in "--help --gc=cacheaware" "--gc=cacheaware --help"; do
  # shellcheck disable=SC2086
  "$vm" $order >"$tmp/help"
  check "$order: exit 0" '[ $? -eq 0 ]'
  for flag in --ca-partition-size=SIZE --ca-partitions=N --ca-mesh=WxH --ca-ref-cache=N --ca-requests=N \
    --ca-global-search=N --ca-huge=top\|sequential --ca-homing=partition\|lines --ca-trigger=sizing\|full; do
    check "$order: lists $flag" 'grep -q -- "^  $flag" "$tmp/help"'
  done
  check "$order: nine --ca-* options" '[ "$(grep -c -- "^  --ca-" "$tmp/help")" -eq 9 ]'
  check "$order: not --young" '! grep -q -- "--young" "$tmp/help"'
  check "$order: still the VM's options" 'grep -q -- "^  --gc-threads=N" "$tmp/help"'
done
"$vm" --man >"$tmp/man"
check "--man: lists --ca-homing" 'grep -qF -- "ca\-homing" "$tmp/man"'
exit $fail
