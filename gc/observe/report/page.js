// The --gc-report page of one run: DATA is report_data_json's (report.cpp).
var DATA = /*GCLAB_DATA*/null;

var C = DATA.collections, N = C.id.length;
function causeOf(i) { return DATA.cause_names[C.cause[i]] || "?"; }
var KINDS = ["Young", "Full", "Increment"], KIND_COLOURS = [COLORS.young, COLORS.full, COLORS.increment];
function kindOf(i) { return KINDS[C.kind[i]] || "?"; }
function describe(i) {
  return "GC(" + C.id[i] + ") Pause " + kindOf(i) + " (" + causeOf(i) + ") at " + fmt(C.start_ms[i] / 1000, 3) + " s: " +
         fmt(C.pause_ms[i], 3) + " ms" + (C.simulated[i] ? " simulated" : "") + ", " + bytes(C.used_before[i]) + " -> " + bytes(C.used_after[i]) + " (heap " + bytes(C.size_after[i]) + ")";
}

// --- header cards
function drawCards() {
  var s = DATA.summary;
  document.getElementById("title").textContent = "gclab GC report: " + DATA.collector;
  document.getElementById("subtitle").textContent = s.gc_threads + " GC thread(s), run time " + fmt(s.run_time_ms / 1000, 3) +
      " s, " + s.collections.total + " collections (" + s.collections.by_kind.Young + " young, " + s.collections.by_kind.Full + " full" +
      (s.collections.by_kind.Increment ? ", " + s.collections.by_kind.Increment + " increments" : "") + ")";
  // The variant in use, with each departure from the paper (stats JSON's variant.text).
  var variant = document.createElement("p");
  variant.id = "variant";
  variant.textContent = "Variant: " + s.variant.text;
  document.getElementById("subtitle").after(variant);
  var cards = document.getElementById("cards");
  // A modelled pause is the simulated hardware's time; the host's time for
  // those collections gets a card of its own.
  var sim = s.pause_ms.simulated_collections ? " (simulated)" : "";
  var list = [["collections", String(s.collections.total)], ["pause total" + sim, fmt(s.pause_ms.total) + " ms"],
   ["GC share of run time" + (sim ? " (host)" : ""), fmt(100 * s.gc_share, 1) + " %"],
   ["pause p50 / p99" + sim, fmt(s.pause_ms.p50, 3) + " / " + fmt(s.pause_ms.p99, 3) + " ms"],
   ["pause max" + sim, fmt(s.pause_ms.max, 3) + " ms"], ["allocated", bytes(s.allocation.bytes)],
   ["allocation rate", fmt(s.allocation.rate_mib_per_s) + " MiB/s"], ["peak heap", bytes(s.heap.peak_size_bytes)],
   ["peak live", s.heap.peak_live_bytes === null ? "- (no collection)" : bytes(s.heap.peak_live_bytes)]];
  if (sim) list.splice(5, 0, ["host time of the simulated collections", fmt(s.pause_ms.host_total) + " ms"]);
  list.forEach(function (kv) {
    var c = html("div", { "class": "card" }, cards);
    html("div", { "class": "v" }, c, kv[1]);
    html("div", { "class": "k" }, c, kv[0]);
  });
}

// --- 1. pauses over the run
function drawPauses() {
  var s = panel("pauses", "Pause timeline", "Each stem is one collection: when it happened (x) and how long the program was stopped (y). Full collections in red, young in blue, an incremental collector's steps in green.");
  if (!N) return empty(s, "No collections in this run.");
  var seen = [0, 0, 0];
  for (var i = 0; i < N; i++) seen[C.kind[i]] = 1;
  legend(s, [0, 1, 2].filter(function (k) { return seen[k]; }).map(function (k) { return [KINDS[k], KIND_COLOURS[k]]; }));
  var tmax = DATA.summary.run_time_ms / 1000, pmax = 0;
  for (var i = 0; i < N; i++) pmax = Math.max(pmax, C.pause_ms[i]);
  var a = axes(s, { xMax: tmax, yMax: pmax * 1.05, xLabel: "time since start (s)", yLabel: "pause (ms)" });
  var paths = ["", "", ""];
  for (var i = 0; i < N; i++) {
    var x = a.sx((C.start_ms[i] + C.pause_ms[i] / 2) / 1000), y = a.sy(C.pause_ms[i]);
    if (N > MANY) { paths[C.kind[i]] += "M" + x.toFixed(1) + " " + a.sy(0).toFixed(1) + "V" + y.toFixed(1); continue; }
    var g = el("g", {}, a.g), col = KIND_COLOURS[C.kind[i]];
    el("line", { x1: x, x2: x, y1: a.sy(0), y2: y, stroke: col, "stroke-width": 1.5 }, g);
    el("circle", { cx: x, cy: y, r: 3, fill: col }, g);
    tip(g, describe(i));
  }
  if (N > MANY) paths.forEach(function (d, k) { if (d) el("path", { d: d, stroke: KIND_COLOURS[k], fill: "none" }, a.g); });
  return marks(a, N);
}

