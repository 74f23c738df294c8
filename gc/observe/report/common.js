"use strict";
// What both report pages share: SVG helpers, axes, panels, and running
// the panels with their errors shown in the page for the tests.
window.onerror = function (msg, src, line, col, err) {
  var e = document.getElementById("report-errors");
  e.textContent += "script error: " + msg + " (line " + line + ")\n";
  document.body.setAttribute("data-report-status", "error");
};
var SVGNS = "http://www.w3.org/2000/svg";
var COLORS = { full: "#c0392b", young: "#2e86de", increment: "#16a085", size: "#8a94a3", used: "#2e86de", live: "#27ae60",
               busy: "#2e86de", idle: "#d5dbe3", free: "#eef1f5",
               series: ["#8e44ad", "#e67e22", "#16a085", "#2c3e50", "#c0a000", "#b03060", "#2e86de", "#7f8c8d", "#6b8e23", "#d35400"] };
// The k-th of as many colours as asked for, no two alike: the palette, then
// hues a golden angle apart (which never repeat).
function seriesColour(k) {
  var P = COLORS.series;
  return k < P.length ? P[k] : "hsl(" + ((k - P.length) * 137.508 + 20) % 360 + ", 60%, 40%)";
}
var MANY = 4000;  // above this many marks, one path replaces per-mark shapes and tooltips

