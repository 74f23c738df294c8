#!/usr/bin/env bash
# Heap snapshots (docs/snapshot.md), from the command line:
#   - every checked-in snapshot replays under every collector, with the heap
#     verified, its objects all reachable after the collection, and written
#     again byte for byte (a round trip);
#   - each corpus program's snapshot, written afresh, is the checked-in one;
#   - a snapshot written under any collector, replayed under any other,
#     gives the live objects and bytes of the collection that wrote it, and
#     each collector counts the same live bytes for it as when it wrote it;
#   - truncated, corrupt and wrong-version files get one line and exit 65,
#     and the options' misuses their usage errors.
#
#   tests/snapshots/snapshot_test.sh VM SOURCE_DIR
set -u
vm=$(realpath "$1")
top=$2
here=$top/tests/snapshots
# shellcheck source=tests/cli/lib.sh
. "$top/tests/cli/lib.sh"

# A snapshot is written at a collection and a replay ends in one, so a
# collector that never collects (--list-gcs says so) takes no part;
# cli/none refuses both under it.
collectors=$("$vm" --list-gcs | awk '!/cannot run/ && !/\(never collects\)/ {print $1}')

# "O objects, B bytes" from the first line of a replay's report, and the
# same from its "reachable:" part.
header_counts() { sed -n '1s/.*: \([0-9]*\) objects, \([0-9]*\) bytes, .*/\1 \2/p' "$1"; }
reachable_counts() { sed -n 's/.*reachable: \([0-9]*\) objects, \([0-9]*\) bytes$/\1 \2/p' "$1"; }
live_after() { sed -n 's/.*live after: \([0-9]*\) bytes.*/\1/p' "$1"; }

for snap in "$here"/*.snap; do
  name=$(basename "$snap" .snap)
  (cd "$here" && "$vm" --gc=marksweep --heap-snapshot="$tmp/$name.fresh" "$name.src" >/dev/null 2>&1)
  check "$name: written afresh, the same snapshot (if the VM's heap changed on purpose, see tests/snapshots/README.md)" \
    'cmp -s "$tmp/$name.fresh" "$snap"'
  for gc in $collectors; do
    "$vm" --replay="$snap" --gc="$gc" --gc-verify --heap-snapshot="$tmp/$name.$gc" >"$tmp/out" 2>"$tmp/err"
    status=$?
    check "$name under $gc: exit 0" '[ "$status" -eq 0 ]'
    check "$name under $gc: every object reachable after the collection" \
      '[ -n "$(header_counts "$tmp/out")" ] && [ "$(header_counts "$tmp/out")" = "$(reachable_counts "$tmp/out")" ]'
    check "$name under $gc: written again, the same bytes" 'cmp -s "$tmp/$name.$gc" "$snap"'
  done
done

# Written under each collector, replayed under each: the counts of the
# collection that wrote it.
for writer in $collectors; do
  "$vm" --gc="$writer" --heap-snapshot="$tmp/w-$writer" "$here/shapes.src" >/dev/null 2>"$tmp/w-$writer.err"
  check "shapes written under $writer" '[ -s "$tmp/w-$writer" ]'
  sed -n 's/.*: \([0-9]*\) objects, \([0-9]*\) bytes; the collection left \([0-9]*\) bytes live.*/\1 \2 \3/p' \
    "$tmp/w-$writer.err" >"$tmp/w-$writer.counts"
done
for writer in $collectors; do
  read -r objects bytes _ <"$tmp/w-$writer.counts"
  for replayer in $collectors; do
    read -r _ _ live <"$tmp/w-$replayer.counts"
    "$vm" --replay="$tmp/w-$writer" --gc="$replayer" >"$tmp/out" 2>&1
    check "written by $writer, replayed by $replayer: $objects objects, $bytes bytes live" \
      '[ "$(reachable_counts "$tmp/out")" = "$objects $bytes" ]'
    check "written by $writer, replayed by $replayer: $replayer counts $live live bytes, as when it wrote it" \
      '[ "$(live_after "$tmp/out")" = "$live" ]'
  done
done

# Damage: one line on stderr, exit 65, nothing on stdout.
refused() {
  local says=$2
  "$vm" --replay="$tmp/bad" --gc=marksweep >"$tmp/out" 2>"$tmp/err"
  local status=$?
  check "$1: exit 65" '[ "$status" -eq 65 ]'
  check "$1: one line" '[ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -s "$tmp/out" ]'
  check "$1: says '$says'" 'grep -q -- "^vm: $tmp/bad: .*$says" "$tmp/err"'
}
snap=$here/trees.snap
size=$(stat -c %s "$snap")
: >"$tmp/bad"
refused "an empty file" "not a gclab heap snapshot"
printf 'let x = 1;\n' >"$tmp/bad"
refused "a program" "not a gclab heap snapshot"
for n in 10 20 100 $((size / 2)) $((size - 1)); do
  head -c "$n" "$snap" >"$tmp/bad"
  refused "the first $n bytes" "truncated\|checksum"
done
cp "$snap" "$tmp/bad"
printf '\x7f' | dd of="$tmp/bad" bs=1 seek=$((size / 3)) conv=notrunc status=none
refused "a changed byte" "checksum mismatch"
cp "$snap" "$tmp/bad"
printf '\x02' | dd of="$tmp/bad" bs=1 seek=8 conv=notrunc status=none
refused "version 2" "snapshot version 2; this vm reads version 1"
{ cat "$snap"; printf 'x'; } >"$tmp/bad"
refused "a byte too many" "checksum mismatch"

"$vm" --replay="$tmp/missing" --gc=marksweep >"$tmp/out" 2>"$tmp/err"
status=$?
check "a missing snapshot: exit 66" '[ "$status" -eq 66 ]'

# A collection that never comes: no file, a message, exit 70.
"$vm" --heap-snapshot="$tmp/none@5" -e 'gc(); print(1);' >"$tmp/out" 2>"$tmp/err"
status=$?
check "@5 in a run of one collection: exit 70" '[ "$status" -eq 70 ] && [ "$(cat "$tmp/out")" = 1 ]'
check "@5 in a run of one collection: says so" \
  'grep -qx "vm: --heap-snapshot: no snapshot written: the run ended before GC(5) (it ran 1 collections)" "$tmp/err"'
check "@5 in a run of one collection: no file" '[ ! -e "$tmp/none" ]'
# @N picks that collection; a FILE may hold '@'.
"$vm" --heap-snapshot="$tmp/at@home@1" -e 'let a = [1]; gc(); push(a, [2]); gc(); gc(); print(len(a));' \
  >"$tmp/out" 2>"$tmp/err"
check "@1: the second collection" 'grep -q "^vm: wrote the heap at GC(1) to $tmp/at@home: " "$tmp/err"'

usage_error "--heap-snapshot needs a FILE to write (a snapshot is binary), optionally @N" --heap-snapshot=-
usage_error "--compare does not take --heap-snapshot; run one collector with it" --compare --heap-snapshot="$tmp/x"
"$vm" --replay="$snap" "$here/trees.src" >"$tmp/out" 2>"$tmp/err"
status=$?
check "--replay with a script: exit 64" '[ "$status" -eq 64 ]'
check "--replay with a script: says why" \
  'grep -qx "vm: --replay rebuilds a heap snapshot and runs no program: drop the script" "$tmp/err"'
exit $fail
