#!/usr/bin/env bash
# --gc=incremental (docs/collectors/incremental.md): samples/lost_object.src
# hides a white object behind a black one during a cycle; with
# --barrier=none, --gc-verify catches it before the sweep, deterministically,
# naming the object, its holder, the slot and the store; under each real
# barrier the program is correct, stressed or not, and so it is with
# concurrent marking on one, two and four GC threads, and with the
# program's mark assist. The cycle's pauses and counters are reported;
# every option value is checked.
#   tests/cli/incremental_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"
lost="$(dirname "$0")/../../samples/lost_object.src"

# Each real barrier, and the snapshot barrier with concurrent marking on
# one, two and four GC threads.
for config in --barrier=dijkstra --barrier=yuasa --barrier=backward \
  "--inc-mode=concurrent --gc-threads=1" "--inc-mode=concurrent --gc-threads=2" \
  "--inc-mode=concurrent --gc-threads=4"; do
  # Unstressed, the program is too small to start a cycle: every seventh
  # allocation a step instead.
  for stress in "--gc-stress=7" "--gc-stress=1 --gc-verify"; do
    # shellcheck disable=SC2086
    out=$("$vm" --gc=incremental $config $stress "$lost" 2>&1)
    status=$?
    check "$config $stress: the hidden object kept" \
      '[ "$status" -eq 0 ] && [ "$out" = "the hidden object" ]'
  done
done

# Concurrent marking: the GC threads race the program's stores here, so
# whether --barrier=none loses the object depends on which comes first;
# what may not happen is a wrong answer.
for t in 1 2 4; do
  "$vm" --gc=incremental --inc-mode=concurrent --barrier=none --gc-threads=$t --gc-stress=1 --gc-verify \
    "$lost" >"$tmp/out" 2>"$tmp/err"
  status=$?
  check "concurrent --barrier=none, $t GC threads: kept, or caught by --gc-verify" \
    '{ [ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = "the hidden object" ]; } || { [ "$status" -eq 71 ] && [ ! -s "$tmp/out" ] && grep -q "^gc-verify: reachable object 0x[0-9a-f]* is not marked at the atomic phase" "$tmp/err"; }'
done

