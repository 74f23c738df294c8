#!/usr/bin/env bash
# vm --min-heap, --heap=Nx and --compare --heaps. The search's answer is
# checked against a brute-force scan of sizes on three small programs
# (within its stated resolution); a program with no minimum (one that
# needs more than the machine has, one that fails at every size, one that
# never ends) is refused with its reason and exit 70; hostile values are
# usage errors; a run out of memory in --compare is reported so and is no
# disagreement; the JSON documents keep their schemas' keys.
#
#   tests/cli/min_heap_test.sh VM SOURCE_DIR
set -u
vm=$1
top=$2
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
conforms() {  # schema, document
  jq -e -n --slurpfile schema "$top/docs/$1" --slurpfile doc "$2" -f "$top/tests/cli/schema_conforms.jq" >/dev/null
}

# completes GC HEAP PROGRAM ARGS...: the run at HEAP bytes completes (0);
# runs out of memory (1); anything else fails the test (2). One GC thread:
# with several, which thread copies or promotes what varies from run to
# run, and so does a parallel collector's need near its minimum
# (docs/observability.md, "Heap sizes as multiples of the minimum").
completes() {
  local gc=$1 heap=$2
  shift 2
  "$vm" --gc="$gc" --gc-threads=1 --gc-overhead-limit=off --heap="$heap" "$@" </dev/null >/dev/null 2>"$tmp/probe.err"
  local status=$?
  [ "$status" -eq 0 ] && return 0
  [ "$status" -eq 70 ] && head -c 22 "$tmp/probe.err" | grep -qx "error: out of memory: " && return 1
  echo "unexpected: --gc=$gc --heap=$heap $* exited $status: $(head -n 1 "$tmp/probe.err")"
  return 2
}

# The search against a scan: the smallest size that completes, trying
# every 4K from well below the answer, lies within the resolution of it.
resolution=$((64 * 1024))
step=$((4 * 1024))
scan_case() {  # name, collector, program and arguments
  local name=$1 gc=$2
  shift 2
  local program=("$@")
  "$vm" --min-heap --gc="$gc" --gc-threads=1 --gc-overhead-limit=off --min-heap-resolution=64K --gc-stats=json "$@" </dev/null >"$tmp/$name.json" 2>"$tmp/$name.err"
  check "$name: exit 0" '[ $? -eq 0 ]'
  check "$name: the document keeps its schema's keys" 'conforms gc-min-heap.schema.json "$tmp/$name.json"'
  local min fails
  min=$(jq -r .min_heap_bytes "$tmp/$name.json")
  fails=$(jq -r '.fails_at_bytes // 0' "$tmp/$name.json")
  check "$name: a minimum above the floor, within the resolution of a size that fails" \
    '[ "$fails" -gt 0 ] && [ $((min - fails)) -le $resolution ]'
  local start=$((fails - 2 * resolution)) found=""
  [ "$start" -lt 262144 ] && start=262144
  for ((heap = start; heap <= min; heap += step)); do
    completes "$gc" "$heap" "${program[@]}"
    case $? in
      0) found=$heap; break ;;
      2) break ;;
    esac
  done
  check "$name: the scan found a size that completes" '[ -n "$found" ]'
  check "$name: the scan's smallest ($found) within the resolution of the search's ($min)" \
    '[ -n "$found" ] && [ "$found" -le "$min" ] && [ $((min - found)) -le $resolution ]'
  check "$name: the search's answer completes and its failing size does not" \
    'completes "$gc" "$min" "${program[@]}" && { completes "$gc" "$fails" "${program[@]}"; [ $? -eq 1 ]; }'
  check "$name: the runs are listed, the last ones within the bracket" \
    '[ "$(jq ".runs | length" "$tmp/$name.json")" -ge 3 ] && jq -e ".runs[0].heap_bytes == 262144" "$tmp/$name.json" >/dev/null'
}
scan_case binary_trees marksweep "$top/samples/binary_trees.src" 12
scan_case cycles_live semispace "$top/tests/gc/cycles_live.src"
scan_case deep_tree marksweep "$top/tests/gc/deep_tree.src"

# The text form names the minimum, the resolution and the number of runs.
"$vm" --min-heap --gc=marksweep "$top/samples/binary_trees.src" 10 </dev/null >"$tmp/text.out" 2>"$tmp/text.err"
check "text: exit 0" '[ $? -eq 0 ]'
check "text: the minimum" 'grep -Eq "^minimum heap under marksweep: [0-9.]+ (KiB|MiB) \(--heap=[0-9]+\); it completes at [0-9]+ bytes and not at [0-9]+ bytes$" "$tmp/text.out"'
check "text: the default resolution, 1%" 'grep -Eq "^resolution: 1% \([0-9]+ bytes at this minimum\); reached: [0-9]+ bytes$" "$tmp/text.out"'
check "text: the runs" 'grep -Eq "^runs: [0-9]+ \([0-9]+ out of memory, 0 timed out\), [0-9.]+ s in all$" "$tmp/text.out"'
check "text: no progress on a pipe" '[ ! -s "$tmp/text.err" ]'
"$vm" --min-heap --progress --gc=marksweep "$top/samples/binary_trees.src" 10 </dev/null >/dev/null 2>"$tmp/progress.err"
check "--progress: a line per run on a pipe" \
  '[ "$(grep -c "^vm: --min-heap: run [0-9]*, \(looking for a size that completes\|bisecting\), at most [0-9]* more" "$tmp/progress.err")" -eq "$(grep -Eo "^runs: [0-9]+" "$tmp/text.out" | grep -Eo "[0-9]+")" ]'

