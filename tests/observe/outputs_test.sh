#!/usr/bin/env bash
# --gc-log, --gc-stats and --gc-trace on known programs (docs/observability.md):
# formats, content, and that nothing of them reaches the program's stdout.
#   tests/observe/outputs_test.sh VM_BINARY SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh" "$1" "$2" observe

# Seven explicit collections, then allocation that must collect too.
cat >"$tmp/prog.src" <<'SRC'
for (let i = 0; i < 7; i += 1) { gc(); }
let keep = [];
for (let i = 0; i < 400000; i += 1) {
  let a = [i, i, i];
  if (i % 1000 == 0) { push(keep, a); }
}
print("done", len(keep));
SRC
shape='^\[[0-9]+\.[0-9]{3}s\]\[gc\] GC\([0-9]+\) Pause (Young|Full|Increment) \((Allocation Failure|System\.gc\(\)|GC Stress|Large Object Allocation|Heap Threshold|Allocation Debt|Marking Done|Mark Assist)\) [0-9]+[KMG]->[0-9]+[KMG]\([0-9]+[KMG]\) [0-9]+\.[0-9]{3}ms$'

for threads in 0 2; do
  t="threads=$threads"
  # --- --gc-log on stderr: stdout is the program's alone.
  "$vm" --gc-threads=$threads --heap=64M --gc-log "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t log: exit 0" '[ $? -eq 0 ]'
  check "$t log: stdout is only the program's" '[ "$(cat "$tmp/out")" = "done 400" ]'
  check "$t log: first line names the collector and its variant" 'head -1 "$tmp/err" | grep -Eq "^\[0\.000s\]\[gc\] Using semispace \((.+)\)$"'
  if [ "$threads" = 0 ]; then variant="Cheney's serial collector (the paper's seq): the paper's configuration"
  else variant="pSemispaces: departures from the paper: forwarding by from-space chunk ownership (the paper: a CAS per object)"; fi
  check "$t log: the variant is $variant" '[ "$(head -1 "$tmp/err")" = "[0.000s][gc] Using semispace ($variant)" ]'
  tail -n +2 "$tmp/err" >"$tmp/lines"
  check "$t log: every other line has the JDK shape" '! grep -Evq "$shape" "$tmp/lines" && [ -s "$tmp/lines" ]'
  check "$t log: 7 System.gc() pauses" '[ "$(grep -c "Pause Full (System.gc())" "$tmp/lines")" -eq 7 ]'
  check "$t log: allocation failures too" 'grep -q "Pause Full (Allocation Failure)" "$tmp/lines"'
  check "$t log: GC ids count from 0 in order" '[ "$(grep -o "GC([0-9]*)" "$tmp/lines" | tr -dc "0-9\n" | paste -sd " ")" = "$(seq -s " " 0 $(($(wc -l <"$tmp/lines") - 1)))" ]'
  n_log=$(wc -l <"$tmp/lines")

  # --- --gc-log=FILE: nothing on stderr; debug adds phases and workers.
  "$vm" --gc-threads=$threads --heap=64M --gc-log="$tmp/gc.log" "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t log=FILE: stderr empty, file written" '[ ! -s "$tmp/err" ] && grep -q "Pause Full (System.gc())" "$tmp/gc.log"'
  "$vm" --gc-threads=$threads --heap=64M --gc-log=debug "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t log=debug: per-phase lines" 'grep -Eq "^\[[0-9.]+s\]\[gc,phases\] GC\(0\)   [a-z ]+: [0-9.]+ms" "$tmp/err"'
  check "$t log=debug: per-worker lines" 'grep -Eq "^\[[0-9.]+s\]\[gc,workers\] GC\(0\)   worker [0-9]+: busy [0-9.]+ms, idle [0-9.]+ms" "$tmp/err"'
  check "$t log=debug: pause lines unchanged" '[ "$(grep -Ec "$shape" "$tmp/err")" -eq "$n_log" ]'
  "$vm" --gc-threads=$threads --heap=64M --gc-log=debug:"$tmp/debug.log" "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t log=debug:FILE" '[ ! -s "$tmp/err" ] && grep -q "\[gc,phases\]" "$tmp/debug.log"'

  # --- --gc-stats: the table on stderr.
  "$vm" --gc-threads=$threads --heap=64M --gc-stats "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t stats: stdout is only the program's" '[ "$(cat "$tmp/out")" = "done 400" ]'
  for key in "collections" "by cause" "pause total" "pause mean" "pause p50 p90 p99" "pause max" "allocated" \
             "peak heap" "peak live" "phase " "worker " "balance" "counter "; do
    check "$t stats: table has '$key'" 'grep -q "^ *$key" "$tmp/err"'
  done
  check "$t stats: 7 System.gc()" 'grep -q "System.gc() 7" "$tmp/err"'

  # --- --gc-stats=json:FILE with the log and the trace in the same run.
  "$vm" --gc-threads=$threads --heap=64M --gc-stats=json:"$tmp/stats.json" --gc-log="$tmp/gc.log" \
        --gc-trace="$tmp/trace.json" "$tmp/prog.src" >"$tmp/out" 2>"$tmp/err"
  check "$t json: parses" 'jq -e . "$tmp/stats.json" >/dev/null'
  check "$t json: schema name" '[ "$(jq -r .schema "$tmp/stats.json")" = "gclab-gc-stats/1" ]'
  check "$t json: 7 System.gc()" '[ "$(jq ".collections.by_cause[\"System.gc()\"]" "$tmp/stats.json")" -eq 7 ]'
  check "$t json: total = log lines" '[ "$(jq .collections.total "$tmp/stats.json")" -eq "$(grep -c "Pause" "$tmp/gc.log")" ]'
  check "$t json: kinds add up" '[ "$(jq ".collections.by_kind.Young + .collections.by_kind.Full - .collections.total" "$tmp/stats.json")" -eq 0 ]'
  check "$t json: percentiles ordered" 'jq -e ".pause_ms | .p50 <= .p90 and .p90 <= .p99 and .p99 <= .max and .percentiles_exact" "$tmp/stats.json" >/dev/null'
  check "$t json: allocation counted" 'jq -e ".allocation.bytes > 400000 * 32" "$tmp/stats.json" >/dev/null'
  check "$t json: phases and workers" 'jq -e "(.phases | length) > 0 and (.workers | length) > 0" "$tmp/stats.json" >/dev/null'
  check "$t json: collector counters" 'jq -e "[.counters[].name] | index(\"from-space bytes\") != null" "$tmp/stats.json" >/dev/null'

  # --- the trace: parses, one track per GC worker that ran a phase plus the
  # mutator, a pause slice per collection, flows opened and closed.
  check "$t trace: parses" 'jq -e .traceEvents "$tmp/trace.json" >/dev/null'
  tracks=$(jq '[.traceEvents[] | select(.ph == "M" and .name == "thread_name" and (.args.name | startswith("GC worker")))] | length' "$tmp/trace.json")
  phase_tids=$(jq '[.traceEvents[] | select(.ph == "X" and .cat == "gc.phase") | .tid] | unique | length' "$tmp/trace.json")
  workers=$(jq '.workers | length' "$tmp/stats.json")
  check "$t trace: one track per GC worker ($tracks)" '[ "$tracks" -ge 1 ] && [ "$tracks" -eq "$phase_tids" ] && [ "$tracks" -eq "$workers" ]'
  check "$t trace: one mutator track" '[ "$(jq "[.traceEvents[] | select(.ph == \"M\" and .args.name == \"mutator\")] | length" "$tmp/trace.json")" -eq 1 ]'
  check "$t trace: a pause slice per collection" '[ "$(jq "[.traceEvents[] | select(.ph == \"X\" and .cat == \"gc\")] | length" "$tmp/trace.json")" -eq "$(jq .collections.total "$tmp/stats.json")" ]'
  check "$t trace: heap counters" 'jq -e "[.traceEvents[] | select(.ph == \"C\" and .name == \"heap (MiB)\")] | length > 0" "$tmp/trace.json" >/dev/null'
  check "$t trace: flows closed" 'jq -e "([.traceEvents[] | select(.ph == \"s\")] | length) == ([.traceEvents[] | select(.ph == \"f\")] | length)" "$tmp/trace.json" >/dev/null'
  check "$t trace: slices well-formed" 'jq -e "all(.traceEvents[] | select(.ph == \"X\"); (.ts | type) == \"number\" and .dur >= 0)" "$tmp/trace.json" >/dev/null'
  check "$t trace: a mutator slice after the last pause" 'jq -e "[.traceEvents[] | select(.ph == \"X\" and .tid == 1)] | max_by(.ts) | .name == \"mutator\"" "$tmp/trace.json" >/dev/null'
  # Slices of one track nest: each begins after the one before it or ends within it.
  check "$t trace: phases of a track nest or follow" 'jq -e "[.traceEvents[] | select(.ph == \"X\" and .cat == \"gc.phase\")] | group_by(.tid) | all(.[]; reduce .[] as \$e ({ok: true, open: []}; (.open | map(select(.ts + .dur > \$e.ts))) as \$o | {ok: (.ok and (\$o | all(.ts + .dur >= \$e.ts + \$e.dur - 0.002))), open: (\$o + [\$e])}) | .ok)" "$tmp/trace.json" >/dev/null'
