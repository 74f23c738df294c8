#!/usr/bin/env bash
# vm --compare: one program under several collectors, each in a process of
# its own. Agreement is checked on output and exit status, and a
# disagreement is named (exit 70); the table and the JSON document hold a
# row per collector; every run reads the same standard input; what a
# comparison cannot do is refused at startup.
#
#   tests/cli/compare_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

every=$("$vm" --list-gcs | awk '!/cannot run/ {print $1}')
count=$(echo "$every" | wc -l)
program='let a = []; for (let i = 0; i < 20000; i += 1) { push(a, [i, "x" + str(i)]); } gc(); print(len(a));'

# Every collector that can run, by default: the output once, then the table.
"$vm" --compare -e "$program" </dev/null >"$tmp/out" 2>"$tmp/err"
check "default: exit 0" '[ $? -eq 0 ]'
check "default: the output once" '[ "$(cat "$tmp/out")" = 20000 ]'
check "default: a header" 'grep -q "^collector .*wall ms.*GC share.*young.*full.*p50 ms.*p99 ms.*max ms.*peak heap.*peak live.*copied.*marked.*agrees" "$tmp/err"'
for gc in $every; do
  check "default: a row for $gc" 'grep -Eq "^$gc +[0-9]" "$tmp/err"'
done
check "default: the first is the reference" '[ "$(sed -n 2p "$tmp/err" | awk "{print \$1, \$NF}")" = "$(echo "$every" | head -1) reference" ]'
check "default: the others agree" '[ "$(grep -c " yes$" "$tmp/err")" -eq $((count - 1)) ]'

# A chosen list, in its order; the statistics are each run's own.
"$vm" --compare=marksweep,semispace --heap=64M -e "$program" </dev/null >"$tmp/out" 2>"$tmp/err"
check "list: exit 0" '[ $? -eq 0 ]'
check "list: two rows, in order" '[ "$(awk "\$NF ~ /^(reference|yes|NO)\$/ {print \$1}" "$tmp/err" | tr "\n" " ")" = "marksweep semispace " ]'
check "list: semispace copied, marksweep did not" 'grep -Eq "^semispace .* [0-9.]+ MiB +- +yes$" "$tmp/err" && grep -Eq "^marksweep .* - +[0-9]+ +reference$" "$tmp/err"'

# A program whose output depends on the collector: caught and named.
"$vm" --compare=semispace,marksweep,cacheaware -e 'print(gc_stats()["collector"]);' </dev/null >"$tmp/out" 2>"$tmp/err"
check "output differs: exit 70" '[ $? -eq 70 ]'
check "output differs: the reference's output" '[ "$(cat "$tmp/out")" = semispace ]'
check "output differs: marksweep named" 'grep -qx "vm: --compare: marksweep disagrees with semispace: its output differs from semispace.s at line 1" "$tmp/err"'
check "output differs: cacheaware named" 'grep -q "^vm: --compare: cacheaware disagrees with semispace" "$tmp/err"'
check "output differs: NO in the table" '[ "$(grep -c " NO$" "$tmp/err")" -eq 2 ]'
# The same for an exit status.
"$vm" --compare=semispace,cacheaware -e 'exit(len(gc_stats()["collector"]));' </dev/null >"$tmp/out" 2>"$tmp/err"
check "status differs: exit 70" '[ $? -eq 70 ]'
check "status differs: named" 'grep -qx "vm: --compare: cacheaware disagrees with semispace: it exited 10, semispace exited 9" "$tmp/err"'
# Standard input still open, with nothing in it, when the first run ends:
# the later runs keep their own output and statistics (the first run's
# input pipe, once closed, must not be closed again in a later child,
# where its number may be one of that run's own files).
out=$( (sleep 1) | "$vm" --compare=semispace,marksweep,cacheaware -e 'print(gc_stats()["collector"]);' 2>"$tmp/err")
check "open input: the reference's output" '[ "$out" = semispace ]'
check "open input: every run has statistics" '! grep -q "no statistics" "$tmp/err"'
check "open input: both others named" '[ "$(grep -c "its output differs from semispace.s at line 1" "$tmp/err")" -eq 2 ]'
# Runs that fail the same way agree, and the status is theirs.
"$vm" --compare=semispace,marksweep -e 'print(1); error("stop");' </dev/null >"$tmp/out" 2>"$tmp/err"
check "same error: exit 70" '[ $? -eq 70 ]'
check "same error: agree" '! grep -q "disagrees" "$tmp/err" && [ "$(grep -c " yes$" "$tmp/err")" -eq 1 ]'
check "same error: the message once" '[ "$(grep -c "stop" "$tmp/err")" -eq 1 ]'