// --- 1b. a cycle that spans many pauses: its parts over the run
var PARTS = ["marking", "sweeping", "idle"], PART_COLOURS = ["#8e44ad", "#e67e22", COLORS.idle];
function drawCycle() {
  var E = DATA.cycle_events, n = E.c.length;
  if (!n) return;  // the collector's collections are whole
  var s = panel("cycle", "The cycle over time", "An incremental collector's cycle spans many pauses: each band is a part of it, from the pause that entered it to the pause that entered the next (marking from the cycle's start, sweeping from its atomic phase, idle from its end until the next cycle starts). The stems are the pauses, as in the pause timeline; the program runs between them in every part.");
  legend(s, PARTS.map(function (p, k) { return [p, PART_COLOURS[k]]; }));
  var tmax = DATA.summary.run_time_ms / 1000, pmax = 0;
  for (var i = 0; i < N; i++) pmax = Math.max(pmax, C.pause_ms[i]);
  var a = axes(s, { xMax: tmax, yMax: pmax * 1.05 || 1, xLabel: "time since start (s)", yLabel: "pause (ms)" });
  var bands = [{ part: 2, from: 0 }];
  for (var k = 0; k < n; k++) bands.push({ part: E.part[k], from: (C.start_ms[E.c[k]] + C.pause_ms[E.c[k]]) / 1000 });
  var drawn = 0, top = a.sy(pmax * 1.05 || 1), bottom = a.sy(0);
  bands.forEach(function (b, k) {
    var to = k + 1 < bands.length ? bands[k + 1].from : tmax;
    if (to <= b.from) return;
    var r = el("rect", { x: a.sx(b.from), width: Math.max(0.5, a.sx(to) - a.sx(b.from)), y: top, height: bottom - top,
                         fill: PART_COLOURS[b.part], "fill-opacity": 0.35 }, a.g);
    tip(r, PARTS[b.part] + " from " + fmt(b.from, 3) + " s to " + fmt(to, 3) + " s");
    drawn++;
  });
  var d = "";
  for (var i = 0; i < N; i++) {
    var x = a.sx((C.start_ms[i] + C.pause_ms[i] / 2) / 1000);
    d += "M" + x.toFixed(1) + " " + bottom.toFixed(1) + "V" + a.sy(C.pause_ms[i]).toFixed(1);
  }
  el("path", { d: d, stroke: "#2c3e50", fill: "none" }, a.g);
  return marks(a, drawn);
}

// --- 2. heap occupancy before and after each collection
function drawHeap() {
  var s = panel("heap", "Heap occupancy", "Used heap rises as the program allocates and drops at each collection (the sawtooth); the grey line is the heap's size, green dots the live data a collection found.");
  if (!N) return empty(s, "No collections in this run.");
  legend(s, [["heap size", COLORS.size], ["used (before -> after a collection)", COLORS.used], ["live after a collection", COLORS.live]]);
  var tmax = DATA.summary.run_time_ms / 1000, ymax = 0;
  for (var i = 0; i < N; i++) ymax = Math.max(ymax, mib(C.size_before[i]), mib(C.size_after[i]), mib(C.used_before[i]));
  ymax = Math.max(ymax, mib(DATA.summary.heap.size_bytes));
  var a = axes(s, { xMax: tmax, yMax: ymax * 1.05, xLabel: "time since start (s)", yLabel: "heap (MiB)" });
  var used = "M" + a.sx(0) + " " + a.sy(0), size = "M" + a.sx(0) + " " + a.sy(mib(C.size_before[0]));
  for (var i = 0; i < N; i++) {
    var t0 = C.start_ms[i] / 1000, t1 = (C.start_ms[i] + C.pause_ms[i]) / 1000;
    used += "L" + a.sx(t0).toFixed(1) + " " + a.sy(mib(C.used_before[i])).toFixed(1) +
            "L" + a.sx(t1).toFixed(1) + " " + a.sy(mib(C.used_after[i])).toFixed(1);
    size += "H" + a.sx(t0).toFixed(1) + "V" + a.sy(mib(C.size_after[i])).toFixed(1);
  }
  used += "L" + a.sx(tmax).toFixed(1) + " " + a.sy(mib(DATA.summary.heap.used_bytes)).toFixed(1);
  size += "H" + a.sx(tmax).toFixed(1);
  el("path", { d: size, stroke: COLORS.size, fill: "none", "stroke-width": 2 }, a.g);
  el("path", { d: used, stroke: COLORS.used, fill: "none", "stroke-width": 1.5 }, a.g);
  if (N <= MANY) for (var i = 0; i < N; i++) {
    var c = el("circle", { cx: a.sx((C.start_ms[i] + C.pause_ms[i]) / 1000), cy: a.sy(mib(C.live_after[i])), r: 2.5, fill: COLORS.live }, a.g);
    tip(c, describe(i) + "; live after " + bytes(C.live_after[i]));
  }
  return marks(a, N);
}

