#!/usr/bin/env bash
# --gc-animate: every collector that collects writes a page whose recording
# holds its heap and phases; where the shared machinery reports its steps,
# the steps agree with the collector's own counters (marksweep: as many
# objects reached as it counts marked, as many cells freed as it counts
# freed; semispace: as many copies as objects copied), and the page, played
# to its end in headless Chromium, leaves no object grey, shows those same
# counts, and finds from the recorded roots and references the objects
# marksweep marked. Then the bounds and the refusals: a heap over
# --gc-animate-limit, a collection that never runs, a collector that never
# collects, --compare; and --replay records its own collection.
#   tests/observe/animation_test.sh VM_BINARY SOURCE_DIR
# The browser part is skipped where no chromium is installed.
set -u
. "$(dirname "$0")/lib.sh" "$1" "$2" animation
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)

prog="$tmp/prog.src"
cat >"$prog" <<'EOF'
let keep = [];
for (let i = 0; i < 60; i += 1) {
  let node = [i, [i * 2], nil];
  if (i % 3 == 0) { push(keep, node); }
}
gc();
print(len(keep));
EOF

# The recording a page holds, as JSON.
data_of() { sed -n 's/^const DATA = \(.*\);$/\1/p' "$1"; }
# A counter's total in a --gc-stats JSON file.
counter() { jq -r --arg n "$2" '[.counters[] | select(.name == $n) | .total] | add // 0' "$1"; }
# How many of the recording's steps are of kind $2.
steps_of() { jq -r --arg k "$2" '. as $d | [.steps[] | select($d.step_kinds[.[1]] == $k)] | length' "$1"; }

# The page after all its steps (data-states: white, grey, black,
# forwarded, freed), read in headless Chromium.
final_states() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" --virtual-time-budget=10000 --dump-dom \
    "file://$1#step=$2" 2>/dev/null | grep -o 'data-states="[0-9,]*"\|data-reachable="[0-9]*"\|data-animation-status="[a-z]*"' | tr '\n' ' '
}
# The page played to its end, back to its start and to its end again, as
# the controls would: its data-trail (the states after each) and its check
# of the end against the heap the collector left (data-final-check).
played() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
    --user-data-dir="$(mktemp -d "$tmp/profile.XXXXXX")" --virtual-time-budget=10000 --dump-dom \
    "file://$1#trail=$2,0,$2" 2>/dev/null | grep -o 'data-trail="[0-9,|]*"\|data-final-check="[^"]*"' | tr '\n' ' '
}

collectors=$("$vm" --list-gcs | awk '!/cannot run/ && !/never collects/ {print $1}')
for gc in $collectors; do
  page="$tmp/$gc.html"
  "$vm" --gc="$gc" --gc-threads=2 --gc-animate="$page" --gc-stats=json:"$tmp/$gc.json" "$prog" >"$tmp/$gc.out" 2>"$tmp/$gc.err"
  check "$gc: the program ran and the page was written" '[ "$(cat "$tmp/$gc.out")" = 20 ] && [ -s "$page" ] && grep -q "wrote the animation of GC(0)" "$tmp/$gc.err"'
  data_of "$page" >"$tmp/$gc.data.json"
  check "$gc: the recording holds the heap and the collection's phases" \
    'jq -e ".collector == \"$gc\" and (.objects | length) > 100 and ([.steps[] | select(.[1] == 0)] | length) > 0" "$tmp/$gc.data.json" >/dev/null'
  check "$gc: nothing fetched from the network" '! grep -Eq "(src|href)=\"(https?:)?//" "$page"'
done

# The steps agree with the collectors' own counts.
ms="$tmp/marksweep.data.json"
check "marksweep: one grey step per object it counts marked" \
  '[ "$(steps_of "$ms" grey)" = "$(counter "$tmp/marksweep.json" "objects marked")" ]'
check "marksweep: one free step per cell it counts freed" \
  '[ "$(steps_of "$ms" free)" = "$(counter "$tmp/marksweep.json" "cells freed")" ] && [ "$(steps_of "$ms" free)" -gt 0 ]'
check "semispace: one copy step per object it counts copied" \
  '[ "$(steps_of "$tmp/semispace.data.json" copy)" = "$(counter "$tmp/semispace.json" "objects copied")" ]'