# Standard input: every run reads the same lines; a program that reads
# none does not wait for its end (a hang would meet the timeout and print
# nothing, since the output comes after every run).
printf 'one\ntwo\n' | "$vm" --compare=semispace,marksweep,markcompact \
  -e 'print(input()); print(input());' >"$tmp/out" 2>"$tmp/err"
check "input: exit 0" '[ $? -eq 0 ]'
check "input: both lines" '[ "$(cat "$tmp/out" | tr "\n" " ")" = "one two " ]'
check "input: all agree" '[ "$(grep -c " yes$" "$tmp/err")" -eq 2 ]'
exec 3< <(exec sleep 30 2>/dev/null)
endless=$!
timeout 20 "$vm" --compare=semispace,marksweep -e 'print(2);' <&3 >"$tmp/out" 2>"$tmp/err"
check "input never read, never ending: does not wait" '[ "$(cat "$tmp/out")" = 2 ]'
exec 3<&-
kill "$endless" 2>/dev/null

# --gc-stats=json: one document, a run per collector with its statistics.
"$vm" --compare=semispace,marksweep --gc-stats=json:"$tmp/c.json" -e "$program" </dev/null >"$tmp/out" 2>"$tmp/err"
check "json: exit 0" '[ $? -eq 0 ]'
check "json: no table" '! grep -q "^collector" "$tmp/err"'
check "json: parses" 'jq -e . "$tmp/c.json" >/dev/null'
check "json: schema" '[ "$(jq -r .schema "$tmp/c.json")" = gclab-gc-compare/1 ]'
check "json: agree" '[ "$(jq -r .agree "$tmp/c.json")" = true ]'
check "json: two runs, in order" '[ "$(jq -r "[.runs[].collector] | join(\",\")" "$tmp/c.json")" = semispace,marksweep ]'
check "json: each run's own statistics" '[ "$(jq -r "[.runs[].stats.collector] | join(\",\")" "$tmp/c.json")" = semispace,marksweep ]'
check "json: keeps the keys docs/gc-compare.schema.json declares" \
  'jq -en --slurpfile schema "$(dirname "$0")/../../docs/gc-compare.schema.json" --slurpfile doc "$tmp/c.json" -f "$(dirname "$0")/schema_conforms.jq" >/dev/null'
check "json: stats documents" '[ "$(jq -r "[.runs[].stats.schema] | unique | join(\",\")" "$tmp/c.json")" = gclab-gc-stats/1 ]'
check "json: the explicit gc() counted" '[ "$(jq "[.runs[].stats.collections.by_cause[\"System.gc()\"]] | min" "$tmp/c.json")" -ge 1 ]'
# Lower-bound overhead, in wall time and in CPU time: the bound is the least
# mutator cost of the runs (wall: run time less the host's pause time;
# CPU: the program's thread outside collections), set by the collector it
# names, whose own cost over it is its attributed parts alone; every run's
# cost is at least the bound, and adds up as its parts.
check "json: the wall bound is the least mutator time, from the run it names" \
  'jq -e "(.lower_bound.wall.mutator_ms) as \$b | ([.runs[].stats | .run_time_ms - .pause_ms.host_total] | min - \$b | fabs < 0.01) and (.lower_bound.wall.from as \$f | .lower_bound.wall.runs[] | select(.collector == \$f) | .rest_over_bound | fabs < 1e-6)" "$tmp/c.json" >/dev/null'
check "json: each run's wall time over the bound is 1 + its pauses + the rest" \
  'jq -e "[.lower_bound.wall.runs[] | select(.wall_over_bound < 1 or ((1 + .pauses_over_bound + .rest_over_bound - .wall_over_bound) | fabs) > 1e-3)] | length == 0" "$tmp/c.json" >/dev/null'
check "json: the CPU bound is the least mutator CPU time, from the run it names" \
  'jq -e "(.lower_bound.cpu.mutator_ms) as \$b | ([.runs[].stats.cpu_ms.mutator] | min - \$b | fabs < 0.01) and (.lower_bound.cpu.from as \$f | .lower_bound.cpu.runs[] | select(.collector == \$f) | .rest_over_bound | fabs < 1e-6)" "$tmp/c.json" >/dev/null'
check "json: each run's CPU time over the bound is 1 + its collector's + other threads' + the rest" \
  'jq -e "[.lower_bound.cpu.runs[] | select(.cpu_over_bound < 1 or ((1 + .collector_over_bound + .other_threads_over_bound + .rest_over_bound - .cpu_over_bound) | fabs) > 1e-3)] | length == 0" "$tmp/c.json" >/dev/null'
