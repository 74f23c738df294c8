#!/usr/bin/env bash
# The include rules of docs/architecture.md ("Inside gc/"), checked over
# the tracked sources: each layer includes only what is below it.
#
#   tests/tree/include_rules_test.sh SOURCE_DIR
#
#   - a file of gc/collectors/X/ includes no file of another collector's
#     folder gc/collectors/Y/;
#   - outside gc/collectors/, only gc/registry.cpp includes a collector's
#     files (tests/ may, to test them);
#   - gc/plan/ (the parts two plans share) includes no collector's files;
#   - the policies, allocators, heap and parallel machinery (gc/spaces/,
#     gc/alloc/, gc/heap/, gc/parallel/) include nothing from gc/plan/ or
#     gc/collectors/;
#   - the bottom of gc/ (layout.h, options.h, constants.h, roots.h,
#     heap_options.h, gc_stats.h) includes nothing of gc/ but itself;
#   - the policies, heap and parallel machinery include neither the
#     collector interface (gc/collector.h), nor the mutator's fast path
#     (gc/mutator.h), nor the verifier (gc/verify/verifier.h: a space
#     describes itself through gc/verify/heap_shape.h), nor an allocator;
#   - the verifier's and the snapshot writer's headers, which the
#     collection frame (gc/collector.cpp) calls, include neither
#     gc/collector.h nor gc/mutator.h, and gc/collector.h includes neither
#     them nor gc/mutator.h: no include cycle through the frame;
#   - compiler/ includes nothing from gc/ or vm/, and gc/ nothing from vm/,
#     stdlib/ or compiler/.
set -u
src=$1
cd "$src" || exit 2
if ! files=$(git ls-files -- '*.h' '*.cpp' 2>/dev/null) || [ -z "$files" ]; then
  echo "include_rules_test.sh: $src is not a git checkout; skipped"
  exit 77
fi

# The rule a file breaks by including `inc`, or nothing.
broken_rule() {
  local file=$1 inc=$2
  case $file in
    gc/collectors/*)
      local own=${file#gc/collectors/}
      own=${own%%/*}
      if [[ $inc == gc/collectors/* && $inc != gc/collectors/$own/* ]]; then
        echo "a collector includes another collector's file"
      fi
      return
      ;;
    tests/*) return ;;
    gc/registry.cpp) return ;;
  esac
  if [[ $inc == gc/collectors/* ]]; then
    echo "only gc/registry.cpp includes a collector's files"
    return
  fi
  local bottom='gc/(layout|options|constants|roots|heap_options|gc_stats)\.h'
  case $file in
    gc/layout.h | gc/options.h | gc/constants.h | gc/roots.h | gc/heap_options.h | gc/gc_stats.h)
      [[ $inc == gc/* && ! $inc =~ ^$bottom$ ]] && echo "the bottom of gc/ includes a layer above it"
      ;;
  esac
  case $file in
    gc/spaces/* | gc/heap/* | gc/parallel/*)
      case $inc in
        gc/collector.h | gc/mutator.h) echo "a policy, heap or parallel part includes the collector interface" ;;
        gc/verify/verifier.h) echo "a policy, heap or parallel part includes the verifier (heap_shape.h is its description)" ;;
        gc/alloc/*) echo "a policy, heap or parallel part includes an allocator" ;;
      esac
      ;;
  esac
  case $file in
    gc/spaces/* | gc/alloc/* | gc/heap/* | gc/parallel/*)
      [[ $inc == gc/plan/* ]] && echo "a policy, allocator, heap or parallel part includes a plan part"
      ;;
    gc/verify/*.h | gc/snapshot/snapshot.h)
      [[ $inc == gc/collector.h || $inc == gc/mutator.h ]] && echo "what the collection frame calls includes the collector interface"
      ;;
    gc/collector.h)
      [[ $inc == gc/verify/* || $inc == gc/snapshot/* || $inc == gc/mutator.h ]] && echo "the collector interface includes what its frame calls, or the fast path"
      ;;
    compiler/*)
      [[ $inc == gc/* || $inc == vm/* ]] && echo "compiler/ includes the collector library or the VM"
      ;;
  esac
  if [[ $file == gc/* && ($inc == vm/* || $inc == stdlib/* || $inc == compiler/*) ]]; then
    echo "gc/ includes a layer above it"
  fi
}

fail=0
checked=0
while IFS=: read -r file line inc; do
  checked=$((checked + 1))
  rule=$(broken_rule "$file" "$inc")
  if [ -n "$rule" ]; then
    echo "FAIL: $file:$line includes $inc: $rule"
    fail=1
  fi
done < <(xargs grep -n -o '^#include "[^"]*"' <<<"$files" | sed 's/#include "\(.*\)"$/\1/')
if [ "$checked" = 0 ]; then
  echo "FAIL: no #include found; the test reads nothing"
  exit 1
fi
[ "$fail" = 0 ] && echo "ok: $checked includes keep the include rules"
exit $fail