check "cacheaware: its steps are its cores', with mark messages between them" \
  '[ "$(jq -r .actor "$tmp/cacheaware.data.json")" = core ] && [ "$(steps_of "$tmp/cacheaware.data.json" message)" -gt 0 ]'
check "template: every object it reaches is traced" \
  '[ "$(steps_of "$tmp/template.data.json" grey)" = "$(steps_of "$tmp/template.data.json" scan)" ] && [ "$(steps_of "$tmp/template.data.json" grey)" -gt 0 ]'

if [ -n "$browser" ]; then
  # Every collector's page: played to the end it matches the heap its
  # collector left (every object it shows live there, at its new address;
  # no freed one; after a full collection nothing else), and back at the
  # start every object is white again, and at the end again the same.
  for gc in $collectors; do
    n=$(jq '.steps | length' "$tmp/$gc.data.json")
    objects=$(jq '.objects | length' "$tmp/$gc.data.json")
    got=$(played "$tmp/$gc.html" "$n")
    check "$gc's page at its end matches the heap after the collection ($got)" '[[ $got == *"data-final-check=\"ok\""* ]]'
    end=$(sed -n 's/.*data-trail="\([^|]*\)|\([^|]*\)|\([^"]*\)".*/\1 \2 \3/p' <<<"$got")
    read -r first back again <<<"$end"
    check "$gc's page: to the end, back to the start (all white), to the end again (the same)" \
      '[ -n "$first" ] && [ "$back" = "$objects,0,0,0,0" ] && [ "$first" = "$again" ]'
  done
  n=$(jq '.steps | length' "$ms")
  marked=$(counter "$tmp/marksweep.json" "objects marked")
  freed=$(counter "$tmp/marksweep.json" "cells freed")
  objects=$(jq '.objects | length' "$ms")
  got=$(final_states "$tmp/marksweep.html" "$n")
  check "marksweep's page played to the end: no grey, the marked black, the freed freed ($got)" \
    '[[ $got == *"data-states=\"0,0,$marked,0,$freed\""* ]] && [ $((marked + freed)) = "$objects" ]'
  check "marksweep's page: the objects its graph reaches from the roots are those marksweep marked" \
    '[[ $got == *"data-reachable=\"$marked\""* ]]'
  got=$(final_states "$tmp/marksweep.html" 0)
  check "marksweep's page at its start: every object white ($got)" '[[ $got == *"data-states=\"$objects,0,0,0,0\""* && $got == *ready* ]]'
  # Every object a mark-sweep collector reaches from the roots ends black,
  # and nothing stays grey; gpu's device levels and CPU tail included,
  # accel's simulated units, and cacheaware's cores with their messages.
  for gc in gpu accel cacheaware template; do
    [ -s "$tmp/$gc.data.json" ] || continue
    n=$(jq '.steps | length' "$tmp/$gc.data.json")
    got=$(final_states "$tmp/$gc.html" "$n")
    reachable=$(grep -o 'data-reachable="[0-9]*"' <<<"$got" | grep -o '[0-9]*')
    check "$gc's page played to the end: no grey, the objects the roots reach black ($got)" \
      '[ -n "$reachable" ] && [[ $got =~ data-states=\"[0-9]+,0,$reachable, ]]'
  done
  n=$(jq '.steps | length' "$tmp/semispace.data.json")
  got=$(final_states "$tmp/semispace.html" "$n")
  check "semispace's page played to the end: no object left grey ($got)" '[[ $got =~ data-states=\"[0-9]+,0, ]]'
else
  echo "SKIP: the browser checks (no chromium; scripts/bootstrap installs it)"
fi

