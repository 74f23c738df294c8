#!/usr/bin/env bash
# --gc-report: the page opened in headless Chromium has no script error,
# finishes its script (data-report-status="ok"), and draws every panel with
# at least one mark; the heap map follows #collection=K.
#   tests/observe/report_test.sh VM_BINARY SOURCE_DIR
# Exits 77 (skipped) when no chromium is installed (scripts/bootstrap
# installs Debian's chromium).
set -u
. "$(dirname "$0")/lib.sh" "$1" "$2" report browser

# panel_drawn ID DOM: the <section id="panel-ID"> has an SVG with data-marks > 0.
panel_drawn() {
  awk -v id="id=\"panel-$1\"" 'BEGIN { RS = "<section" }
    index($0, id) && match($0, /data-marks="[0-9]+"/) && substr($0, RSTART + 12, RLENGTH - 13) + 0 > 0 { found = 1 }
    END { exit !found }' "$2"
}

run_case() {  # name, panels that must have marks, then vm arguments
  local name=$1 want=$2
  shift 2
  local html="$tmp/$name.html"
  "$vm" --gc-report="$html" "$@" >/dev/null 2>"$tmp/$name.err"
  check "$name: vm wrote the report" '[ -s "$html" ]'
  check "$name: nothing fetched from the network" '! grep -Eq "(src|href)=\"(https?:)?//" "$html"'
  dump_dom "file://$html" >"$tmp/$name.dom"
  check "$name: page loaded" '[ -s "$tmp/$name.dom" ]'
  check "$name: script finished" 'grep -q "data-report-status=\"ok\"" "$tmp/$name.dom"'
  check "$name: no script errors" 'grep -q "<pre id=\"report-errors\"></pre>" "$tmp/$name.dom"'
  # Each wanted panel is present and its SVG drew marks (data-marks > 0).
  for p in $want; do
    check "$name: panel $p present and drawn" 'panel_drawn "$p" "$tmp/$name.dom"'
  done
  check "$name: axes are labelled" 'grep -q "time since start (s)" "$tmp/$name.dom" && grep -q "pause (ms)" "$tmp/$name.dom" && grep -q "heap (MiB)" "$tmp/$name.dom"'
  check "$name: the header names the variant" 'grep -Eq "<p id=\"variant\">Variant: [^<]+(: the paper.s configuration|: departures from the paper: [^<]+)</p>" "$tmp/$name.dom"'
  dump_dom "file://$html#collection=0" >"$tmp/$name.0.dom"
  check "$name: heap map selects GC(0)" 'grep -q "id=\"heapmap-which\"> GC(0)," "$tmp/$name.0.dom"'
}

generic="pauses heap histogram phases threads heapmap"
# semispace's own panels: bytes copied and survival rate.
semispace="$generic collector-0 collector-1"
run_case binary_trees "$semispace" --gc-threads=0 "$top/samples/binary_trees.src" 12
run_case gcbench "$semispace" --gc-threads=0 "$top/samples/gcbench.src" 6
# gpu's own: Figure 2 (frontier per iteration), Figure 3 (out-degrees), and
# its device time beside marksweep's two panels.
run_case gpu "$generic collector-2 sequence-0 sequence-1" --gc=gpu "$top/samples/binary_trees.src" 14
# accel's own, after marksweep's two: the speedups, requests by source,
# and one mark's bandwidth and queue occupancy over time.
run_case accel "$generic collector-2 collector-3 sequence-0 sequence-1" --gc=accel "$top/samples/binary_trees.src" 12
run_case explicit "$generic" -e 'for (let i = 0; i < 4; i += 1) { gc(); }'
# incremental's cycle: its parts as bands, its steps named as increments.
run_case incremental "pauses cycle heap histogram phases" --gc=incremental "$top/samples/binary_trees.src" 12
check "incremental: the steps are increments, in the legend and the header" \
  'grep -q ">Increment<" "$tmp/incremental.dom" && grep -Eq "collections \(0 young, [0-9]+ full, [0-9]+ increments\)" "$tmp/incremental.dom"'
check "incremental: marking, sweeping and idle bands" \
  'for p in marking sweeping idle; do grep -q "<title>$p from " "$tmp/incremental.dom" || exit 1; done'
check "a collector whose collections are whole has no cycle panel" '! grep -q "id=\"panel-cycle\"" "$tmp/binary_trees.dom"'

