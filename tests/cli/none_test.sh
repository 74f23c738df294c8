#!/usr/bin/env bash
# --gc=none (docs/collectors/none.md): a program that needs collection
# runs out of memory with the documented message and status, promptly; a
# program that fits runs as under any collector, with gc() ignored and
# logged, zero collections in --gc-stats, and the same bytes allocated as
# semispace's; --gc-verify checks the heap at each gc(); --list-gcs and
# --help describe it; what needs a collection is refused.
#   tests/cli/none_test.sh VM
set -u
vm=$1
# shellcheck source=tests/cli/lib.sh
. "$(dirname "$0")/lib.sh"

# A program whose live data is one small list, and which allocates about
# 50 MB: any collector runs it in 16M; none cannot.
churn='let keep = nil; for (let i = 0; i < 400000; i += 1) { keep = [i, i, i, i, i]; } print(keep[0]);'

start=$(date +%s)
timeout 60 "$vm" --gc=none --heap=16M -e "$churn" >"$tmp/out" 2>"$tmp/err"
status=$?
elapsed=$(($(date +%s) - start))
check "a program that needs collection: exit 70 (out of memory)" '[ "$status" -eq 70 ]'
check "promptly (${elapsed} s, at most 10)" '[ "$elapsed" -le 10 ]'
check "the message names the allocated data, the limit and why" \
  '[[ "$(head -n 1 "$tmp/err")" =~ ^error:\ out\ of\ memory:\ allocated\ data\ 1[56]\.[0-9]\ MiB\ does\ not\ fit\ in\ the\ heap\ limit\ of\ 16\.0\ MiB\ \(none\ never\ collects\)$ ]]'
check "then the trace" '[ "$(sed -n 2p "$tmp/err")" = "  at <script> (<-e>:1)" ]'
check "nothing printed before it" '[ ! -s "$tmp/out" ]'
"$vm" --gc=semispace --heap=16M -e "$churn" >"$tmp/out" 2>&1
check "semispace runs it in the same heap" '[ "$(cat "$tmp/out")" = 399999 ]'

# A large object past the limit: the message names the request too.
"$vm" --gc=none --heap=1M -e 'let a = []; for (let i = 0; i < 100; i += 1) { push(a, NumArray(4096)); }' \
  >/dev/null 2>"$tmp/err"
status=$?
check "large objects past the limit: exit 70" '[ "$status" -eq 70 ]'
check "large objects past the limit: the new object named" \
  'grep -qE "^error: out of memory: allocated data .* and a new object of 32\.[0-9] KiB do not fit in the heap limit of 1\.0 MiB \(none never collects\)$" "$tmp/err"'

# gc() is a no-op the log records; the statistics count no collection.
prog='let a = []; for (let i = 0; i < 20000; i += 1) { push(a, [i, str(i)]); } gc(); gc(); let s = gc_stats(); print(len(a), s["collections"], s["pause_total_ms"]);'
"$vm" --gc=none --gc-log="$tmp/log" --gc-stats="json:$tmp/json" -e "$prog" >"$tmp/out" 2>"$tmp/err"
status=$?
check "gc() under none: exit 0" '[ "$status" -eq 0 ]'
check "the program sees no collection" '[ "$(cat "$tmp/out")" = "20000 0 0" ]'
check "the log's first line names none" '[ "$(head -n 1 "$tmp/log")" = "[0.000s][gc] Using none (implements no paper)" ]'
check "the log records each gc() as ignored, and nothing else" \
  '[ "$(grep -c "^\[[0-9.]*s\]\[gc\] GC request for \"System.gc()\" is ignored$" "$tmp/log")" -eq 2 ] && [ "$(wc -l <"$tmp/log")" -eq 3 ]'
check "stats JSON: zero collections, zero pause" \
  '[ "$(jq -r "[.collections.total, .pause_ms.total, .heap.copied_bytes] | @tsv" "$tmp/json")" = "$(printf "0\t0\t0")" ]'
check "stats JSON: the heap used is what was allocated" \
  '[ "$(jq -r ".heap.used_bytes >= .allocation.bytes and .heap.used_bytes <= .heap.size_bytes" "$tmp/json")" = true ]'
"$vm" --gc=none --gc-stats -e "$prog" >/dev/null 2>"$tmp/table"
check "stats table: zero collections" 'grep -qx "  collections        0 (Young 0, Full 0)" "$tmp/table"'
check "stats table: the ignored requests" \
  'grep -qx "  requests ignored   2 (asked for, not made: the collector never collects)" "$tmp/table"'

# The same program allocates the same bytes under none as under semispace
# (both bump through the shared fast path; marksweep counts its cells).
for g in none semispace; do
  "$vm" --gc=$g --gc-stats="json:$tmp/$g.json" "$(dirname "$0")/../../samples/binary_trees.src" 10 >/dev/null
done
check "bytes allocated equal none's and semispace's on binary_trees 10" \
  '[ "$(jq .allocation.bytes "$tmp/none.json")" = "$(jq .allocation.bytes "$tmp/semispace.json")" ] && [ "$(jq .allocation.bytes "$tmp/none.json")" -gt 1000000 ]'

# --gc-verify checks the heap at each gc(): a well-formed heap passes.
"$vm" --gc=none --gc-verify -e "$prog" >"$tmp/out" 2>"$tmp/err"
status=$?
check "--gc-verify at gc(): exit 0, nothing on stderr" '[ "$status" -eq 0 ] && [ ! -s "$tmp/err" ]'

# What needs a collection is refused before anything runs.
usage_error "--gc-stress: --gc=none never collects, so there is no collection to force (--gc-verify checks the heap at each gc() instead)" \
  --gc=none --gc-stress=1
usage_error "--heap-snapshot is written at a collection, and --gc=none never collects" \
  --gc=none --heap-snapshot="$tmp/h.snap"

# Described where collectors are.
check "--list-gcs says none never collects" \
  '"$vm" --list-gcs | grep -qE "^none  never collects: .*\(never collects\)"'
check "--list-gcs says no other collector never collects" \
  '[ "$("$vm" --list-gcs | grep -c "(never collects)")" -eq 1 ]'
check "--help names none under --gc" '"$vm" --help | grep -qE "^  --gc=NAME .*none never collects"'
check "--help --gc=none: no options of its own" '"$vm" --help --gc=none | grep -qx -- "--gc=none has no options of its own."'
exit $fail