check "json: each run's CPU cost is its process's CPU time" \
  'jq -e "(.lower_bound.cpu.mutator_ms) as \$b | [.lower_bound.cpu.runs[] as \$r | .runs[] | select(.collector == \$r.collector) | (\$r.cpu_over_bound * \$b - .stats.cpu_ms.process) | fabs | select(. > 0.05)] | length == 0" "$tmp/c.json" >/dev/null'
check "json: a thread's CPU time fits its wall time: the program's outside and inside collections" \
  'jq -e "[.runs[].stats | select(.cpu_ms.mutator > .run_time_ms - .pause_ms.host_total + 1 or .cpu_ms.collecting_thread > .pause_ms.host_total + 1)] | length == 0" "$tmp/c.json" >/dev/null'
# Increments are counted apart from young and full collections.
"$vm" --compare=marksweep,incremental "$(dirname "$0")/../../samples/binary_trees.src" 12 </dev/null >/dev/null 2>"$tmp/incr.err"
check "increments: the comparison runs" '[ $? -eq 0 ]'
check "increments: a column of their own" 'grep -Eq "^collector +wall ms +GC share +young +full +incr +p50 ms" "$tmp/incr.err"'
check "increments: incremental's pauses are increments, marksweep has none" \
  'awk "/^marksweep / { m = \$6 } /^incremental / { i = \$6; y = \$4 } END { exit !(m == 0 && i > 0 && y == 0) }" "$tmp/incr.err"'

# A collector that never collects is one of the runs the bound is taken
# over; where it does not set a bound, that measure's table says what its
# rest is, and where it does, says nothing.
none_rest_said() {  # the measure's title
  local from said
  from=$(grep -E "^lower-bound overhead .*, $1:" "$tmp/none.err" | sed -E 's/.* ms \(([a-z]+)\), bounds.*/\1/')
  said=$(sed -n "/^lower-bound overhead .*, $1:/,/^lower-bound/p" "$tmp/none.err" |
    grep -cE "^  none never collects: its rest \(\+[0-9]+%\) is locality")
  [ -n "$from" ] && if [ "$from" = none ]; then [ "$said" -eq 0 ]; else [ "$said" -eq 1 ]; fi
}
"$vm" --compare=semispace,none "$(dirname "$0")/../../samples/binary_trees.src" 14 </dev/null >"$tmp/none.out" 2>"$tmp/none.err"
check "never collects: the comparison runs" '[ $? -eq 0 ]'
check "never collects: wall time says what none's rest is, unless none set its bound" 'none_rest_said "wall time"'
check "never collects: CPU time says what none's rest is, unless none set its bound" 'none_rest_said "CPU time"'
check "never collects: no pause percentiles and no live data, which a collection measures" \
  'awk "/^none / { exit !(\$7 == \"-\" && \$8 == \"-\" && \$9 == \"-\" && \$13 == \"-\") }" "$tmp/none.err"'

# What a comparison cannot do.
usage_error "--compare runs several collectors and --gc chooses one: give one or the other" --compare --gc=semispace
usage_error "unknown collector 'nosuch' (see --list-gcs)" --compare=semispace,nosuch
usage_error "--compare names semispace twice" --compare=semispace,marksweep,semispace
usage_error "bad --compare list 'semispace,' (collector names separated by commas)" --compare=semispace,
usage_error "--compare does not take --gc-log or --gc-trace; run one collector with them" \
  --compare --gc-trace="$tmp/t.json"
usage_error "--compare does not take --gc-log or --gc-trace; run one collector with them" --compare --gc-log
usage_error "--compare runs the program; --disasm only prints its bytecode" --compare --disasm
usage_error "--young is an option of markcompact, which --compare does not run" --compare=semispace --young=4M
# A collector option goes to the collectors that own it.
"$vm" --compare=semispace,markcompact --young=4M -e 'print(3);' </dev/null >"$tmp/out" 2>"$tmp/err"
check "owned option: runs" '[ $? -eq 0 ] && [ "$(cat "$tmp/out")" = 3 ]'
# Under --gc-stress every collector that collects is compared; one that
# never does is left out and said so.
"$vm" --compare --gc-stress=50 -e 'let a = []; for (let i = 0; i < 100; i = i + 1) { push(a, [i]); } print(len(a));' </dev/null >"$tmp/out" 2>"$tmp/err"
check "stress: runs" '[ $? -eq 0 ] && [ "$(cat "$tmp/out")" = 100 ]'
check "stress: none left out" 'grep -qx "vm: --compare: leaving out none (never collects: --gc-stress has nothing to force)" "$tmp/err"'
check "stress: semispace compared" 'grep -Eq "^semispace " "$tmp/err"'
exit $fail