# The incremental collector's cycle, recorded from its first pause to its
# last: the program's allocations between the pauses, and the barrier's
# shading of an object hidden behind a black one (samples/lost_object.src's
# trick on a shorter chain) under each real barrier, none under none.
hide="$tmp/hide.src"
cat >"$hide" <<'EOF'
class Box { v; }
let holder = Box();
let p = holder;
for (let i = 0; i < 300; i += 1) { let n = Box(); p.v = n; p = n; }
p = nil;
let black = Box();
gc();
for (let i = 0; i < 3; i += 1) { Box(); }
let q = holder;
for (let i = 0; i < 299; i += 1) { q = q.v; }
black.v = q.v;
q.v = nil;
q = nil;
for (let i = 0; i < 300; i += 1) { Box(); }
print(black.v != nil);
EOF
for b in dijkstra yuasa backward none; do
  # gc()'s number, each barrier's own: how many pauses come before it
  # depends on the barrier (the colour of new objects, the cycles' length).
  full=$("$vm" --gc=incremental --barrier="$b" --gc-stress=1 --gc-log "$hide" 2>&1 | sed -n 's/.*GC(\([0-9]*\)) Pause Full.*/\1/p')
  "$vm" --gc=incremental --barrier="$b" --gc-stress=1 --gc-animate="$tmp/inc-$b.html@$((full + 1))" "$hide" >/dev/null 2>&1
  data_of "$tmp/inc-$b.html" >"$tmp/inc-$b.json"
  want=1
  [ "$b" = none ] && want=0
  check "incremental --barrier=$b: the cycle after gc() recorded, with allocations and $want barrier step" \
    'jq -e ".cycle" "$tmp/inc-$b.json" >/dev/null && [ "$(steps_of "$tmp/inc-$b.json" allocate)" -gt 0 ] && [ "$(steps_of "$tmp/inc-$b.json" barrier)" = $want ]'
  if [ -n "$browser" ] && [ "$b" != none ]; then
    got=$(played "$tmp/inc-$b.html" "$(jq '.steps | length' "$tmp/inc-$b.json")")
    check "incremental --barrier=$b: the cycle's page at its end matches the heap after it ($got)" \
      '[[ $got == *"data-final-check=\"ok\""* ]]'
  fi
done

# Concurrent marking: a recorded cycle's rounds run while the program
# waits, on both GC threads, so the page holds every mark.
concurrent=(--gc=incremental --inc-mode=concurrent --gc-threads=2 --gc-stress=1)
full=$("$vm" "${concurrent[@]}" --gc-log "$hide" 2>&1 | sed -n 's/.*GC(\([0-9]*\)) Pause Full.*/\1/p')
"$vm" "${concurrent[@]}" --gc-animate="$tmp/inc-concurrent.html@$((full + 1))" "$hide" >/dev/null 2>&1
data_of "$tmp/inc-concurrent.html" >"$tmp/inc-concurrent.json"
check "incremental --inc-mode=concurrent: the cycle after gc() recorded, with allocations and the GC threads' marks" \
  'jq -e ".cycle" "$tmp/inc-concurrent.json" >/dev/null && [ "$(steps_of "$tmp/inc-concurrent.json" allocate)" -gt 0 ] && [ "$(steps_of "$tmp/inc-concurrent.json" grey)" -gt 300 ]'
if [ -n "$browser" ]; then
  got=$(played "$tmp/inc-concurrent.html" "$(jq '.steps | length' "$tmp/inc-concurrent.json")")
  check "incremental --inc-mode=concurrent: the cycle's page at its end matches the heap after it ($got)" \
    '[[ $got == *"data-final-check=\"ok\""* ]]'
fi

# markcompact's card scanning and redirect: old objects given young
# references after gc() has promoted them, so that the next young
# collection finds their dirty cards (one slot each for 100 of them), then
# half of them dropped, so that the next full collection slides the rest
# and redirects the references to them.
cards="$tmp/cards.src"
cat >"$cards" <<'EOF'
class Box { v; }
let old = [];
for (let i = 0; i < 300; i += 1) { push(old, Box()); }
gc();
for (let i = 0; i < 300; i += 3) { old[i].v = [i]; }
let junk = nil;
for (let i = 0; i < 4000; i += 1) { junk = [i, i]; }
for (let i = 0; i < 300; i += 2) { old[i] = nil; }
gc();
print(len(old));
EOF
# The sum of a step kind's b (its low 32 bits), and how many of its steps
# have $3 in b's high half.
low_sum() { jq -r --arg k "$2" '. as $d | [.steps[] | select($d.step_kinds[.[1]] == $k) | .[4] % 4294967296] | add // 0' "$1"; }
with_high() {
  jq -r --arg k "$2" --argjson h "$3" \
    '. as $d | [.steps[] | select($d.step_kinds[.[1]] == $k and ((.[4] / 4294967296 | floor) == $h))] | length' "$1"
}
# Whether every step of kind $2 names an address in a recorded space called $3.
in_space() {
  jq -e --arg k "$2" --arg s "$3" '. as $d | [.steps[] | select($d.step_kinds[.[1]] == $k) | .[3] as $a
    | any($d.spaces[]; .name == $s and .begin <= $a and $a < .end)] | all' "$1" >/dev/null
}
log=$("$vm" --gc=markcompact --young=64K --gc-log "$cards" 2>&1)
young=$(sed -n 's/.*GC(\([0-9]*\)) Pause Young.*/\1/p' <<<"$log" | head -n 1)
second_full=$(sed -n 's/.*GC(\([0-9]*\)) Pause Full.*/\1/p' <<<"$log" | sed -n 2p)
check "markcompact: the card program makes a young collection and a second full one" \
  '[ -n "$young" ] && [ -n "$second_full" ]'