function el(tag, attrs, parent, text) {
  var e = document.createElementNS(SVGNS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function html(tag, attrs, parent, text) {
  var e = document.createElement(tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function tip(node, text) { el("title", {}, node, text); }
function fmt(v, d) { return (d === undefined ? (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)) : v.toFixed(d)); }
function tickText(t, d) { return Number.isInteger(t) ? String(t) : t.toFixed(Math.min(d, 6)); }
function mib(b) { return b / 1048576; }
function bytes(b) {
  if (b < 1024) return b + " B";
  if (b < 1048576) return (b / 1024).toFixed(1) + " KiB";
  if (b < 1073741824) return (b / 1048576).toFixed(1) + " MiB";
  return (b / 1073741824).toFixed(2) + " GiB";
}
function niceTicks(lo, hi, n, integer) {
  if (!(hi > lo)) hi = lo + 1;
  var step = Math.pow(10, Math.floor(Math.log10((hi - lo) / n)));
  var err = (hi - lo) / n / step;
  if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
  if (integer) step = Math.max(1, Math.round(step));
  var ticks = [];
  for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  return { ticks: ticks, max: Math.max(hi, ticks[ticks.length - 1]), decimals: Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) };
}

// A panel: a titled section with a sentence saying what it shows.
function panel(id, title, what) {
  var s = html("section", { "class": "panel", id: "panel-" + id }, document.getElementById("panels"));
  html("h2", {}, s, title);
  html("p", { "class": "what" }, s, what);
  return s;
}
function legend(parent, items) {
  var d = html("div", { "class": "legend" }, parent);
  items.forEach(function (it) { var s = html("span", {}, d); html("i", { style: "background:" + it[1] }, s); s.appendChild(document.createTextNode(it[0])); });
}

// A logarithmic axis over [lo, hi] (lo > 0): ticks at the powers of ten
// that span it; a value at or under lo maps to lo, so a zero still shows.
function logTicks(lo, hi) {
  var a = Math.floor(Math.log10(lo)), b = Math.max(a + 1, Math.ceil(Math.log10(hi))), ticks = [];
  for (var e = a; e <= b; e++) ticks.push(Math.pow(10, e));
  return { ticks: ticks, min: ticks[0], max: ticks[ticks.length - 1], decimals: Math.max(0, -a) };
}
function logScale(lo, hi, p0, p1) {
  var l0 = Math.log10(lo), span = Math.log10(hi) - l0 || 1;
  return function (v) { return p0 + (Math.log10(Math.max(v, lo)) - l0) / span * (p1 - p0); };
}

// Axes with ticks, grid lines and labels; returns scales and the plot group.
// xLog / yLog: that axis is logarithmic from xMin / yMin (positive).
function axes(parent, o) {
  var W = o.width || 560, H = o.height || 260, L = o.left || 64, R = o.right || 16, T = 12, B = 46;
  var svg = el("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" }, parent);
  if (o.xLog || o.yLog) svg.setAttribute("data-log", o.xLog ? "x" : "y");  // for the tests
  var xt = o.xLog ? logTicks(o.xMin, o.xMax) : niceTicks(o.xMin || 0, o.xMax, 6, o.xInteger);
  var yt = o.yLog ? logTicks(o.yMin, o.yMax) : niceTicks(o.yMin || 0, o.yMax, 5, o.yInteger);
  var xmax = o.xExact ? o.xMax : xt.max, xmin = o.xLog ? xt.min : o.xMin || 0;
  var sx = o.xLog ? logScale(xmin, xmax, L, W - R) : function (v) { return L + (v - xmin) / (xmax - xmin || 1) * (W - L - R); };
  var sy = o.yLog ? logScale(yt.min, yt.max, H - B, T)
                  : function (v) { return H - B - (v - (o.yMin || 0)) / (yt.max - (o.yMin || 0) || 1) * (H - T - B); };
  var grid = el("g", { "class": "grid" }, svg), ax = el("g", { "class": "axis" }, svg);
  yt.ticks.forEach(function (t) {
    el("line", { x1: L, x2: W - R, y1: sy(t), y2: sy(t) }, grid);
    el("text", { x: L - 6, y: sy(t) + 4, "text-anchor": "end" }, ax, tickText(t, yt.decimals));
  });
  xt.ticks.forEach(function (t) {
    if (t < xmin || t > xmax) return;
    el("line", { x1: sx(t), x2: sx(t), y1: H - B, y2: H - B + 5 }, ax);
    el("text", { x: sx(t), y: H - B + 18, "text-anchor": "middle" }, ax, tickText(t, xt.decimals));
  });
  el("line", { x1: L, x2: W - R, y1: H - B, y2: H - B }, ax);
  el("line", { x1: L, x2: L, y1: T, y2: H - B }, ax);
  el("text", { "class": "label", x: L + (W - L - R) / 2, y: H - 8, "text-anchor": "middle" }, svg, o.xLabel);
  el("text", { "class": "label", x: 14, y: T + (H - T - B) / 2, "text-anchor": "middle",
               transform: "rotate(-90 14 " + (T + (H - T - B) / 2) + ")" }, svg, o.yLabel);
  return { svg: svg, sx: sx, sy: sy, g: el("g", {}, svg), W: W, H: H, L: L, R: R, T: T, B: B };
}
// Horizontal bars: rows of [label, [value, colour, tooltip]...] stacked.
function hbars(s, rows, xLabel) {
  var h = 40 + rows.length * 26 + 46, left = 170, max = 0;
  rows.forEach(function (r) { var t = 0; r[1].forEach(function (p) { t += p[0]; }); max = Math.max(max, t); });
  var a = axes(s, { xMax: max || 1, yMax: 1, height: h, left: left, right: 130, xLabel: xLabel, yLabel: "" });
  a.svg.querySelectorAll(".grid line").forEach(function (l) { l.remove(); });
  a.svg.querySelectorAll(".axis text[text-anchor=end]").forEach(function (t) { t.remove(); });
  var n = 0;
  rows.forEach(function (r, i) {
    var y = a.T + 10 + i * 26, x = a.sx(0);
    el("text", { x: left - 8, y: y + 14, "text-anchor": "end" }, a.g, r[0]);
    r[1].forEach(function (p) {
      var w = a.sx(p[0]) - a.sx(0);
      var rect = el("rect", { x: x, y: y, width: Math.max(w, p[0] > 0 ? 1 : 0), height: 18, fill: p[1] }, a.g);
      tip(rect, p[2]);
      x += w;
      n++;
    });
    if (r[2]) el("text", { x: x + 6, y: y + 14 }, a.g, r[2]);
  });
  return marks(a, n);
}
function marks(a, n) { a.svg.setAttribute("data-marks", String(n)); return n; }
function empty(section, why) { html("p", { "class": "empty" }, section, why); var s = el("svg", { width: 10, height: 10, "data-marks": "0" }, section); return s; }

// Runs each panel; a panel that throws shows its error in the page and the
// others still draw. The status is what tests/observe/report_test.sh reads.
function runPanels(list) {
  var failed = false;
  list.forEach(function (f) {
    try { f(); } catch (e) {
      document.getElementById("report-errors").textContent += f.name + ": " + e + "\n" + (e.stack || "") + "\n";
      failed = true;
    }
  });
  document.body.setAttribute("data-report-status", failed ? "error" : "ok");
  document.getElementById("report-status").textContent = failed ? "error" : "ok";
}