// --- 3. pause histogram
function drawHistogram() {
  var s = panel("histogram", "Pause histogram", "How many collections paused for how long: a tall bar on the left and nothing on the right is what a latency-minded user wants.");
  if (!N) return empty(s, "No collections in this run.");
  var pmax = 0;
  for (var i = 0; i < N; i++) pmax = Math.max(pmax, C.pause_ms[i]);
  var bins = Math.min(30, Math.max(5, Math.ceil(Math.sqrt(N)))), w = (pmax || 1) / bins, counts = [];
  for (var b = 0; b < bins; b++) counts.push(0);
  for (var i = 0; i < N; i++) counts[Math.min(bins - 1, Math.floor(C.pause_ms[i] / w))]++;
  var a = axes(s, { xMax: pmax || 1, yMax: Math.max.apply(null, counts), yInteger: true, right: 40, xLabel: "pause (ms)", yLabel: "collections" });
  var n = 0;
  counts.forEach(function (c, b) {
    if (!c) return;
    var r = el("rect", { x: a.sx(b * w) + 1, width: Math.max(1, a.sx((b + 1) * w) - a.sx(b * w) - 2), y: a.sy(c), height: a.sy(0) - a.sy(c), fill: COLORS.young }, a.g);
    tip(r, c + " collection(s) with a pause of " + fmt(b * w, 3) + " to " + fmt((b + 1) * w, 3) + " ms");
    n++;
  });
  var ps = DATA.summary.pause_ms;
  [["p50", ps.p50], ["p99", ps.p99]].forEach(function (p) {
    var x = a.sx(p[1]);
    el("line", { x1: x, x2: x, y1: a.T, y2: a.sy(0), stroke: "#2c3e50", "stroke-dasharray": "4 3" }, a.g);
    var label = el("text", { x: x - 3, y: a.T + 12 + (p[0] === "p99" ? 14 : 0), "text-anchor": "end" }, a.g, p[0] + " " + fmt(p[1], 3) + " ms");
    if (x < a.L + 110) { label.setAttribute("text-anchor", "start"); label.setAttribute("x", x + 3); }
  });
  return marks(a, n);
}