# --compare --gc-report: one page, every run overlaid; a collector that
# disagrees is shown as such.
collectors=$("$vm" --list-gcs | awk '!/cannot run/ {print $1}')
html="$tmp/compare.html"
"$vm" --compare --gc-report="$html" "$top/samples/binary_trees.src" 12 </dev/null >/dev/null 2>"$tmp/compare.err"
check "compare: vm wrote the report" '[ -s "$html" ]'
check "compare: nothing fetched from the network" '! grep -Eq "(src|href)=\"(https?:)?//" "$html"'
dump_dom "file://$html" >"$tmp/compare.dom"
check "compare: script finished" 'grep -q "data-report-status=\"ok\"" "$tmp/compare.dom"'
check "compare: no script errors" 'grep -q "<pre id=\"report-errors\"></pre>" "$tmp/compare.dom"'
for p in pauses distribution mmu lower-bound heap; do
  check "compare: panel $p present and drawn" 'panel_drawn "$p" "$tmp/compare.dom"'
done
check "compare: the MMU window axis is logarithmic" '[ "$(grep -o "data-log=\"[xy]\"" "$tmp/compare.dom" | wc -l)" -eq 1 ]'
check "compare: a table row per collector" 'grep -q "data-rows=\"$(echo "$collectors" | wc -l)\"" "$tmp/compare.dom"'
for gc in $collectors; do
  check "compare: $gc in the legends" '[ "$(grep -o "</i>$gc</span>" "$tmp/compare.dom" | wc -l)" -eq 4 ]'
done
check "compare: a colour per collector" '[ "$(for gc in $collectors; do grep -o "<i style=\"background:[^\"]*\"></i>$gc</span>" "$tmp/compare.dom" | sed "s/<\/i>.*//"; done | sort -u | wc -l)" -eq "$(echo "$collectors" | wc -l)" ]'
check "compare: the table has the marked column" 'grep -q "<th>marked</th>" "$tmp/compare.dom"'
check "compare: the table has the variant column" 'grep -q "<th>variant</th>" "$tmp/compare.dom" &&
  grep -Eq "<td>pSemispaces: (the paper.s configuration|departures from the paper: [^<]+)</td>" "$tmp/compare.dom"'
# #log: both pause panels on a logarithmic axis (ticks at powers of ten).
dump_dom "file://$html#log" >"$tmp/compare.log.dom"
check "compare #log: script finished" 'grep -q "data-report-status=\"ok\"" "$tmp/compare.log.dom"'
for p in pauses distribution; do
  check "compare #log: panel $p drawn" 'panel_drawn "$p" "$tmp/compare.log.dom"'
done
check "compare #log: both pause axes are logarithmic, besides MMU's window axis" '[ "$(grep -o "data-log=\"[xy]\"" "$tmp/compare.log.dom" | wc -l)" -eq 3 ]'
"$vm" --compare=semispace,marksweep --gc-report="$html" -e 'print(gc_stats()["collector"]);' </dev/null >/dev/null 2>&1
dump_dom "file://$html" >"$tmp/compare2.dom"
check "compare: a disagreement shown" 'grep -q "NO: its output differs from semispace.s at line 1" "$tmp/compare2.dom"'

# --compare --heaps: the time-space curves, and the run out of memory at
# 1x (semispace keeps room to copy into) crossed on the axis. One GC
# thread: near the minimum a parallel copy's need varies from run to run.
sweep="$tmp/sweep.html"
"$vm" --compare=semispace,marksweep --gc-threads=1 --heaps=1x,2x,3x --gc-report="$sweep" \
  "$top/samples/binary_trees.src" 12 </dev/null >/dev/null 2>"$tmp/sweep.err"
check "sweep: vm wrote the report" '[ -s "$sweep" ]'
dump_dom "file://$sweep" >"$tmp/sweep.dom"
check "sweep: script finished" 'grep -q "data-report-status=\"ok\"" "$tmp/sweep.dom"'
check "sweep: no script errors" 'grep -q "<pre id=\"report-errors\"></pre>" "$tmp/sweep.dom"'
for p in time-space-total time-space-gc; do
  check "sweep: panel $p drawn" 'panel_drawn "$p" "$tmp/sweep.dom"'
  check "sweep: panel $p crosses out semispace at 1x" \
    '[ "$(awk -v id="id=\"panel-$p\"" "BEGIN { RS = \"<section\" } index(\$0, id)" "$tmp/sweep.dom" | grep -o "class=\"out-of-memory\"" | wc -l)" -eq 1 ]'
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
