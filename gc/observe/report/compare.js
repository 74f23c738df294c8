// The --compare --gc-report page: one program under several collectors.
// DATA is {program, runs: [{collector, exit_status, disagreement, data}],
// lower_bound, heaps}, data being the run's report_data_json or null, and
// heaps --compare --heaps' sweep (the JSON output's heaps object) or null
// (compare_report_html in report.cpp). Each collector keeps one colour in every panel, by its place
// in RUNS, and no two share one however many there are (seriesColour).
var DATA = /*GCLAB_DATA*/null;

var RUNS = DATA.runs.filter(function (r) { return r.data !== null; }).map(function (r) {
  r.data.disagreement = r.disagreement;
  r.data.exit_status = r.exit_status;
  return r.data;
});
function runLegend(s) { legend(s, RUNS.map(function (r, k) { return [r.collector, seriesColour(k)]; })); }
function pausesOf(r) { return r.collections.pause_ms; }
function longestRun() { return Math.max.apply(null, RUNS.map(function (r) { return r.summary.run_time_ms / 1000; }).concat([0.001])); }
function longestPause() {
  var m = 0;
  RUNS.forEach(function (r) { pausesOf(r).forEach(function (p) { m = Math.max(m, p); }); });
  return m;
}
function shortestPause() {
  var m = Infinity;
  RUNS.forEach(function (r) { pausesOf(r).forEach(function (p) { if (p > 0) m = Math.min(m, p); }); });
  return m === Infinity ? 0.001 : m;
}
// One collector's long pauses flatten every other curve on a linear axis: a
// box switches the panel's pause axis to a logarithmic one, redrawing it
// (compare.html#log opens the page with every box ticked).
function withLogToggle(s, id, draw) {
  var ctl = html("div", { "class": "controls" }, s), holder = html("div", {}, s);
  var box = html("input", { type: "checkbox", id: id }, ctl);
  box.checked = /(^#|&)log(&|$)/.test(location.hash);
  html("label", { "for": id }, ctl, " logarithmic pause axis");
  function redraw() { holder.textContent = ""; return draw(holder, box.checked); }
  box.addEventListener("change", redraw);
  return redraw();
}
// The total of counter `name` over the run, or null where the collector
// does not count it.
function counterTotal(r, name) {
  var c = r.summary.counters.filter(function (k) { return k.name === name; });
  return c.length ? c[0].total : null;
}

// --- the cards: one per collector, and the table of the text output
function drawCards() {
  document.getElementById("title").textContent = "gclab comparison: " + DATA.program;
  document.getElementById("subtitle").textContent = DATA.runs.length + " collectors, the same program, input and heap limit" +
      (RUNS.length < DATA.runs.length ? " (" + (DATA.runs.length - RUNS.length) + " ended before they could report)" : "");
  var s = panel("table", "Side by side", "The numbers of --compare's table: time, the share of it spent paused, collections, pause percentiles, the heap, bytes copied, objects marked (where the collector counts them) and the variant each ran, with its departures from its paper. The first collector is the reference; every other must print the same output and exit the same way.");
  s.classList.add("wide");
  var t = html("table", { "class": "compare" }, s), head = html("tr", {}, t);
  ["collector", "wall ms", "GC share", "young", "full", "incr", "p50 ms", "p99 ms", "max ms", "pauses", "peak heap", "peak live", "copied", "marked", "exit", "agrees", "variant"].forEach(function (h) { html("th", {}, head, h); });
  RUNS.forEach(function (r, k) {
    var m = r.summary, tr = html("tr", {}, t), name = html("td", {}, tr);
    html("i", { style: "background:" + seriesColour(k) }, name);
    name.appendChild(document.createTextNode(r.collector));
    [fmt(m.run_time_ms), fmt(100 * m.gc_share, 1) + " %", String(m.collections.by_kind.Young), String(m.collections.by_kind.Full), String(m.collections.by_kind.Increment || 0),
     fmt(m.pause_ms.p50, 2), fmt(m.pause_ms.p99, 2), fmt(m.pause_ms.max, 2),
     m.pause_ms.simulated_collections ? "simulated" : "measured", bytes(m.heap.peak_size_bytes),
     m.heap.peak_live_bytes === null ? "-" : bytes(m.heap.peak_live_bytes), m.heap.copied_bytes ? bytes(m.heap.copied_bytes) : "-",
     counterTotal(r, "objects marked") === null ? "-" : String(counterTotal(r, "objects marked")), String(r.exit_status),
     k === 0 ? "reference" : r.disagreement ? "NO: " + r.disagreement : "yes", m.variant.text].forEach(function (v) { html("td", {}, tr, v); });
  });
  s.setAttribute("data-rows", String(RUNS.length));
}

// --- pause timelines, overlaid
function drawPauses() {
  var s = panel("pauses", "Pause timelines", "Each dot is one collection of one collector: when it happened (x) and how long the program was stopped (y).");
  if (!RUNS.length) return empty(s, "No run reported.");
  runLegend(s);
  return withLogToggle(s, "pauses-log", drawPauseDots);
}
function drawPauseDots(s, log) {
  var a = axes(s, { xMax: longestRun(), yLog: log, yMin: log ? shortestPause() : 0, yMax: (longestPause() || 1) * 1.05,
                    xLabel: "time since start (s)", yLabel: "pause (ms)" });
  var n = 0;
  RUNS.forEach(function (r, k) {
    var C = r.collections, d = "";
    for (var i = 0; i < C.id.length; i++) {
      var x = a.sx((C.start_ms[i] + C.pause_ms[i] / 2) / 1000), y = a.sy(C.pause_ms[i]);
      if (C.id.length > MANY) { d += "M" + x.toFixed(1) + " " + y.toFixed(1) + "h1"; n++; continue; }
      var c = el("circle", { cx: x, cy: y, r: 2.5, fill: seriesColour(k), "fill-opacity": 0.8 }, a.g);
      tip(c, r.collector + " GC(" + C.id[i] + ") at " + fmt(C.start_ms[i] / 1000, 3) + " s: " + fmt(C.pause_ms[i], 3) + " ms" +
          (C.simulated[i] ? " simulated" : ""));
      n++;
    }
    if (d) el("path", { d: d, stroke: seriesColour(k), "stroke-width": 3 }, a.g);
  });
  return marks(a, n);
}

// --- pause distributions: the share of collections at or under each pause
function drawDistribution() {
  var s = panel("distribution", "Pause distributions", "For each collector, the share of its collections that paused for at most x ms: a curve that rises early and reaches 1 soon pauses briefly.");
  if (!RUNS.length) return empty(s, "No run reported.");
  runLegend(s);
  return withLogToggle(s, "distribution-log", drawDistributionCurves);
}
function drawDistributionCurves(s, log) {
  var a = axes(s, { xLog: log, xMin: log ? shortestPause() : 0, xMax: (longestPause() || 1) * 1.05, yMax: 1,
                    xLabel: "pause (ms)", yLabel: "share of collections" });
  var n = 0;
  RUNS.forEach(function (r, k) {
    var p = pausesOf(r).slice().sort(function (x, y) { return x - y; });
    if (!p.length) return;
    var d = "M" + a.sx(0).toFixed(1) + " " + a.sy(0).toFixed(1);
    p.forEach(function (v, i) { d += "H" + a.sx(v).toFixed(1) + "V" + a.sy((i + 1) / p.length).toFixed(1); });
    var path = el("path", { d: d, stroke: seriesColour(k), fill: "none", "stroke-width": 2 }, a.g);
    tip(path, r.collector + ": " + p.length + " collections, p50 " + fmt(r.summary.pause_ms.p50, 3) + " ms, p99 " +
        fmt(r.summary.pause_ms.p99, 3) + " ms, max " + fmt(r.summary.pause_ms.max, 3) + " ms");
    n++;
  });
  return marks(a, n);
}

// --- heap in use over time, overlaid
function drawHeap() {
  var s = panel("heap", "Heap over time", "Each collector's heap in use: it rises as the program allocates and drops at each of its collections.");
  if (!RUNS.length) return empty(s, "No run reported.");
  runLegend(s);
  var ymax = 0;
  RUNS.forEach(function (r) {
    var C = r.collections;
    for (var i = 0; i < C.id.length; i++) ymax = Math.max(ymax, mib(C.used_before[i]));
    ymax = Math.max(ymax, mib(r.summary.heap.used_bytes));
  });
  var a = axes(s, { xMax: longestRun(), yMax: (ymax || 1) * 1.05, xLabel: "time since start (s)", yLabel: "heap (MiB)" });
  var n = 0;
  RUNS.forEach(function (r, k) {
    var C = r.collections, d = "M" + a.sx(0) + " " + a.sy(0);
    for (var i = 0; i < C.id.length; i++) {
      d += "L" + a.sx(C.start_ms[i] / 1000).toFixed(1) + " " + a.sy(mib(C.used_before[i])).toFixed(1) +
           "L" + a.sx((C.start_ms[i] + C.pause_ms[i]) / 1000).toFixed(1) + " " + a.sy(mib(C.used_after[i])).toFixed(1);
    }
    d += "L" + a.sx(r.summary.run_time_ms / 1000).toFixed(1) + " " + a.sy(mib(r.summary.heap.used_bytes)).toFixed(1);
    var path = el("path", { d: d, stroke: seriesColour(k), fill: "none", "stroke-width": 1.5 }, a.g);
    tip(path, r.collector + ": peak heap " + bytes(r.summary.heap.peak_size_bytes) + ", peak live " + (r.summary.heap.peak_live_bytes === null ? "- (no collection)" : bytes(r.summary.heap.peak_live_bytes)));
    n++;
  });
  return marks(a, n);
}

// --- minimum mutator utilisation, overlaid on one log-scale window axis
function drawUtilisation() {
  var s = panel("mmu", "Minimum mutator utilisation", "For each window size (x, log scale), the least share of any window of that size in which the program ran under each collector (Cheng and Blelloch 2001), solid; its bounded form BMU, dashed, never falls as the window grows. Higher and further left is better: short windows the program still mostly gets.");
  var curves = RUNS.map(function (r) { return r.summary.mmu ? r.summary.mmu.curve : []; });
  var lo = Infinity, hi = 0;
  curves.forEach(function (c) { c.forEach(function (p) { lo = Math.min(lo, p.window_ms); hi = Math.max(hi, p.window_ms); }); });
  if (!(hi > 0)) return empty(s, "No run paused.");
  runLegend(s);
  var a = axes(s, { xLog: true, xMin: lo, xMax: hi, yMax: 100, xLabel: "window (ms)", yLabel: "utilisation (%)" });
  var n = 0;
  curves.forEach(function (c, k) {
    if (!c.length) return;
    var mmu = "", bmu = "";
    c.forEach(function (p, i) {
      var x = a.sx(p.window_ms).toFixed(1);
      mmu += (i ? "L" : "M") + x + " " + a.sy(100 * p.mmu).toFixed(1);
      bmu += (i ? "L" : "M") + x + " " + a.sy(100 * p.bmu).toFixed(1);
    });
    el("path", { d: bmu, stroke: seriesColour(k), fill: "none", "stroke-width": 1, "stroke-dasharray": "5 3" }, a.g);
    var path = el("path", { d: mmu, stroke: seriesColour(k), fill: "none", "stroke-width": 2 }, a.g);
    var at = RUNS[k].summary.mmu.windows.map(function (w) { return fmt(w.window_ms) + " ms " + fmt(100 * w.utilisation, 1) + " %"; });
    tip(path, RUNS[k].collector + ": MMU " + (at.length ? at.join(", ") : "(the run is shorter than 1 ms)"));
    n++;
  });
  return marks(a, n);
}

// --- lower-bound overhead (Cai et al. 2022): each collector's cost over
// the least mutator cost of the runs that agree, in wall and CPU time
function drawLowerBound() {
  var s = panel("lower-bound", "Lower-bound overhead", "Each collector's cost over the least mutator cost of the runs that agree (Cai et al. 2022), which bounds what the program costs without a collector: grey is the bound itself, then the parts the counters attribute (wall time: pauses; CPU time: the collector's CPU and other threads'), then the rest: mutator cost above the bound (barriers, the allocation slow path, locality).");
  // A run's parts are its keys NAME_over_bound between the total's and the rest's (vm/compare.cpp, cost_measures).
  var LB = DATA.lower_bound || {}, rows = [], partColours = [COLORS.full, COLORS.young];
  ["wall", "cpu"].forEach(function (m) {
    var b = LB[m];
    if (!b) return;
    b.runs.forEach(function (r) {
      var bars = [[1, COLORS.size, "the bound: " + fmt(b.mutator_ms) + " ms (" + b.from + ")"]];
      Object.keys(r).filter(function (k) { return /_over_bound$/.test(k) && k !== m + "_over_bound" && k !== "rest_over_bound"; })
        .forEach(function (k, i) {
          bars.push([r[k], partColours[i % partColours.length], k.replace("_over_bound", "").replace("_", " ") + ": " + fmt(100 * r[k], 1) + " % of the bound"]);
        });
      bars.push([r.rest_over_bound, COLORS.live, "the rest: " + fmt(100 * r.rest_over_bound, 1) + " % of the bound"]);
      rows.push([r.collector + (m === "wall" ? ", wall" : ", CPU"), bars, fmt(r[m + "_over_bound"], 2) + "x"]);
    });
  });
  if (!rows.length) return empty(s, "No run that agrees measured a mutator cost.");
  legend(s, [["the bound", COLORS.size], ["pauses / collector CPU", COLORS.full], ["other threads' CPU", COLORS.young], ["the rest", COLORS.live]]);
  return hbars(s, rows, "cost over the bound (x)");
}

// --- time-space curves (--compare --heaps): a program's total and GC time
// against its heap, as a multiple of the reference collector's minimum,
// one line per collector; a run out of memory is a cross on the x axis
function sweepCollectors() {
  var names = [];
  DATA.heaps.sizes.forEach(function (h) {
    h.runs.forEach(function (r) { if (names.indexOf(r.collector) < 0) names.push(r.collector); });
  });
  return names;
}
function drawTimeSpace(s, key, yLabel) {
  var H = DATA.heaps, names = sweepCollectors(), ymax = 0;
  var xs = H.sizes.map(function (h) { return h.multiple; });
  H.sizes.forEach(function (h) { h.runs.forEach(function (r) { if (r[key] !== null) ymax = Math.max(ymax, r[key]); }); });
  legend(s, names.map(function (n, k) { return [n, seriesColour(k)]; }).concat([["out of memory: \u00d7", "transparent"]]));
  var a = axes(s, { xMin: Math.min.apply(null, xs.concat([1])), xMax: Math.max.apply(null, xs), xExact: true, yMax: (ymax || 1) * 1.05,
                    xLabel: "heap (multiple of " + H.reference.collector + "'s minimum, " + bytes(H.reference.min_heap_bytes) + ")", yLabel: yLabel });
  var n = 0;
  names.forEach(function (name, k) {
    var d = "", gap = true;  // a run out of memory breaks the line
    H.sizes.forEach(function (h) {
      var r = h.runs.filter(function (q) { return q.collector === name; })[0];
      if (!r) return;
      var x = a.sx(h.multiple);
      if (r.out_of_memory || r[key] === null) {
        var y0 = a.sy(0), c = el("path", { d: "M" + (x - 4) + " " + (y0 - 4) + "l8 8m0 -8l-8 8", stroke: seriesColour(k), "stroke-width": 2,
                                           "class": "out-of-memory" }, a.g);
        tip(c, name + " at " + h.multiple + "x (" + bytes(h.heap_bytes) + "): " + (r.out_of_memory ? "out of memory" : "exited " + r.exit_status));
        gap = true;
        n++;
        return;
      }
      var y = a.sy(r[key]);
      d += (gap ? "M" : "L") + x.toFixed(1) + " " + y.toFixed(1);
      gap = false;
      var dot = el("circle", { cx: x, cy: y, r: 3, fill: seriesColour(k) }, a.g);
      tip(dot, name + " at " + h.multiple + "x (" + bytes(h.heap_bytes) + "): " + fmt(r[key]) + " ms" + (r.agrees ? "" : ", disagrees"));
      n++;
    });
    if (d.indexOf("L") >= 0) el("path", { d: d, stroke: seriesColour(k), fill: "none", "stroke-width": 1.5 }, a.g);
  });
  return marks(a, n);
}
function drawTotalTimeSpace() {
  var s = panel("time-space-total", "Total time against heap size", "Each collector's wall time at each heap size, the sizes being multiples of the reference collector's minimum heap (--compare --heaps), so every collector gets the same heap. A cross on the axis is a run that ran out of memory at that size.");
  return drawTimeSpace(s, "total_ms", "total time (ms)");
}
function drawGcTimeSpace() {
  var s = panel("time-space-gc", "GC time against heap size", "Each collector's time in collections (the host's: its pauses, simulated ones included) at each heap size: the cost of collecting falls as the room grows. A cross on the axis is a run that ran out of memory at that size.");
  return drawTimeSpace(s, "gc_ms", "GC time (ms)");
}

runPanels([drawCards, drawPauses, drawDistribution, drawUtilisation, drawLowerBound, drawHeap]
          .concat(DATA.heaps ? [drawTotalTimeSpace, drawGcTimeSpace] : []));