// --- 4. minimum mutator utilisation
function drawUtilisation() {
  var s = panel("mmu", "Minimum mutator utilisation", "For each window size (x, log scale), the least share of any window of that size in which the program ran, not the collector (Cheng and Blelloch 2001). It is 0 up to the longest pause and rises to the run's mutator share; BMU (dashed) is the least at that size or any longer one, so it never falls. The dots are --gc-stats' 1, 10 and 100 ms figures.");
  var m = DATA.summary.mmu, curve = m ? m.curve : [];
  if (!curve.length) return empty(s, "No pauses in this run.");
  legend(s, [["MMU", COLORS.used], ["BMU", COLORS.full]]);
  var a = axes(s, { xLog: true, xMin: curve[0].window_ms, xMax: curve[curve.length - 1].window_ms, yMax: 100,
                    xLabel: "window (ms)", yLabel: "utilisation (%)" });
  var mmu = "", bmu = "", n = 0;
  curve.forEach(function (p, i) {
    var x = a.sx(p.window_ms).toFixed(1);
    mmu += (i ? "L" : "M") + x + " " + a.sy(100 * p.mmu).toFixed(1);
    bmu += (i ? "L" : "M") + x + " " + a.sy(100 * p.bmu).toFixed(1);
    if (p.mmu > 0) n++;
  });
  el("path", { d: bmu, stroke: COLORS.full, fill: "none", "stroke-width": 1.5, "stroke-dasharray": "5 3" }, a.g);
  el("path", { d: mmu, stroke: COLORS.used, fill: "none", "stroke-width": 2 }, a.g);
  m.windows.forEach(function (w) {
    if (w.window_ms < curve[0].window_ms) return;
    var c = el("circle", { cx: a.sx(w.window_ms), cy: a.sy(100 * w.utilisation), r: 3.5, fill: COLORS.used }, a.g);
    tip(c, "MMU at " + fmt(w.window_ms) + " ms: " + fmt(100 * w.utilisation, 1) + " %; the worst window starts at " +
        fmt(w.worst_start_ms, 3) + " ms and holds GC(" + w.worst_collections.join("), GC(") + "); filled by " +
        w.worst_phases.map(function (p) { return p.phase + " " + fmt(p.ms, 3) + " ms"; }).concat(["outside phases " + fmt(w.worst_outside_phases_ms, 3) + " ms"]).join(", "));
  });
  return marks(a, n);
}

// --- 5. phase breakdown
function drawPhases() {
  var s = panel("phases", "Phase breakdown", "Where the pause time went, summed over all collections: the wall time of each phase (first worker's start to last worker's end). A nested phase is indented under the phase it is part of; the percentage is the phase's part of the pause, an instant shared by the phases running then at its level, so the top-level phases add up to at most 100 %.");
  var ph = DATA.summary.phases;
  if (!ph.length) return empty(s, "No phases were recorded.");
  var total = DATA.summary.pause_ms.total || 1;
  return hbars(s, ph.map(function (p) {
    var label = new Array(p.depth + 1).join("\u2003") + p.name;
    return [label, [[p.wall_ms, COLORS.series[3], p.name + ": " + fmt(p.wall_ms, 3) + " ms wall, " + fmt(p.work_ms, 3) + " ms of work over all workers, in " + p.collections + " collections; longest " + fmt(p.max_wall_ms, 3) + " ms" + (p.depth ? "; part of " + ph[p.parent].name : "")]],
            fmt(p.wall_ms) + " ms (" + fmt(100 * p.pause_ms / total, 1) + " % of the pause)"];
  }), "total time in the phase (ms)");
}

// --- 6. per-thread work
function drawThreads() {
  var s = panel("threads", "Work per GC thread", "Busy time (in a phase) and idle time (paused but waiting) of each GC worker over the run. Equal blue bars mean the work was balanced; balance " + fmt(DATA.summary.balance, 2) + " (max/mean busy, 1.00 is perfect).");
  var ws = DATA.summary.workers;
  if (!ws.length) return empty(s, "No worker recorded a phase.");
  legend(s, [["busy", COLORS.busy], ["idle during pauses", COLORS.idle]]);
  return hbars(s, ws.map(function (w) {
    var counters = Object.keys(w.counters).map(function (k) { return k + " " + w.counters[k]; }).join(", ");
    return ["worker " + w.worker, [[w.busy_ms, COLORS.busy, "worker " + w.worker + ": busy " + fmt(w.busy_ms, 3) + " ms" + (counters ? "; " + counters : "")],
                                   [w.idle_ms, COLORS.idle, "worker " + w.worker + ": idle " + fmt(w.idle_ms, 3) + " ms"]],
            fmt(w.busy_ms) + " ms busy"];
  }), "time (ms)");
}