done

# --- gc_stats() in a program: the required keys, with nothing enabled.
"$vm" -e 'for (let i = 0; i < 3; i += 1) { gc(); } let s = gc_stats(); print(s["collector"], s["collections"], s["collections_full"], s["pause_p99_ms"] <= s["pause_max_ms"], s["peak_live"] > 0);' >"$tmp/out" 2>"$tmp/err"
check "gc_stats(): summary without any output enabled" '[ "$(cat "$tmp/out")" = "semispace 3 3 true true" ]'
"$vm" --gc-stats=json:"$tmp/s.json" -e 'gc(); let s = gc_stats(); print(s["counter:from-space bytes"] > 0);' >"$tmp/out" 2>"$tmp/err"
check "gc_stats(): counters when recording" '[ "$(cat "$tmp/out")" = "true" ]'

# --- peak live is measured after a collection: where none ran it is not 0.
"$vm" --gc-stats=json:"$tmp/nc.json" -e 'print(1);' >/dev/null 2>"$tmp/err"
check "no collection: JSON peak live is null" 'jq -e ".collections.total == 0 and .heap.peak_live_bytes == null" "$tmp/nc.json" >/dev/null'
"$vm" --gc-stats -e 'print(1);' >/dev/null 2>"$tmp/err"
check "no collection: the table says none ran" 'grep -q "^  peak live          - (measured after a collection; none ran)" "$tmp/err"'