# No minimum: the reason, and exit 70.
huge='let a = NumArray(1e14); print(len(a));'
"$vm" --min-heap --gc=marksweep -e "$huge" </dev/null >"$tmp/out" 2>"$tmp/err"
check "needs more: exit 70" '[ $? -eq 70 ]'
check "needs more: said so" 'grep -q "^no minimum heap: the program runs out of memory under marksweep even at --heap=[0-9]* (.*, this machine.s memory): it needs more than the machine has$" "$tmp/out"'
"$vm" --heap=2x -e "$huge" </dev/null >"$tmp/out" 2>"$tmp/err"
check "--heap=2x, needs more: exit 70" '[ $? -eq 70 ]'
check "--heap=2x, needs more: refused with the reason" 'grep -qx "vm: --heap: no minimum heap to multiply: the program runs out of memory under marksweep even at .*: it needs more than the machine has" "$tmp/err"'
check "--heap=2x, needs more: the program never ran" '[ ! -s "$tmp/out" ]'
"$vm" --heap=2x -e 'print(1); error("boom");' </dev/null >"$tmp/out" 2>"$tmp/err"
check "--heap=2x, fails everywhere: exit 70" '[ $? -eq 70 ]'
check "--heap=2x, fails everywhere: refused, not a heap question" 'grep -q "^vm: --heap: no minimum heap to multiply: under marksweep, at --heap=262144 (256.0 KiB) the run exited 70: error: boom: not a question of heap size$" "$tmp/err"'
"$vm" --min-heap --min-heap-time-limit=1 -e 'while (true) {}' </dev/null >"$tmp/out" 2>"$tmp/err"
check "a hang: exit 70 within the limit" '[ $? -eq 70 ]'
check "a hang: said so" 'grep -q "did not end within the time limit, before any run completed" "$tmp/out"'
"$vm" --min-heap -e 'print(len(gc_stats()["collector"])); exit(3);' </dev/null >"$tmp/out" 2>"$tmp/err"
check "exit(3): the program's own status completes" '[ $? -eq 0 ] && grep -q "^minimum heap under semispace: 256.0 KiB" "$tmp/out"'

# --heap=Nx: the limit named, and the run under it.
"$vm" --min-heap --gc=marksweep --gc-stats=json "$top/samples/binary_trees.src" 10 </dev/null >"$tmp/ref.json"
refmin=$(jq -r .min_heap_bytes "$tmp/ref.json")
"$vm" --gc=semispace --heap=2.5x --gc-stats=json:"$tmp/stats.json" "$top/samples/binary_trees.src" 10 </dev/null >"$tmp/out" 2>"$tmp/err"
check "--heap=2.5x: exit 0 and the program's output" '[ $? -eq 0 ] && diff -q "$tmp/out" "$top/samples/binary_trees.expected-10" >/dev/null'
limit=$(sed -n 's/^vm: heap limit .* (\([0-9]*\) bytes) = 2.5 x marksweep.s minimum .* (found in [0-9]* runs, resolution 1%)$/\1/p' "$tmp/err")
check "--heap=2.5x: the limit named on stderr" '[ -n "$limit" ]'
check "--heap=2.5x: 2.5 times marksweep's minimum, within the search's resolution ($limit, $refmin)" \
  'awk -v l="$limit" -v m="$refmin" "BEGIN { exit !(l >= 2.5 * m * 0.97 && l <= 2.5 * m * 1.03) }"'
check "--heap=2.5x: --gc-stats names it" 'jq -e ".heap_limit.multiple == 2.5 and .heap_limit.reference == \"marksweep\" and .heap_limit.bytes == $limit" "$tmp/stats.json" >/dev/null'
"$vm" --heap=1.5x --heap-reference=semispace --gc=marksweep "$top/samples/binary_trees.src" 10 </dev/null >/dev/null 2>"$tmp/err"
check "--heap-reference=semispace: named" 'grep -q "^vm: heap limit .* = 1.5 x semispace.s minimum " "$tmp/err"'

# Hostile values: usage errors, nothing runs.
for v in 0x 1e999x x -2x nanx infx 0.5x 101x 2xx 1e2x ' 2x'; do
  usage_error "bad heap multiple '$v' (a number from 1 to 100 followed by x, such as 2.5x: that many times the reference collector's minimum heap)" "--heap=$v"
done
usage_error "bad heap size '12K' (at least 256K, the smallest heap every collector starts the VM in; examples: 64M, 2G; or a multiple of the minimum heap, such as 2.5x)" --heap=12K
for v in 0% 51% 1e999 nan% -1% 512 x 2T; do
  usage_error "bad --min-heap-resolution '$v' (a size from 1K, such as 64K, or a percentage from 0.1% to 50%)" "--min-heap-resolution=$v"