// --- 7. heap map after a chosen collection
function drawHeapMap() {
  var s = panel("heapmap", "Heap map", "The collector's spaces after the chosen collection, drawn to scale: the filled part of each bar is occupied. Move the slider to step through the collections.");
  var S = DATA.spaces;
  if (!N || !S.c.length) return empty(s, "The collector described no spaces.");
  var ctl = html("div", { "class": "controls" }, s);
  var label = html("label", { "for": "heapmap-select" }, ctl, "after collection ");
  var input = html("input", { type: "range", id: "heapmap-select", min: 0, max: N - 1, value: N - 1, step: 1 }, ctl);
  var out = html("span", { id: "heapmap-which" }, ctl);
  var holder = html("div", {}, s);
  var first = [], count = [];
  for (var i = 0; i < N; i++) { first.push(-1); count.push(0); }
  for (var j = 0; j < S.c.length; j++) { if (first[S.c[j]] < 0) first[S.c[j]] = j; count[S.c[j]]++; }
  var drawn = 0;
  function draw(ci) {
    holder.textContent = "";
    out.textContent = " GC(" + C.id[ci] + "), " + kindOf(ci) + " (" + causeOf(ci) + ") at " + fmt(C.start_ms[ci] / 1000, 3) + " s";
    var rows = [], max = 1;
    for (var j = first[ci]; j >= 0 && j < first[ci] + count[ci]; j++) max = Math.max(max, S.capacity[j]);
    for (var j = first[ci]; j >= 0 && j < first[ci] + count[ci]; j++) {
      var name = DATA.space_names[S.name[j]], role = DATA.space_names[S.role[j]];
      var pct = S.capacity[j] ? 100 * S.used[j] / S.capacity[j] : 0;
      var t = name + " (" + role + "): " + bytes(S.used[j]) + " used of " + bytes(S.capacity[j]) + " (" + fmt(pct, 0) + " %)";
      rows.push([name, [[mib(S.used[j]), COLORS.used, t], [mib(S.capacity[j] - S.used[j]), COLORS.free, t]], fmt(pct, 0) + " % of " + bytes(S.capacity[j])]);
    }
    var n = hbars(holder, rows, "MiB (each bar's length is the space's size)");
    var roles = html("ul", { "class": "what" }, holder);
    for (var j = first[ci]; j >= 0 && j < first[ci] + count[ci]; j++)
      html("li", {}, roles, DATA.space_names[S.name[j]] + ": " + DATA.space_names[S.role[j]] + ", " + bytes(S.used[j]) + " of " + bytes(S.capacity[j]));
    holder.querySelector("svg").setAttribute("id", "heapmap-svg");
    drawn = n;
    return n;
  }
  input.addEventListener("input", function () { draw(+input.value); });
  // report.html#collection=K opens the map at GC(K).
  var want = /collection=(\d+)/.exec(location.hash), start = N - 1;
  if (want) for (var i = 0; i < N; i++) if (C.id[i] === +want[1]) start = i;
  input.value = start;
  draw(start);
  legend(s, [["occupied", COLORS.used], ["free", COLORS.free]]);
  return drawn;
}

// A counter's value in collection ci, summed over the workers.
function counterIn(ci, name) {
  var K = DATA.counters, idx = DATA.counter_names.indexOf(name), v = 0;
  for (var j = 0; j < K.c.length; j++) if (K.c[j] === ci && K.counter[j] === idx) v += K.value[j];
  return v;
}

// A sequence panel: the values one collection recorded (e.g. the GPU's queue
// width per iteration), one bar each; the slider picks the collection and
// starts at the one with the longest sequence.
function drawSequencePanel(s, p, pi) {
  var Q = DATA.sequences, idx = DATA.sequence_names.indexOf(p.sequence), of = {}, longest = -1;
  for (var j = 0; j < Q.c.length; j++) if (Q.name[j] === idx) {
    of[Q.c[j]] = j;
    if (longest < 0 || Q.count[j] > Q.count[of[longest]]) longest = Q.c[j];
  }
  var which = Object.keys(of).map(Number);
  if (!which.length) return empty(s, "No collection recorded " + p.sequence + ".");
  var ctl = html("div", { "class": "controls" }, s);
  html("label", { "for": "sequence-select-" + pi }, ctl, "collection ");
  var input = html("input", { type: "range", id: "sequence-select-" + pi, min: 0, max: which.length - 1, step: 1 }, ctl);
  var out = html("span", {}, ctl), holder = html("div", {}, s), drawn = 0;
  function draw(k) {
    holder.textContent = "";
    var ci = which[k], j = of[ci], n = Q.count[j], v = Q.values.slice(Q.first[j], Q.first[j] + n);
    var step = p.x_step_counter ? counterIn(ci, p.x_step_counter) || 1 : 1;
    out.textContent = " GC(" + C.id[ci] + "): " + n + " values" + (step > 1 ? ", one per " + step + " " + p.x_label : "");
    var ymax = 0;
    v.forEach(function (x) { ymax = Math.max(ymax, x); });
    var a = axes(holder, { xMin: -0.5 * step, xMax: (Math.max(n, 1) - 0.5) * step, xExact: true, xInteger: true, yMax: ymax || 1,
                           xLabel: p.x_label, yLabel: p.y_label });
    var bw = Math.max(1, a.sx(step) - a.sx(0) - 1), d = "", count = 0;
    v.forEach(function (x, i) {
      var name = p.x_ticks.length ? p.x_ticks[i] : String(i * step);
      if (n > MANY) { d += "M" + a.sx(i * step).toFixed(1) + " " + a.sy(0).toFixed(1) + "V" + a.sy(x).toFixed(1); if (x > 0) count++; return; }
      var r = el("rect", { x: a.sx((i - 0.5) * step), width: bw, y: a.sy(x), height: Math.max(0, a.sy(0) - a.sy(x)), fill: COLORS.series[0] }, a.g);
      tip(r, p.x_label + " " + name + ": " + x + " (" + p.y_label + ")");
      if (x > 0) count++;
    });
    if (d) el("path", { d: d, stroke: COLORS.series[0] }, a.g);
    drawn = marks(a, count);
  }
  input.addEventListener("input", function () { draw(+input.value); });
  input.value = which.indexOf(longest);
  draw(which.indexOf(longest));
  if (p.x_ticks.length) html("p", { "class": "what" }, s, p.x_label + ": " + p.x_ticks.join(", "));
  return drawn;
}