for threads in 2 0; do
  mc="$tmp/mc-cards-$threads"
  "$vm" --gc=markcompact --young=64K --gc-threads=$threads --gc-animate="$mc.html@$young" "$cards" >/dev/null 2>&1
  data_of "$mc.html" >"$mc.json"
  check "markcompact --gc-threads=$threads: GC($young), a young collection, has a card step for each dirty card that held young references, 100 such slots or more" \
    'jq -e ".full | not" "$mc.json" >/dev/null && [ "$(steps_of "$mc.json" card)" -gt 0 ] && [ "$(low_sum "$mc.json" card)" -ge 100 ]'
  check "markcompact --gc-threads=$threads: each card step names a card of the old space" 'in_space "$mc.json" card old'
  mf="$tmp/mc-full-$threads"
  "$vm" --gc=markcompact --young=64K --gc-threads=$threads --gc-animate="$mf.html@$second_full" \
    --gc-stats=json:"$mf.stats.json" "$cards" >/dev/null 2>&1
  data_of "$mf.html" >"$mf.json"
  check "markcompact --gc-threads=$threads: GC($second_full), a full collection, has a redirect step for each object whose slots it redirected" \
    'jq -e ".full" "$mf.json" >/dev/null && [ "$(steps_of "$mf.json" redirect)" -gt 0 ] && [ "$(steps_of "$mf.json" move)" -gt 0 ] && [ "$(low_sum "$mf.json" redirect)" -ge "$(steps_of "$mf.json" redirect)" ]'
  if [ "$threads" = 2 ]; then
    check "markcompact: the redirect steps' slots are among those it counts redirected (the rest are roots)" \
      '[ "$(low_sum "$mf.json" redirect)" -le "$(counter "$mf.stats.json" "slots redirected")" ]'
  fi
  if [ -n "$browser" ]; then
    for page in "$mc" "$mf"; do
      got=$(played "$page.html" "$(jq '.steps | length' "$page.json")")
      check "markcompact --gc-threads=$threads: $(basename "$page")'s page at its end matches the heap after it ($got)" \
        '[[ $got == *"data-final-check=\"ok\""* ]]'
    done
  fi
done

# cacheaware's balancing and ptrquery: fiber 0 keeps 60 times what each
# other fiber keeps, all of it in its home core's partitions, so that its
# core passes the bound and is given room in other cores' partitions, and
# references to the objects moved there are asked of their old host.
uneven="$tmp/uneven.src"
cat >"$uneven" <<'EOF'
let fibers = [];
for (let f = 0; f < 4; f += 1) {
  push(fibers, Fiber(fn () {
    let mine = [];
    let n = f == 0 ? 600 : 10;
    for (let i = 0; i < n; i += 1) {
      push(mine, [f, i, [i]]);
      [i, i];
    }
    yield(mine);
  }));
}
let kept = [];
for (let k = 0; k < len(fibers); k += 1) { push(kept, resume(fibers[k], nil)); }
gc();
print(len(kept));
EOF
ca="$tmp/ca-balance"
"$vm" --gc=cacheaware --gc-threads=2 --ca-mesh=2x2 --ca-partition-size=16K --gc-animate="$ca.html" \
  --gc-stats=json:"$ca.stats.json" "$uneven" >/dev/null 2>&1
