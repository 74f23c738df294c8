#!/usr/bin/env bash
# Every panel of every collector's --gc-report draws at least one non-zero
# mark (data-marks > 0 on its SVG) on a short program under which that
# collector collects: a panel whose formula reads a counter nobody counts
# draws nothing and fails here. The collectors are those `vm --list-gcs`
# names, so a new one is covered without a line here.
#   tests/observe/panels_test.sh VM_BINARY SOURCE_DIR
# Exits 77 (skipped) when no chromium is installed (scripts/bootstrap
# installs Debian's chromium).
set -u
. "$(dirname "$0")/lib.sh" "$1" "$2" panels browser

# Each panel's id and the marks its first SVG drew ("-" when it has none),
# one "ID MARKS" line per <section class="panel">.
panel_marks() {
  awk 'BEGIN { RS = "<section" }
    match($0, /^ class="panel[^"]*" id="panel-[^"]*"/) {
      head = substr($0, RSTART, RLENGTH); sub(/.*id="panel-/, "", head); sub(/"$/, "", head)
      marks = "-"
      if (match($0, /data-marks="[0-9]+"/)) marks = substr($0, RSTART + 12, RLENGTH - 13)
      print head, marks
    }' "$1"
}

# Young and full collections, survivors and garbage, references from old
# objects to young ones (cards), trees that live long enough to be promoted
# and then die (holes for compaction), and slots holding numbers and nil
# beside references: what every collector's panels count.
cat >"$tmp/prog.src" <<'SRC'
class Node {
  left;
  right;
  init(left, right) {
    this.left = left;
    this.right = right;
  }
}
fn tree(depth) {
  if (depth == 0) { return Node(nil, 1.5); }
  return Node(tree(depth - 1), tree(depth - 1));
}
let old = [];
for (let i = 0; i < 64; i += 1) { push(old, tree(6)); }
let big = [];
let middle = [nil, nil, nil, nil, nil, nil, nil, nil];
for (let round = 0; round < 60; round += 1) {
  for (let i = 0; i < 64; i += 1) { old[i].right = tree(3); }
  middle[round % 8] = tree(8);
  for (let i = 0; i < 300; i += 1) { let t = tree(5); }
  push(big, [round, tree(2), nil, "s"]);
}
// A full collection of an old generation with holes in it.
middle = nil;
gc();
print(len(old), len(big));
SRC

# A collector that never collects draws no collection (its figures are
# cli/none's).
collectors=$("$vm" --list-gcs | awk '!/cannot run/ && !/\(never collects\)/ {print $1}')
check "vm --list-gcs names collectors" '[ -n "$collectors" ]'
for gc in $collectors; do
  html="$tmp/$gc.html"
  "$vm" --gc="$gc" --gc-report="$html" "$tmp/prog.src" >"$tmp/$gc.out" 2>"$tmp/$gc.err"
  check "$gc: ran the program" '[ "$(cat "$tmp/$gc.out")" = "64 60" ]'
  check "$gc: wrote the report" '[ -s "$html" ]'
  dump_dom "file://$html" >"$tmp/$gc.dom"
  check "$gc: script finished without errors" 'grep -q "data-report-status=\"ok\"" "$tmp/$gc.dom" && grep -q "<pre id=\"report-errors\"></pre>" "$tmp/$gc.dom"'
  panel_marks "$tmp/$gc.dom" >"$tmp/$gc.marks"
  # The six panels every collector has, and its own after them.
  check "$gc: has its panels" '[ "$(wc -l <"$tmp/$gc.marks")" -ge 6 ]'
  while read -r id marks; do
    check "$gc: panel $id drew a mark ($marks)" '[ "$marks" != "-" ] && [ "$marks" -gt 0 ]'
  done <"$tmp/$gc.marks"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
