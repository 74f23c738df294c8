#!/usr/bin/env bash
# Every figure of every collector's --gc-stats JSON, after a run in which it
# collects (docs/observability.md, "What the figures measure"): each
# counter's unit is in the vocabulary (gc/observe/counter.h, kUnitNames),
# the top-level phases' parts of the pause add up to at most the pause
# total, a nested phase's time is within its parent's, and the GC threads
# printed are those in use. The collectors come from `vm --list-gcs`, so a
# new one is covered without a change here.
#   tests/observe/figures_test.sh VM_BINARY SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh" "$1" "$2" figures

# The vocabulary, read from its one definition.
units=$(sed -n '/kUnitNames\[\] = {/,/^};/p' "$top/gc/observe/counter.h" | grep -o '"[a-z]*"' | tr -d '"' |
  jq -R . | jq -sc .)
check "the vocabulary has units" '[ "$(jq length <<<"$units")" -gt 10 ]'

# Explicit collections and allocation with survivors, so that young and
# full collections both run where a collector has both; then full
# collections of a larger live set, so that a phase nested in another
# (markcompact's old generation) takes most of their pauses and counting it
# twice would pass 100%.
cat >"$tmp/prog.src" <<'SRC'
let keep = [];
for (let i = 0; i < 300000; i += 1) {
  let a = [i, i, i];
  if (i % 500 == 0) { push(keep, a); }
  if (i % 100000 == 0) { gc(); }
}
print("done", len(keep));
for (let i = 0; i < 40000; i += 1) { push(keep, [i]); }
for (let i = 0; i < 5; i += 1) { gc(); }
SRC

# Counters that measure a size at a moment (a level), whose sum over the
# collections means nothing: their kind must be peak. Named here from their
# declarations, since a name alone does not say it.
levels='["from-space bytes", "young bytes", "young semispace bytes", "gpu graph nodes", "accel sample cycles",
  "block bytes", "live cell bytes", "live object bytes", "free cell bytes", "block tail bytes",
  "forwarding table bytes", "free areas"]'