done
usage_error "bad --heaps list '2x,,3x' (multiples of the minimum heap separated by commas, each a number from 1 to 100 followed by x, such as 1.5x,2x,3x)" --compare --heaps=2x,,3x
usage_error "bad --heaps list '2' (multiples of the minimum heap separated by commas, each a number from 1 to 100 followed by x, such as 1.5x,2x,3x)" --compare --heaps=2
usage_error "--heaps sweeps the heap sizes of a comparison: add --compare" --heaps=2x
usage_error "--heaps gives the heap sizes: drop --heap" --compare --heaps=2x --heap=64M
usage_error "--min-heap finds the heap: drop --heap" --min-heap --heap=64M
usage_error "--min-heap searches under one collector (--gc); --compare runs several" --min-heap --compare
usage_error "--heap-reference names the collector whose minimum heap --heap=Nx or --heaps multiplies: give one of them" --heap-reference=semispace
usage_error "bad time limit '0' (1 to 86400 seconds)" --min-heap --min-heap-time-limit=0

# --compare: a collector out of memory is reported so, is no
# disagreement, and the others' status is the comparison's. At 1x
# marksweep's minimum, marksweep completes and semispace, which keeps half
# its heap to copy into, cannot.
# One GC thread, and a program whose minimum is well above the smallest
# heap: near its minimum a parallel copy's need varies from run to run.
"$vm" --gc=marksweep "$top/samples/binary_trees.src" 12 </dev/null >"$tmp/expected-12"
"$vm" --compare=semispace,marksweep --gc-threads=1 --heap=1x "$top/samples/binary_trees.src" 12 </dev/null >"$tmp/out" 2>"$tmp/err"
check "compare 1x: exit 0" '[ $? -eq 0 ]'
check "compare 1x: the output once, marksweep's" 'diff -q "$tmp/out" "$tmp/expected-12" >/dev/null'
check "compare 1x: semispace out of memory" 'grep -Eq "^semispace .* out of memory$" "$tmp/err"'
check "compare 1x: marksweep the reference" 'grep -Eq "^marksweep .* reference$" "$tmp/err"'
check "compare 1x: no disagreement" '! grep -q disagrees "$tmp/err"'
check "compare 1x: the bound left semispace out" '! grep -Eq "^  semispace +[0-9.]+x" "$tmp/err"'

# --compare --heaps: every collector at every size, out of memory marked.
"$vm" --compare=semispace,marksweep --gc-threads=1 --heaps=1x,3x --gc-stats=json:"$tmp/sweep.json" "$top/samples/binary_trees.src" 12 </dev/null >"$tmp/out" 2>"$tmp/err"
check "sweep: exit 0" '[ $? -eq 0 ]'
check "sweep: the document keeps its schema's keys" 'conforms gc-compare.schema.json "$tmp/sweep.json"'
check "sweep: two sizes of two runs" 'jq -e "[.heaps.sizes[].runs | length] == [2, 2] and (.runs | length) == 4" "$tmp/sweep.json" >/dev/null'
check "sweep: 1x is the reference minimum" 'jq -e ".heaps.sizes[0].heap_bytes == .heaps.reference.min_heap_bytes" "$tmp/sweep.json" >/dev/null'
check "sweep: semispace out of memory at 1x, with no times" 'jq -e ".heaps.sizes[0].runs[0] | .out_of_memory and .total_ms == null" "$tmp/sweep.json" >/dev/null'
check "sweep: every other run completed, GC time within total time" \
  'jq -e "[.heaps.sizes[].runs[] | select(.out_of_memory | not) | .gc_ms <= .total_ms and .total_ms > 0] | length == 3 and all" "$tmp/sweep.json" >/dev/null'
"$vm" --compare=semispace,marksweep --gc-threads=1 --heaps=1x,3x "$top/samples/binary_trees.src" 12 </dev/null >"$tmp/out" 2>"$tmp/err"
check "sweep table: the reference named" 'grep -Eq "^heap sizes: multiples of marksweep.s minimum heap, [0-9.]+ (KiB|MiB) \(found in [0-9]+ runs, resolution 1%\)$" "$tmp/err"'
check "sweep table: 1x row, semispace out of memory" 'grep -Eq "^1x +[0-9.]+ (KiB|MiB) +out of memory +[0-9.]+ / +[0-9.]+ *$" "$tmp/err"'
check "sweep table: 3x row, both times" 'grep -Eq "^3x +[0-9.]+ (KiB|MiB) +[0-9.]+ / +[0-9.]+ +[0-9.]+ / +[0-9.]+ *$" "$tmp/err"'
"$vm" --compare=semispace,marksweep --heaps=2x --progress -e 'print(1);' </dev/null >/dev/null 2>"$tmp/err"
check "sweep --progress: each run numbered" 'grep -q "^vm: --compare: run 1 of 2, 1 remain after it: semispace at 2x" "$tmp/err" && grep -q "^vm: --compare: run 2 of 2, 0 remain after it: marksweep at 2x" "$tmp/err"'

exit $fail