function drawSequencePanels() {
  DATA.sequence_panels.forEach(function (p, pi) {
    var s = panel("sequence-" + pi, p.title, p.description);
    if (!N) return empty(s, "No collections in this run.");
    drawSequencePanel(s, p, pi);
  });
}

// --- 8. the collector's own panels: one bar per collection
function drawCollectorPanels() {
  var K = DATA.counters;
  DATA.panels.forEach(function (p, pi) {
    var s = panel("collector-" + pi, p.title, p.description);
    if (!N) return empty(s, "No collections in this run.");
    var per = {};  // counter name -> per-collection totals over workers
    function series(name) {
      if (per[name]) return per[name];
      var idx = DATA.counter_names.indexOf(name), v = new Array(N).fill(0);
      for (var j = 0; j < K.c.length; j++) if (K.counter[j] === idx) v[K.c[j]] += K.value[j];
      return (per[name] = v);
    }
    var lines = p.series.map(function (sr) {
      var num = series(sr.counter), den = sr.per_counter ? series(sr.per_counter) : null;
      return num.map(function (x, i) { return den ? (den[i] ? x / den[i] * sr.scale : 0) : x * sr.scale; });
    });
    var ymax = 0;
    lines.forEach(function (l) { l.forEach(function (v) { ymax = Math.max(ymax, v); }); });
    if (p.series.length > 1) legend(s, p.series.map(function (sr, k) { return [sr.label, seriesColour(k)]; }));
    var a = axes(s, { xMin: -0.5, xMax: N - 0.5, xExact: true, xInteger: true, yMax: ymax || 1, xLabel: "collection (GC number)", yLabel: p.y_label });
    var n = 0, bw = Math.max(1, (a.sx(1) - a.sx(0)) / lines.length - 1);
    lines.forEach(function (l, k) {
      var d = "";
      l.forEach(function (v, i) {
        var x = a.sx(i - 0.5) + k * bw + (a.sx(1) - a.sx(0) > 4 ? 1 : 0);
        if (N > MANY) { d += "M" + x.toFixed(1) + " " + a.sy(0).toFixed(1) + "V" + a.sy(v).toFixed(1); if (v > 0) n++; return; }
        var r = el("rect", { x: x, width: bw, y: a.sy(v), height: Math.max(0, a.sy(0) - a.sy(v)), fill: seriesColour(k) }, a.g);
        tip(r, "GC(" + C.id[i] + "): " + p.series[k].label + " " + fmt(v, 2) + " (" + p.y_label + ")");
        if (v > 0) n++;
      });
      if (d) el("path", { d: d, stroke: seriesColour(k) }, a.g);
    });
    marks(a, n);
  });
}

runPanels([drawCards, drawPauses, drawCycle, drawHeap, drawHistogram, drawUtilisation, drawPhases, drawThreads, drawHeapMap, drawCollectorPanels, drawSequencePanels]);