# --- ratios a collector names (accel's speedups): in the table, the JSON,
# gc_stats() and the debug log, and each the quotient of its counters.
"$vm" --gc=accel --gc-stats=json:"$tmp/r.json" --gc-log=debug:"$tmp/r.log" -e 'let t = []; for (let i = 0; i < 3; i += 1) { push(t, [i]); gc(); } let s = gc_stats(); print(s["ratio:mark speedup"] > 1);' >"$tmp/out" 2>"$tmp/err"
check "ratios: gc_stats() has ratio:NAME" '[ "$(cat "$tmp/out")" = "true" ]'
check "ratios: JSON run is total over total" 'jq -e "([.counters[] | select(.name == \"cpu mark cycles\") | .total][0] / [.counters[] | select(.name == \"accel mark cycles\") | .total][0]) as \$q | [.ratios[] | select(.name == \"mark speedup\")][0] | (.run - \$q) * (.run - \$q) < 1e-6 and .collections == 3 and .min_per_collection <= .run and .run <= .max_per_collection" "$tmp/r.json" >/dev/null'
check "ratios: a [gc,ratios] line per collection" '[ "$(grep -c "\[gc,ratios\].*mark speedup" "$tmp/r.log")" -eq 3 ]'
"$vm" --gc=accel --gc-stats -e 'gc();' >/dev/null 2>"$tmp/err"
check "ratios: in the table" 'grep -Eq "^  mark speedup +[0-9]+\.[0-9]{2} " "$tmp/err"'
"$vm" --gc=accel --gc-stats -e 'print(1);' >/dev/null 2>"$tmp/err"
check "ratios: '-' without a collection" 'grep -Eq "^  mark speedup +- " "$tmp/err"'

# --- bad options are usage errors.
"$vm" --gc-stats=yaml -e '1;' >/dev/null 2>&1
check "bad --gc-stats form: status 64" '[ $? -eq 64 ]'
for option in --gc-log --gc-stats "--gc-trace=$tmp/t.json" "--gc-report=$tmp/r.html" "--heap-snapshot=$tmp/h.snap"; do
  "$vm" "$option" "$option" -e '1;' >/dev/null 2>"$tmp/err"
  check "${option%%=*} twice: status 64, saying so" '[ $? -eq 64 ] && grep -q "^vm: ${option%%=*} is given twice" "$tmp/err"'
done
"$vm" --gc-stats=json --gc-stats=table -e '1;' >/dev/null 2>"$tmp/err"
check "--gc-stats twice with different forms: status 64" '[ $? -eq 64 ]'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