# Shares are in ms to 3 decimals: a sum may exceed its bound by rounding.
slack=0.01
# A collector that never collects has no collection's figures to check
# (cli/none checks that it reports none).
collectors=$("$vm" --list-gcs | awk '!/cannot run/ && !/\(never collects\)/ {print $1}')
check "--list-gcs lists collectors" '[ -n "$collectors" ]'
for gc in $collectors; do
  no_threads=0
  # In its default configuration: a collector that uses GC threads only
  # under an option uses none here.
  "$vm" --list-gcs | grep "^$gc " | grep -qE "\((no GC threads|GC threads with [^)]*)\)" && no_threads=1
  for threads in 0 1 2; do
    t="$gc threads=$threads"
    json="$tmp/$gc-$threads.json"
    "$vm" --gc="$gc" --gc-threads=$threads --heap=32M --gc-stats=json:"$json" "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
    check "$t: runs" '[ $? -eq 0 ] && [ "$(cat "$tmp/out")" = "done 600" ]'
    check "$t: collects" 'jq -e ".collections.total > 0 and .detailed" "$json" >/dev/null'
    check "$t: every counter's unit is in the vocabulary" \
      'jq -e --argjson units "$units" "[.counters[] | select(.unit as \$u | \$units | index(\$u) | not)] | length == 0" "$json" >/dev/null'
    bad_units=$(jq -r --argjson units "$units" '.counters[] | select(.unit as $u | $units | index($u) | not) | "\(.name) (\(.unit))"' "$json" 2>/dev/null | paste -sd, -)
    [ -n "$bad_units" ] && echo "  outside the vocabulary: $bad_units"
    check "$t: every counter has a kind" 'jq -e "[.counters[] | select(.kind != \"sum\" and .kind != \"peak\")] | length == 0" "$json" >/dev/null'
    check "$t: a counter named for a peak is one" \
      'jq -e "[.counters[] | select((.name | test(\"peak|widest|busiest|largest\")) and .kind != \"peak\")] | length == 0" "$json" >/dev/null'
    check "$t: the levels are peaks, not sums" \
      'jq -e --argjson levels "$levels" "[.counters[] | select(.name as \$n | \$levels | index(\$n)) | select(.kind != \"peak\")] | length == 0" "$json" >/dev/null'
    check "$t: a peak's total is its largest collection's" \
      'jq -e "[.counters[] | select(.kind == \"peak\" and .total != .max_per_collection)] | length == 0" "$json" >/dev/null'
    check "$t: MMU is 0 at a window no longer than the longest pause" \
      'jq -e "[.pause_ms.max as \$max | .mmu.windows[] | select(.window_ms <= \$max and .utilisation != 0)] | length == 0" "$json" >/dev/null'
    check "$t: a worst window below 100% holds a collection" \
      'jq -e "[.mmu.windows[] | select(.utilisation < 1 and (.worst_collections | length) == 0)] | length == 0" "$json" >/dev/null'
    check "$t: the MMU curve is there, and BMU never falls nor exceeds MMU" \
      'jq -e "(.mmu.curve | length) > 0 and (.mmu.curve as \$c | [range(1; \$c | length) | select(\$c[.].bmu < \$c[. - 1].bmu or \$c[.].bmu > \$c[.].mmu)] | length == 0)" "$json" >/dev/null'
    check "$t: a worst window's phases and the pause outside them add up to its paused time" \
      'jq -e --argjson slack $slack "[.mmu.windows[] | select((([.worst_phases[].ms] | add // 0) + .worst_outside_phases_ms - (1 - .utilisation) * .window_ms) | fabs > \$slack)] | length == 0" "$json" >/dev/null'
    check "$t: CPU time: each thread's fits its wall time (the program's outside and inside collections, each GC thread's in the run)" \
      'jq -e --argjson extra $((threads > 1 ? threads - 1 : 0)) ".cpu_ms as \$c | \$c.mutator > 0 and \$c.mutator <= .run_time_ms - .pause_ms.host_total + 1 and \$c.collecting_thread <= .pause_ms.host_total + 1 and \$c.gc_threads <= \$extra * .run_time_ms + 1" "$json" >/dev/null'
    if [ $threads -le 1 ] || [ $no_threads = 1 ]; then
      check "$t: CPU time: no GC thread but the program's" 'jq -e ".cpu_ms.gc_threads == 0" "$json" >/dev/null'
    else
      check "$t: CPU time: the GC threads ran" 'jq -e ".cpu_ms.gc_threads > 0" "$json" >/dev/null'
    fi
    check "$t: no worker's peak exceeds the run's" \
      'jq -e "([.counters[] | select(.kind == \"peak\") | {(.name): .total}] | add // {}) as \$peaks | [.workers[].counters | to_entries[] | select(\$peaks[.key] != null and .value > \$peaks[.key])] | length == 0" "$json" >/dev/null'
    check "$t: top-level shares of the pause add up to at most 100%" \
      'jq -e --argjson slack $slack "([.phases[] | select(.parent == null) | .pause_ms] | add // 0) <= .pause_ms.total + \$slack" "$json" >/dev/null'
    check "$t: a nested phase's time is within its parent's" \
      'jq -e --argjson slack $slack ".phases as \$p | [\$p[] | select(.parent != null) | select(.wall_ms > \$p[.parent].wall_ms + \$slack or .pause_ms > \$p[.parent].wall_ms + \$slack or .depth != \$p[.parent].depth + 1)] | length == 0" "$json" >/dev/null'
    check "$t: nested phases' shares add up to at most their parent's wall time" \
      'jq -e --argjson slack $slack ".phases as \$p | [range(\$p | length) as \$i | select(([\$p[] | select(.parent == \$i) | .pause_ms] | add // 0) > \$p[\$i].wall_ms + \$slack)] | length == 0" "$json" >/dev/null'
    want=$threads
    [ $no_threads -eq 1 ] && want=0
    check "$t: gc_threads is the $want in use" '[ "$(jq .gc_threads "$json")" -eq $want ]'
    "$vm" --gc="$gc" --gc-threads=$threads --heap=32M --gc-stats "$tmp/prog.src" >/dev/null 2>"$tmp/table"
    if [ "$want" -eq 0 ]; then
      check "$t: the table says serial" 'head -1 "$tmp/table" | grep -q "^GC statistics: $gc, serial (no GC threads), "'
    else
      check "$t: the table says $want GC thread(s)" 'head -1 "$tmp/table" | grep -Eq "^GC statistics: $gc, $want GC threads?, "'
    fi
  done
  # Under the option that gives it GC threads, all of them besides the
  # program's (incremental's concurrent marking): each is counted, and the
  # marking's CPU time is theirs.
  with=$("$vm" --list-gcs | grep "^$gc " | sed -n 's/.*(GC threads with \([^)]*\)).*/\1/p')
  [ -z "$with" ] && continue
  for threads in 1 2; do
    t="$gc $with threads=$threads"
    json="$tmp/$gc-with-$threads.json"
    "$vm" --gc="$gc" "$with" --gc-threads=$threads --heap=32M --gc-stats=json:"$json" "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
    check "$t: runs" '[ $? -eq 0 ] && [ "$(cat "$tmp/out")" = "done 600" ]'
    check "$t: gc_threads is the $threads in use" '[ "$(jq .gc_threads "$json")" -eq $threads ]'
    check "$t: CPU time: the GC threads ran, each within the run" \
      'jq -e --argjson n $threads ".cpu_ms.gc_threads > 0 and .cpu_ms.gc_threads <= \$n * .run_time_ms + 1" "$json" >/dev/null'
    "$vm" --gc="$gc" "$with" --gc-threads=$threads --heap=32M --gc-stats "$tmp/prog.src" >/dev/null 2>"$tmp/table"
    check "$t: the table says $threads GC thread(s)" 'head -1 "$tmp/table" | grep -Eq "^GC statistics: $gc, $threads GC threads?, "'
  done
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
