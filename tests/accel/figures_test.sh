#!/usr/bin/env bash
# accel's figures (docs/collectors/accel.md): its pauses are the simulated
# hardware's time, labelled as simulated, with the host's time beside them;
# the spill peak is reported; a leaking program ends in the documented
# out-of-memory error, its last collection given up unsimulated.
#   tests/accel/figures_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/../cli/lib.sh"

program='let t = []; for (let i = 0; i < 3; i += 1) { push(t, [i]); gc(); } print(len(t));'

# --- the pause: simulated in the log, the table, the JSON and --compare.
"$vm" --gc=accel --gc-log --gc-stats=json:"$tmp/s.json" -e "$program" >"$tmp/out" 2>"$tmp/log"
check "log: every pause simulated, with the host's time" \
  '[ "$(grep -Ec "Pause Full .* [0-9.]+ms simulated \(host [0-9.]+ms\)$" "$tmp/log")" -eq 3 ]'
check "json: three simulated collections" 'jq -e ".pause_ms.simulated_collections == 3" "$tmp/s.json" >/dev/null'
# The simulated pause is the unit's mark and sweep cycles, one ns each.
check "json: the pause total is the unit's cycles" \
  'jq -e "([.counters[] | select(.name == \"accel cycles\") | .total][0] / 1e6) as \$ms | (.pause_ms.total - \$ms) | fabs < 0.01" "$tmp/s.json" >/dev/null'
check "json: the host took longer than the simulated hardware" \
  'jq -e ".pause_ms.host_total > .pause_ms.total" "$tmp/s.json" >/dev/null'
check "json: the phases are the simulated mark and sweep" \
  '[ "$(jq -r "[.phases[].name] | join(\",\")" "$tmp/s.json")" = "mark,sweep" ]'
check "json: phases add up to the pause" \
  'jq -e "([.phases[].wall_ms] | add) - .pause_ms.total | fabs < 0.01" "$tmp/s.json" >/dev/null'
check "json: the host's time by part" \
  'jq -e "[.counters[] | select(.name | startswith(\"host ns: \")) | select(.unit == \"ns\" and .total > 0)] | length == 4" "$tmp/s.json" >/dev/null'
"$vm" --gc=accel --gc-stats -e "$program" >/dev/null 2>"$tmp/table"
check "table: pause total simulated, host time beside it" \
  'grep -Eq "^  pause total +[0-9.]+ ms simulated, in 3 of 3 collections \(the host took [0-9.]+ ms" "$tmp/table"'
check "table: pause max simulated" 'grep -Eq "^  pause max +[0-9.]+ ms simulated$" "$tmp/table"'
"$vm" --compare=marksweep,accel -e "$program" >/dev/null 2>"$tmp/compare"
check "compare: accel's pauses simulated" 'grep -Eq "^accel +[0-9].* simulated " "$tmp/compare"'
check "compare: marksweep's measured" 'grep -Eq "^marksweep +[0-9].* measured " "$tmp/compare"'

# --- the spill peak, and how far it went beyond the region: a small queue
# on a wide tree spills (by a little more or less from run to run: the
# heap's host addresses place the DRAM's banks).
tree='let t = fn (d) { if (d == 0) { return []; } return [t(d - 1), t(d - 1), t(d - 1), t(d - 1)]; }; let x = t(7); gc(); print(len(x));'
spill() { jq -r --arg n "$2" '[.counters[] | select(.name == $n) | .max_per_collection][0] // -1' "$1"; }
"$vm" --gc=accel --accel-queue=16 --gc-stats=json:"$tmp/big.json" -e "$tree" >/dev/null 2>&1
"$vm" --gc=accel --accel-queue=16 --accel-spill=64 --gc-stats=json:"$tmp/small.json" -e "$tree" >/dev/null 2>&1
peak=$(spill "$tmp/big.json" "accel spill peak")
check "spill: a peak ($peak bytes)" '[ "$peak" -gt 64 ]'
check "spill: within the default region" '[ "$(spill "$tmp/big.json" "accel spill beyond region")" -eq 0 ]'
small=$(spill "$tmp/small.json" "accel spill peak")
check "spill: beyond a 64-byte region by the rest" \
  '[ "$(spill "$tmp/small.json" "accel spill beyond region")" -eq $((small - 64)) ] && [ "$small" -gt 64 ]'

# --- a leak runs out of memory with the documented error and exit; the
# heap is small because every collection of it but the last is simulated.
# The last, which the reachable objects leave no room, is given up before
# any unit runs: its pause is measured, and the error is marksweep's.
leak='let a = []; for (;;) { push(a, [1, 2, 3]); }'
"$vm" --gc=accel --heap=16M --gc-log=debug -e "$leak" >/dev/null 2>"$tmp/leak"
status=$?
"$vm" --gc=marksweep --heap=16M -e "$leak" >/dev/null 2>"$tmp/leak.marksweep"
check "leak: exit 70" '[ "$status" -eq 70 ]'
check "leak: out of memory" 'grep -q "^error: out of memory: " "$tmp/leak"'
check "leak: the error names marksweep's live data" \
  '[ "$(grep "^error: " "$tmp/leak")" = "$(grep "^error: " "$tmp/leak.marksweep")" ]'
check "leak: one collection given up, not simulated" \
  '[ "$(grep -c "\[gc,ergo\].* not simulated: the reachable objects leave no room" "$tmp/leak")" -eq 1 ]'
check "leak: the last pause measured, those before simulated" \
  'grep "\[gc\] GC(" "$tmp/leak" | tail -n 1 | grep -Eq "[0-9]ms$" && ! grep "\[gc\] GC(" "$tmp/leak" | head -n -1 | grep -Eqv "simulated \(host"'

# --- without --heap, accel's limit is the paper's 200 MB maximum heap, not
# a quarter of memory: a leak then ends in seconds, not minutes, and every
# error that names the limit says why it is what it is. The other
# collectors keep the quarter, and --compare gives every run that.
check "default heap: --list-gcs names it" \
  '"$vm" --list-gcs | grep -Eq "^accel .*\(default heap 200\.00 MiB: the paper.s maximum heap"'
reason="(accel.s default heap, the paper.s maximum heap, since every collection is simulated; --heap=SIZE sets it)"
# runs_out WHAT CODE ERROR: CODE under accel without --heap ends in exit 70
# with ERROR (a grep pattern) as its error line.
runs_out() {
  "$vm" --gc=accel -e "$2" >/dev/null 2>"$tmp/default"
  status=$?
  error=$3
  check "default heap: $1, exit 70" '[ "$status" -eq 70 ]'
  check "default heap: $1, the error says why the limit is 200 MiB" 'grep -q "^error: out of memory: $error" "$tmp/default"'
}
big='print(len(NumArray(30000000)));'  # 229 MiB
runs_out "229 MiB refused" "$big" ".*: the heap limit is 200.0 MiB $reason\$"
runs_out "the leak ends" "$leak" "live data .* does not fit in the heap limit of 200.0 MiB $reason\$"
check "default heap: --heap raises it" '[ "$("$vm" --gc=accel --heap=512M -e "$big")" = 30000000 ]'
check "default heap: marksweep keeps a quarter of memory" '[ "$("$vm" --gc=marksweep -e "$big")" = 30000000 ]'
check "default heap: --compare gives accel the others' limit" \
  '"$vm" --compare=marksweep,accel -e "$big" >/dev/null 2>&1'

exit $fail