# Fibers move references between their stacks and the heap while rounds
# mark (tests/gc/fibers_move_refs.src): every object still there at the end.
moves="$(dirname "$0")/../gc/fibers_move_refs.src"
for t in 1 2 4; do
  for stress in "--gc-stress=1 --gc-verify" "--gc-stress=7"; do
    # shellcheck disable=SC2086
    out=$("$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t $stress "$moves" 2>&1)
    status=$?
    check "concurrent, $t GC threads, $stress: fibers move references during rounds" \
      '[ "$status" -eq 0 ] && [ "$out" = "$(cat "${moves%.src}.out")" ]'
  done
done

# One core for the program, the coordinator and every GC thread: each wait
# of the concurrent mode (a round's end, the coordinator's next request,
# the pool's threads, the tracer's termination) must end when the one it
# waits for can run only while the waiter sleeps. A hang is status 124.
if command -v taskset >/dev/null; then
  trees="$(dirname "$0")/../../samples/binary_trees.src"
  want=$("$vm" --gc=marksweep "$trees" 13)
  for t in 1 2 4; do
    out=$(timeout 120 taskset -c 0 "$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t --gc-stats="json:$tmp/one-core.json" "$trees" 13 2>&1)
    status=$?
    check "one core, $t GC threads: binary_trees completes, its cycles' rounds over" \
      '[ "$status" -eq 0 ] && [ "$out" = "$want" ] && [ "$(jq "[.counters[] | select(.name == \"concurrent rounds\") | .total] | add // 0" "$tmp/one-core.json")" -gt 0 ]'
    for stress in "--gc-stress=1 --gc-verify" "--gc-stress=7"; do
      # shellcheck disable=SC2086
      out=$(timeout 120 taskset -c 0 "$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t $stress "$moves" 2>&1)
      status=$?
      check "one core, $t GC threads, $stress: fibers move references, every round waited for ends" \
        '[ "$status" -eq 0 ] && [ "$out" = "$(cat "${moves%.src}.out")" ]'
    done
  done
fi

run_none() { "$vm" --gc=incremental --barrier=none --gc-stress=1 --gc-verify "$lost" >"$tmp/out" 2>"$1"; }
run_none "$tmp/err1"
status=$?
check "--barrier=none: --gc-verify fails (exit 71)" '[ "$status" -eq 71 ]'
check "--barrier=none: before anything is printed" '[ ! -s "$tmp/out" ]'
check "--barrier=none: one line naming the object, the holder, the slot and the store" \
  'grep -qE "^gc-verify: reachable object 0x[0-9a-f]+ is not marked at the atomic phase, so the sweep would free it: the tri-colour invariant was broken; it is held in slot 0 of the marked object named below, put there by store [0-9]+ of the cycle.s marking, of a white object into a marked one with --barrier=none \(object 0x[0-9a-f]+, slot 0, space size-class blocks, collection [0-9]+\)$" "$tmp/err1" && [ "$(wc -l <"$tmp/err1")" -eq 1 ]'
run_none "$tmp/err2"
# Addresses may differ between runs (the reservation's base); the rest may not.
strip() { sed -E 's/0x[0-9a-f]+/ADDR/g' "$1"; }
check "--barrier=none: the same failure every time" '[ "$(strip "$tmp/err1")" = "$(strip "$tmp/err2")" ]'

# The pauses are increments, and the counters say what the barrier did.
trees="$(dirname "$0")/../../samples/binary_trees.src"
"$vm" --gc=incremental --gc-stats --gc-log="$tmp/log" "$trees" 14 >/dev/null 2>"$tmp/stats"
check "stats: collections counted by kind, increments among them" \
  'grep -qE "^  collections +[0-9]+ \(Young 0, Full [0-9]+, Increment [0-9]+\)$" "$tmp/stats"'
check "log: a cycle starts at its threshold" 'grep -q "Pause Increment (Heap Threshold)" "$tmp/log"'
check "log: its steps are paid for by allocation" 'grep -q "Pause Increment (Allocation Debt)" "$tmp/log"'
for c in "barrier calls" "barrier shaded" "mark steps" "sweep steps" "cycles" "allocated marked"; do
  check "stats: counter '$c' reported" 'grep -qE "^  $c +" "$tmp/stats"'
done

check "stats: no GC threads in steps" 'grep -q "^GC statistics: incremental, serial (no GC threads)," "$tmp/stats"'

# A cycle's start, atomic phase and end each have a log line, in that order,
# numbered 1, 2, ...; the ends are as many as the cycles counted.
cycles_logged_in_order() {
  awk '/\[gc,cycle\]/ {
      n = $0; sub(/.* Cycle /, "", n); sub(/ .*/, "", n)
      step = $0 ~ / starts marking: / ? 0 : $0 ~ / atomic phase: / ? 1 : $0 ~ / ends: / ? 2 : -1
      if (step < 0 || n != (seen ? (last_step == 2 ? last + 1 : last) : 1) || step != (seen ? (last_step + 1) % 3 : 0)) bad = 1
      seen = 1; last = n; last_step = step; if (step == 2) ended++
    }
    END { exit !(seen && !bad && ended == want) }' want="$(grep -oE "^  cycles +collections +sum +[0-9]+" "$tmp/stats" | grep -oE "[0-9]+$")" "$tmp/log"
}
check "log: each cycle's start, atomic phase and end, in order" cycles_logged_in_order

# Concurrent: the pauses while marking are the start and the ends of rounds.
"$vm" --gc=incremental --inc-mode=concurrent --gc-threads=2 --gc-stats --gc-log="$tmp/log" "$trees" 14 \
  >/dev/null 2>"$tmp/stats"
check "concurrent: 2 GC threads, Yuasa's barrier" \
  'grep -q "^GC statistics: incremental, 2 GC threads, .*on GC threads beside the program: departures from the paper: Yuasa" "$tmp/stats"'
check "concurrent log: a round's end is a pause" 'grep -q "Pause Increment (Marking Done)" "$tmp/log"'
check "concurrent log: each cycle's start, atomic phase and end, in order" cycles_logged_in_order
check "concurrent log: no mark steps paid by allocation" \
  '[ "$(grep -c "Pause Increment (Allocation Debt)" "$tmp/log")" -eq "$(grep -oE "sweep steps +[0-9]+" "$tmp/stats" | head -n 1 | grep -oE "[0-9]+$")" ]'
for c in "concurrent rounds" "concurrent mark ns" "barrier calls" "tasks"; do
  check "concurrent stats: counter '$c' reported" 'grep -qE "^  $c +" "$tmp/stats"'
done
check "concurrent: each round taken by a Marking Done pause (no gc() here to finish one)" \
  '[ "$(grep -oE "^  concurrent rounds +events +sum +[0-9]+" "$tmp/stats" | grep -oE "[0-9]+$")" -eq "$(grep -c "Pause Increment (Marking Done)" "$tmp/log")" ]'

# Mark assist: with --inc-pause=100 the cycle's allowance is about one
# block, so the program, allocating while a GC thread marks 65,536 nodes,
# pays for marking itself unless the round ends first. Whether it does
# depends on the scheduler (a program thread preempted for the whole round
# makes no assist), so these runs check what holds either way: the output
# under --gc-verify, and as many Mark Assist pauses as counted, with the
# phase reported when there are any. The stressed runs below, where every
# due allocation of a round assists, check that assists happen.
churn='class N { l; r; init(l, r) { this.l = l; this.r = r; } }
fn tree(d) { if (d == 0) { return N(nil, nil); } return N(tree(d - 1), tree(d - 1)); }
let keep = tree(16); let sink = nil;
for (let i = 0; i < 300000; i += 1) { sink = [i, i, i]; }
print(keep.l != nil);'
assists() { grep -oE "^  mark assists +events +sum +[0-9]+" "$1" | grep -oE "[0-9]+$" || echo 0; }
assists_reported() {
  local n
  n=$(assists "$1")
  [ "$n" -eq "$(grep -c "Pause Increment (Mark Assist)" "$2")" ] &&
    { [ "$n" -eq 0 ] || grep -qE "^  +mark assist +[0-9]" "$1"; }
}
for t in 1 2; do
  "$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t --inc-pause=100 --gc-verify --gc-stats \
    --gc-log="$tmp/log" -e "$churn" >"$tmp/out" 2>"$tmp/stats"
  check "assist, $t GC threads: the program's output" '[ "$(cat "$tmp/out")" = true ]'
  check "assist, $t GC threads: $(assists "$tmp/stats") Mark Assist pauses, as many as counted, the phase reported" \
    'assists_reported "$tmp/stats" "$tmp/log"'
done

# One core for the program and every GC thread: an assist that asks the
# markers for their private tasks gives up after its tries (no marker runs
# while it asks), and the rounds still end. A hang is status 124. Stressed,
# every due allocation of a round assists, so each run makes assists.
if command -v taskset >/dev/null; then
  for t in 1 2 4; do
    timeout 120 taskset -c 0 "$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t --inc-pause=100 \
      --gc-verify --gc-stats -e "$churn" >"$tmp/out" 2>"$tmp/stats"
    status=$?
    check "assist on one core, $t GC threads: completes, the output right" \
      '[ "$status" -eq 0 ] && [ "$(cat "$tmp/out")" = true ]'
    timeout 120 taskset -c 0 "$vm" --gc=incremental --inc-mode=concurrent --gc-threads=$t --gc-stress=7 \
      --gc-verify --gc-stats "$trees" 8 >/dev/null 2>"$tmp/stats"
    status=$?
    check "assist on one core, stressed, $t GC threads: completes, assists made" \
      '[ "$status" -eq 0 ] && [ "$(assists "$tmp/stats")" -gt 0 ]'
  done
fi
"$vm" --gc=incremental --inc-mode=concurrent --gc-threads=1 --inc-pause=100 --inc-assist=off --gc-stats \
  --gc-log="$tmp/log" -e "$churn" >"$tmp/out" 2>"$tmp/stats"
check "assist off: no Mark Assist pause" '! grep -q "Mark Assist" "$tmp/log" && ! grep -q "mark assists" "$tmp/stats"'
# Under --gc-stress each due allocation of a round assists (and the suite's
# stressed runs race the GC threads so, with --gc-verify): a cycle's first
# due allocation after its start always finds the round running.
"$vm" --gc=incremental --inc-mode=concurrent --gc-threads=2 --gc-stress=7 --gc-verify --gc-stats "$trees" 8 \
  >/dev/null 2>"$tmp/stats"
# Those assists are Stress pauses (the countdown asked for them), each with
# its mark assist phase.
check "assist under stress: assists made, the phase reported" \
  '[ "$(assists "$tmp/stats")" -gt 0 ] && grep -qE "^  +mark assist +[0-9]" "$tmp/stats"'

"$vm" --gc=incremental --gc-stats=json:"$tmp/stats.json" "$trees" 12 >/dev/null
check "JSON: increments by kind, the schema kept" \
  '[ "$(jq .collections.by_kind.Increment "$tmp/stats.json")" -gt 0 ] && jq -en --slurpfile schema "$(dirname "$0")/../../docs/gc-stats.schema.json" --slurpfile doc "$tmp/stats.json" -f "$(dirname "$0")/schema_conforms.jq" >/dev/null'
"$vm" --gc=incremental --gc-log="$tmp/log" "$lost" >/dev/null
check "log: gc() is a full collection" 'grep -q "Pause Full (System.gc())" "$tmp/log"'

# Every option value is checked.
usage_error "bad barrier 'steele' (dijkstra, yuasa, backward or none)" --gc=incremental --barrier=steele
usage_error "bad incremental pause '99' (a percentage from 100 to 1000)" --gc=incremental --inc-pause=99
usage_error "bad incremental step multiplier '0' (a percentage from 10 to 100000)" --gc=incremental --inc-stepmul=0
usage_error "bad incremental mode 'parallel' (incremental or concurrent)" --gc=incremental --inc-mode=parallel
usage_error "--inc-mode=concurrent marks on GC threads beside the program, and --gc-threads=0 gives it none (give 1 or more)" \
  --gc=incremental --inc-mode=concurrent --gc-threads=0
usage_error "--inc-mode=concurrent marks under Yuasa's snapshot barrier: --barrier=dijkstra would need the stacks rescanned at the end, a pause as long as marking them (give --barrier=yuasa, or none for teaching)" \
  --gc=incremental --inc-mode=concurrent --barrier=dijkstra
usage_error "--inc-assist is the concurrent mode's (--inc-mode=concurrent): in steps, the program does all the marking already" \
  --gc=incremental --inc-assist=off
usage_error "bad mark assist 'maybe' (on or off)" --gc=incremental --inc-mode=concurrent --inc-assist=maybe
check "--list-gcs lists incremental, with GC threads under --inc-mode=concurrent" \
  '"$vm" --list-gcs | grep "^incremental  " | grep -q " (GC threads with --inc-mode=concurrent)"'
exit $fail