data_of "$ca.html" >"$ca.json"
check "cacheaware: a balance step for each destination the master gave, some" \
  '[ "$(steps_of "$ca.json" balance)" = "$(counter "$ca.stats.json" "balancing moves")" ] && [ "$(steps_of "$ca.json" balance)" -gt 0 ]'
check "cacheaware: each balance step's room is in another core's partition" \
  'jq -e ". as \$d | [.steps[] | select(\$d.step_kinds[.[1]] == \"balance\") | .[4] % 4294967296 != .[2]] | all" "$ca.json" >/dev/null'
check "cacheaware: a ptrquery message step for each ptrquery it counts, some, and a mark message step for each mark message" \
  'jq -e ".message_kinds == [\"mark\", \"ptrquery\"]" "$ca.json" >/dev/null && [ "$(with_high "$ca.json" message 1)" = "$(counter "$ca.stats.json" "ptrquery messages")" ] && [ "$(with_high "$ca.json" message 1)" -gt 0 ] && [ "$(with_high "$ca.json" message 0)" = "$(counter "$ca.stats.json" "mark messages sent")" ]'
if [ -n "$browser" ]; then
  got=$(played "$ca.html" "$(jq '.steps | length' "$ca.json")")
  check "cacheaware: the balanced collection's page at its end matches the heap after it ($got)" \
    '[[ $got == *"data-final-check=\"ok\""* ]]'
fi

# Bounds and refusals.
"$vm" --gc=marksweep --gc-animate="$tmp/big.html" --gc-animate-limit=10 "$prog" >/dev/null 2>"$tmp/big.err"
status=$?
check "a heap over --gc-animate-limit: refused, exit 70, no page" \
  '[ $status = 70 ] && [ ! -e "$tmp/big.html" ] && grep -q "more than --gc-animate-limit=10 allows" "$tmp/big.err"'
"$vm" --gc=marksweep --gc-animate="$tmp/late.html@50" "$prog" >/dev/null 2>"$tmp/late.err"
status=$?
check "a collection that never runs: said, exit 70" \
  '[ $status = 70 ] && grep -q "the run ended before the collection to record" "$tmp/late.err"'
"$vm" --gc=none --gc-animate="$tmp/none.html" "$prog" >/dev/null 2>"$tmp/none.err"
status=$?
check "--gc=none: a usage error" '[ $status = 64 ] && grep -q "never collects" "$tmp/none.err"'
"$vm" --compare --gc-animate="$tmp/cmp.html" "$prog" >/dev/null 2>"$tmp/cmp.err"
status=$?
check "--compare: a usage error" '[ $status = 64 ] && grep -q "does not take --gc-animate" "$tmp/cmp.err"'
for bad in "--gc-animate=" "--gc-animate-limit=0" "--gc-animate-limit=x"; do
  "$vm" "$bad" "$prog" >/dev/null 2>&1
  status=$?
  check "$bad: a usage error" '[ $status = 64 ]'
done
# Digits after '@' that are no count are refused, not taken into the file's name.
for option in --gc-animate --heap-snapshot; do
  "$vm" "$option=$tmp/big@99999999999999999999" "$prog" >/dev/null 2>"$tmp/big.err"
  status=$?
  check "$option=FILE@N with N past a count: a usage error" \
    '[ $status = 64 ] && grep -q "^vm: $option: collection number 99999999999999999999 is too large" "$tmp/big.err" && ! ls "$tmp"/big@* >/dev/null 2>&1'
done

# --replay records the collection it makes of the snapshot's heap.
"$vm" --gc=marksweep --heap-snapshot="$tmp/heap.snap" "$prog" >/dev/null 2>&1
"$vm" --gc=semispace --replay="$tmp/heap.snap" --gc-animate="$tmp/replay.html" >/dev/null 2>"$tmp/replay.err"
status=$?
data_of "$tmp/replay.html" >"$tmp/replay.json" 2>/dev/null
check "--replay: the replayed collection animated" \
  '[ $status = 0 ] && grep -q "wrote the animation of GC(" "$tmp/replay.err" && jq -e ".collector == \"semispace\" and (.steps | length) > 0" "$tmp/replay.json" >/dev/null'

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
