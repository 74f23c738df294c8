// The --gc-animate page: plays back the steps one collection took on the
// heap it started with (gc/observe/recording.h writes DATA).
"use strict";

const STATE = { white: 0, grey: 1, black: 2, forwarded: 3, freed: 4 };
const UNALLOCATED = 5;  // an object a recorded cycle allocates, before its step
const STATE_NAMES = ["white: not reached", "grey: reached, slots not yet traced", "black: reached and traced",
                     "forwarded: copied away, the forwarding pointer left behind", "freed: a free cell now"];
const STATE_FILL = ["#ffffff", "#9aa3ad", "#1d2430", "#d9c8f0", "#bfe8c4"];
const FREE_CELL_FILL = "#e8f6ea";
const THREAD_FILL = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
const PAPER = {
  "grey": "Tri-colour marking (Dijkstra et al. 1978): an object the collector reaches turns grey, and stays grey " +
          "until its slots are traced; one with no references is black at once.",
  "scan": "Tracing a grey object: each slot's target is reached in turn (greyed), and the object is black. " +
          "No black object then refers to a white one (the tri-colour invariant, gc/parallel/tracer.h).",
  "copy": "Copying (Cheney 1970; Flood et al. 2001, section 4): the object is copied to to-space and its old " +
          "header becomes the forwarding pointer, so every later reference to it finds the copy.",
  "forward": "Mark-compact's planning (Flood et al. 2001, section 5): each live object's new address is " +
             "decided before anything moves.",
  "move": "Mark-compact's compaction: the object slides to the address decided for it.",
  "free": "Sweep: a cell whose object was not marked is garbage and joins its size class's free list.",
  "steal": "Work stealing (Flood et al. 2001, section 3.3): a thread with no work takes a task from the top " +
           "of another thread's deque.",
  "level": "The GPU's mark (Maas et al. 2012, Algorithm 1) goes level by level: level k holds the objects " +
           "first reached from level k - 1. The page shows the objects whose marks the device set, level by " +
           "level; within a level the order is the host's walk, since the device's own is not seen.",
  "message": "Marking by messages (Zhou and Demsky, L101): a core that finds a reference into a partition " +
             "another core hosts does not mark it; it sends that core a mark message, and the host marks " +
             "and scans the object.",
  "ptrquery": "Updating references (Zhou and Demsky, section 2.3, L130-140): a reference into another core's " +
              "partition that neither the core's own table nor the host's shared table resolves is asked of " +
              "the host in a ptrquery message; the host looks the old address up in its full table, and the " +
              "slot is patched when the response comes back.",
  "balance": "Load balancing (Zhou and Demsky, section 3.3, L176-195): a core that fills its share of partitions " +
             "with objects left asks the master for room; the master gives it free space in a finished core's " +
             "partition, neighbours on the mesh first, and the objects moved there leave their home core.",
  "card": "Card scanning (Flood et al. 2001, section 4, L164-171): the write barrier dirtied the card of every old " +
          "slot given a reference, and a young collection takes the slots on dirty cards as roots: the young " +
          "objects they refer to are copied or promoted, and a card with no slot still referring to a young " +
          "object is clean again.",
  "redirect": "Mark-compact's redirect phase (Flood et al. 2001, section 5.3): once every live object's new " +
              "address is decided, each reference to a moving object is updated to it, before anything moves; " +
              "the compaction then slides the objects to where the references already point.",
  "allocate": "Between the cycle's pauses the program runs. An object it allocates while a cycle marks gets the " +
              "colour the barrier needs: black under Yuasa's snapshot, grey under the others (the page shows " +
              "its mark as a step of its own).",
  "barrier": "The write barrier keeps the tri-colour invariant while the program runs between marking steps: " +
             "Dijkstra's shades the new target of a store into a black object, Yuasa's the value a store " +
             "overwrites, Steele's makes the black object stored into grey again.",
  "phase start": "The collection moves on to its next phase.",
  "phase end": "A phase ends on this thread.",
};

function hex(a) { return "0x" + a.toString(16); }
// A step's b holding two numbers: its low 32 bits and the bits above.
function low(b) { return b % 2 ** 32; }
function high(b) { return Math.floor(b / 2 ** 32); }
function plural(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); }
// What a message step asks: "mark" or "ptrquery" (DATA.message_kinds).
function messageKind(s) { return DATA.message_kinds[high(s[4])]; }
const DEVICE_FILL = "#e6a700";
// A worker's name and colour: a GC thread, or the accelerator.
function who(w) { return w === DATA.device ? "the device" : (DATA.actor || "thread") + " " + w; }
function workerFill(w) { return w === DATA.device ? DEVICE_FILL : THREAD_FILL[w % THREAD_FILL.length]; }
function el(id) { return document.getElementById(id); }

function fail(message) {
  el("errors").textContent = message;
  document.body.dataset.animationStatus = "error";
  el("status").textContent = "error";
}

function start() {
  if (!DATA || !Array.isArray(DATA.steps)) return fail("This page holds no recording.");
  const kinds = DATA.step_kinds;
  const objects = DATA.objects.map((o, id) => ({ id, start: o[0], header: o[1], words: o[2], cls: o[3],
                                               space: o[4], targets: o[5] }));
  const initialObjects = objects.length;
  const initialHeader = new Map(objects.map(o => [o.header, o.id]));
  const steps = DATA.steps;
  // Objects the program allocates during a recorded cycle: not there until
  // their step (their references are not recorded).
  const allocatedBy = new Map();  // step index -> object id
  steps.forEach((s, i) => {
    if (kinds[s[1]] !== "allocate") return;
    const words = low(s[4]), nrefs = high(s[4]);
    allocatedBy.set(i, objects.length);
    objects.push({ id: objects.length, start: s[3] - (nrefs ? nrefs + 1 : 0) * 8, header: s[3], words, cls: -1,
                   space: -1, targets: new Array(nrefs).fill(0) });
  });
  // Addresses to objects, as they are after the steps so far (a copy, a
  // slide or an allocation takes an address over).
  let byHeader, byStart;
  const workers = Math.max(1, DATA.workers);

  el("title").textContent = (DATA.cycle ? "The cycle from GC(" + DATA.collection + ")" : "GC(" + DATA.collection + ")") +
      " under " + DATA.collector + ", object by object";
  // The actors that took steps (a collector may declare more than act).
  const acting = new Set(steps.map(s => s[2]).filter(w => w !== DATA.device)).size;
  const noun = DATA.actor || "thread";
  el("subtitle").textContent = initialObjects + " objects at the start, " + DATA.free_cells.length +
      " free cells, " + DATA.roots.length + " root references; " + steps.length + " steps by " + acting + " " +
      noun + (acting === 1 ? "" : "s") + (steps.some(s => s[2] === DATA.device) ? " and the device" : "") +
      (DATA.full ? " (a full collection)" : "");
  el("slider").max = steps.length;
  el("legend").innerHTML = STATE_NAMES.map((n, i) =>
      '<span><i style="background:' + STATE_FILL[i] + '"></i>' + n + "</span>").join("") +
      '<span><i style="background:' + FREE_CELL_FILL + '"></i>free cell before the collection</span>';

  // --- the state after the first `cur` steps
  let cur = 0;
  let state, at, by, cursor, counts;
  function reset() {
    cur = 0;
    byHeader = new Map();
    byStart = new Map();
    for (let id = 0; id < initialObjects; ++id) {
      byHeader.set(objects[id].header, id);
      byStart.set(objects[id].start, id);
    }
    state = new Uint8Array(objects.length).fill(STATE.white);
    for (let id = initialObjects; id < objects.length; ++id) state[id] = UNALLOCATED;
    at = objects.map(o => o.header);       // where each object's header is now
    by = new Int16Array(objects.length).fill(-1);  // a worker, DATA.device included
    cursor = new Array(workers).fill(null);  // each thread's last address
    counts = Array.from({ length: workers }, () => ({}));
  }
  function leaf(id) { return objects[id].targets.length === 0; }
  function apply(s, index) {
    const kind = kinds[s[1]], w = s[2];
    const c = counts[w] || (counts[w] = {});
    c[kind] = (c[kind] || 0) + 1;
    if (kind === "phase start" || kind === "phase end") return;
    const a = s[3], b = s[4];
    if (kind === "steal" || kind === "level" || kind === "message") return;
    // These change no object's colour: the thread's cursor goes to the
    // card, the redirected object or the room the master gave.
    if (kind === "card" || kind === "redirect" || kind === "balance") { cursor[w] = a; return; }
    if (kind === "allocate") {
      const id = allocatedBy.get(index);
      state[id] = STATE.white;
      byHeader.set(objects[id].header, id);
      byStart.set(objects[id].start, id);
      cursor[w] = s[3];
      return;
    }
    if (kind === "barrier") {
      // Steele's barrier greys the object stored into again; the others
      // shaded their target in a grey step of their own.
      const id = byHeader.get(s[3]);
      if (id !== undefined && s[3] === s[4]) { state[id] = STATE.grey; by[id] = w; }
      return;
    }
    cursor[w] = kind === "copy" || kind === "move" ? b : a;
    if (kind === "free") {
      const id = byStart.get(a);
      if (id !== undefined) { state[id] = STATE.freed; by[id] = w; }
      return;
    }
    const id = byHeader.get(a);
    if (id === undefined) return;
    by[id] = w;
    if (kind === "grey") state[id] = leaf(id) ? STATE.black : STATE.grey;
    else if (kind === "scan") state[id] = STATE.black;
    else if (kind === "copy" || kind === "move") {
      at[id] = b;
      byHeader.set(b, id);
      if (kind === "copy") state[id] = leaf(id) ? STATE.black : STATE.grey;
    }
  }
  function seek(k) {
    k = Math.max(0, Math.min(steps.length, k));
    if (k < cur) reset();
    while (cur < k) { apply(steps[cur], cur); cur++; }
    draw();
  }

  function describe(i) {
    if (i < 0) return ["Before the collection: every object is white.", ""];
    const s = steps[i], kind = kinds[s[1]], w = s[2], t = who(w);
    const sentence = (() => {
      if (kind === "phase start") return "thread " + w + ' starts the phase "' + s[3] + '"';
      if (kind === "phase end") return "thread " + w + ' ends the phase "' + s[3] + '"';
      if (kind === "message" && messageKind(s) === "ptrquery")
        return t + " sends ptrquery(" + hex(s[3]) + ") to " + who(low(s[4])) + ", the host of " + hex(s[3]) +
               ", to learn where that object moved";
      if (kind === "message") return t + " sends mark(" + hex(s[3]) + ") to " + who(low(s[4]));
      if (kind === "card") {
        const n = low(s[4]), young = high(s[4]) === 1;
        return t + " scans the dirty card at " + hex(s[3]) + ": " + plural(n, "slot") + " on it referred to young " +
               "objects and now refer to their copies" + (young ? ", and a slot still refers to a young object, which " +
               "keeps the card dirty" : ", and none refers to a young object any more (all were promoted), so the " +
               "card need not stay dirty");
      }
      if (kind === "balance")
        return t + " has reached its bound with objects left, and the master gives it room in partition " +
               high(s[4]) + ", hosted by " + who(low(s[4])) + ", from " + hex(s[3]) + ", where its next objects move";
      if (kind === "allocate")
        return "the program allocates " + hex(s[3]) + " (" + low(s[4]) * 8 + " bytes) during the cycle";
      if (kind === "barrier")
        return s[3] === s[4] ? "the program stores into " + hex(s[3]) + ", which was black: the barrier makes it grey again"
                             : "the program stores into " + hex(s[3]) + ": the barrier shades " + hex(s[4]);
      if (kind === "steal") return t + " steals a task (object " + hex(s[4]) + ") from thread " + s[3] + "'s deque";
      if (kind === "level") return t + " starts level " + s[3] + " of its mark: " + s[4] + " objects";
      if (kind === "free") return t + " frees the cell at " + hex(s[3]) + " (" + s[4] * 8 + " bytes)";
      const id = byHeader.get(s[3]);
      const o = id === undefined ? null : objects[id];
      const what = o ? " (" + o.words * 8 + " bytes, " + o.targets.length + " references)" : "";
      if (kind === "grey") return t + " reaches " + hex(s[3]) + what + (o && leaf(o.id) ? ": white to black" : ": white to grey");
      if (kind === "scan") return t + " traces the slots of " + hex(s[3]) + what + ": grey to black";
      if (kind === "copy") return t + " copies " + hex(s[3]) + what + " to " + hex(s[4]);
      if (kind === "forward") return t + " decides that " + hex(s[3]) + " moves to " + hex(s[4]);
      if (kind === "move") return t + " slides " + hex(s[3]) + " to " + hex(s[4]);
      if (kind === "redirect")
        return t + " redirects " + plural(s[4], "slot") + " of " + hex(s[3]) + what + (s[4] === 1
            ? " to the forwarding address of the object it refers to"
            : " to the forwarding addresses of the objects they refer to");
      return t + ": " + kind;
    })();
    const paper = w === DATA.device ? "level" : kind === "message" ? messageKind(s) === "ptrquery" ? "ptrquery" : "message" : kind;
    return [sentence + ".", PAPER[paper] || ""];
  }

  // --- the heap, to scale: one row per space name, its ranges side by side
  // in address order; addresses in no recorded space (to-space, filled by
  // the copies) get a row of their own spanning what the steps reach.
  const rows = [];
  const rowOf = new Map();
  DATA.spaces.forEach(sp => {
    if (!rowOf.has(sp.name)) { rowOf.set(sp.name, rows.length); rows.push({ name: sp.name, ranges: [] }); }
    if (sp.end > sp.begin) rows[rowOf.get(sp.name)].ranges.push([sp.begin, sp.end]);
  });
  function inRanges(a) {
    for (const r of rows) for (const [b, e] of r.ranges) if (a >= b && a < e) return true;
    return false;
  }
  let lo = Infinity, hi = -Infinity;
  for (const s of steps) {
    const kind = kinds[s[1]];
    if ((kind === "copy" || kind === "move") && !inRanges(s[4])) {
      const id = initialHeader.get(s[3]);
      const words = id === undefined ? 1 : objects[id].words;
      lo = Math.min(lo, s[4] - words * 8); hi = Math.max(hi, s[4] + words * 8);
    }
  }
  if (lo < hi) rows.push({ name: "copies (to-space)", ranges: [[lo, hi]] });
  for (const r of rows) {
    r.ranges.sort((x, y) => x[0] - y[0]);
    r.total = r.ranges.reduce((n, [b, e]) => n + (e - b), 0) || 1;
  }
  // One scale for every row, so that sizes compare across spaces; a row
  // wraps onto as many lines as its bytes need, and the scale is chosen so
  // that the whole heap takes at most about MAX_LINES lines.
  const canvas = el("heap"), ctx = canvas.getContext("2d");
  const LINE = 22, GAP = 10, LABEL = 150, WIDTH = canvas.width - LABEL - 10, MAX_LINES = 60;
  const heapBytes = rows.reduce((n, r) => n + r.total, 0);
  const bytesPerPx = Math.max(1, heapBytes / (WIDTH * MAX_LINES));
  let y = 4;
  for (const r of rows) {
    r.y = y;
    r.lines = Math.max(1, Math.ceil(r.total / bytesPerPx / WIDTH));
    y += r.lines * LINE + GAP;
  }
  canvas.height = y;
  function place(a) {  // [row, x, y] of address a
    for (let r = 0; r < rows.length; ++r) {
      let before = 0;
      for (const [b, e] of rows[r].ranges) {
        if (a >= b && a < e) {
          const px = (before + a - b) / bytesPerPx;
          return [r, LABEL + px % WIDTH, rows[r].y + Math.floor(px / WIDTH) * LINE];
        }
        before += e - b;
      }
    }
    return null;
  }
  function fill(id) {
    const s = state[id];
    if (el("by-thread").checked && by[id] >= 0 && s !== STATE.white) return workerFill(by[id]);
    return STATE_FILL[s];
  }
  function box(a, words, colour) {
    const p = place(a);
    if (!p) return;
    // An object longer than the rest of its line goes on over the next
    // lines, as the row's bytes do.
    let x = p[1], y = p[2], left = Math.max(1.5, words * 8 / bytesPerPx);
    ctx.fillStyle = colour;
    ctx.strokeStyle = "#8a94a3";
    ctx.lineWidth = 0.5;
    while (left > 0) {
      const wpx = Math.min(left, LABEL + WIDTH - x);
      ctx.fillRect(x, y, wpx, LINE - 6);
      if (wpx > 4) ctx.strokeRect(x, y, wpx, LINE - 6);
      left -= wpx;
      x = LABEL;
      y += LINE;
    }
  }
  function drawHeap() {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.font = "12px system-ui, sans-serif";
    for (const r of rows) {
      ctx.fillStyle = "#eef1f5";
      for (let l = 0; l < r.lines; ++l) {
        const w = l + 1 < r.lines ? WIDTH : r.total / bytesPerPx - l * WIDTH;
        ctx.fillRect(LABEL, r.y + l * LINE, Math.max(w, 1), LINE - 6);
      }
      ctx.fillStyle = "#1d2430";
      ctx.fillText(r.name, 4, r.y + 12);
    }
    for (const [a, words] of DATA.free_cells) box(a, words, FREE_CELL_FILL);
    // The old places of moved objects first, so that an object slid onto
    // another's old place is drawn over it.
    for (const o of objects)
      if (at[o.id] !== o.header && state[o.id] !== STATE.freed) box(o.start, o.words, STATE_FILL[STATE.forwarded]);
    // The object's first word lies as far below its header at its new
    // place as at its old one.
    for (const o of objects)
      if (state[o.id] !== UNALLOCATED) box(at[o.id] - (o.header - o.start), o.words, fill(o.id));
    cursor.forEach((a, w) => {
      const p = a === null ? null : place(a);
      if (!p) return;
      ctx.fillStyle = workerFill(w);
      const y = p[2] + LINE - 6;
      ctx.beginPath(); ctx.moveTo(p[1], y - 2); ctx.lineTo(p[1] - 5, y + 6); ctx.lineTo(p[1] + 5, y + 6); ctx.fill();
    });
  }

  // --- the object graph, for heaps small enough to read: layers by
  // distance from the roots, unreachable objects in a last row.
  const GRAPH_LIMIT = 1000;
  const svg = el("graph");
  const nodes = [];
  // The heap the collection started with.
  const initial = objects.slice(0, initialObjects);
  const headerOf = initialHeader;
  // Each object's distance from the roots (-1: no root reaches it).
  const depth = new Int32Array(initial.length).fill(-1);
  let frontier = [];
  for (const r of DATA.roots) {
    const id = headerOf.get(r);
    if (id !== undefined && depth[id] < 0) { depth[id] = 0; frontier.push(id); }
  }
  for (let d = 0; frontier.length; ++d) {
    const next = [];
    for (const id of frontier)
      for (const t of objects[id].targets) {
        const j = headerOf.get(t);
        if (j !== undefined && depth[j] < 0) { depth[j] = d + 1; next.push(j); }
      }
    frontier = next;
  }
  document.body.dataset.reachable = depth.filter(d => d >= 0).length;
  if (initial.length <= GRAPH_LIMIT) {
    const layers = [];
    const maxDepth = Math.max(-1, ...depth);
    initial.forEach(o => {
      const d = depth[o.id] < 0 ? maxDepth + 1 : depth[o.id];
      (layers[d] = layers[d] || []).push(o.id);
    });
    // A wide layer wraps onto several lines of at most PER_LINE nodes.
    const width = +svg.getAttribute("width"), PER_LINE = 80, LINE_GAP = 16, LAYER_GAP = 40;
    const radius = initial.length > 300 ? 4 : 8;
    const pos = new Array(initial.length);
    let y = 40;
    layers.forEach(ids => {
      const lines = Math.ceil(ids.length / PER_LINE);
      ids.forEach((id, k) => {
        const line = Math.floor(k / PER_LINE), n = Math.min(PER_LINE, ids.length - line * PER_LINE);
        pos[id] = [((k % PER_LINE) + 1) * width / (n + 1), y + line * LINE_GAP];
      });
      y += (lines - 1) * LINE_GAP + LAYER_GAP;
    });
    svg.setAttribute("height", y);
    let edges = "";
    for (const r of DATA.roots) {
      const id = headerOf.get(r);
      if (id !== undefined) edges += '<line x1="' + width / 2 + '" y1="16" x2="' + pos[id][0] + '" y2="' + pos[id][1] + '" stroke="#c9d2e0"/>';
    }
    initial.forEach(o => o.targets.forEach(t => {
      const j = headerOf.get(t);
      if (j !== undefined) edges += '<line x1="' + pos[o.id][0] + '" y1="' + pos[o.id][1] + '" x2="' + pos[j][0] + '" y2="' + pos[j][1] + '" stroke="#aab4c3"/>';
    }));
    let circles = '<rect x="' + (width / 2 - 22) + '" y="4" width="44" height="16" fill="#fff" stroke="#1d2430"/><text x="' + (width / 2 - 14) + '" y="16">roots</text>';
    initial.forEach(o => {
      circles += '<circle data-id="' + o.id + '" cx="' + pos[o.id][0] + '" cy="' + pos[o.id][1] + '" r="' + radius + '" stroke="#1d2430" stroke-width="0.5"><title>' + hex(o.header) + ", " + o.words * 8 + " bytes</title></circle>";
    });
    svg.innerHTML = edges + circles;
    svg.querySelectorAll("circle").forEach(c => nodes.push(c));
    el("graph-what").textContent = "Every object as a node, in rows by its distance from the roots (the VM's own " +
        "start-up objects, strings and builtins, among them); the last row holds the objects no root reaches: garbage.";
  } else {
    el("graph-what").textContent = "Shown for heaps of up to " + GRAPH_LIMIT + " objects; this one starts with " + initial.length + ".";
  }
  function drawGraph() { for (const c of nodes) c.setAttribute("fill", fill(+c.dataset.id)); }

  function drawThreads() {
    const shown = kinds.filter(k => k !== "phase end");
    let html = "<tr><th>who</th>" + shown.map(k => "<th>" + k + "</th>").join("") + "</tr>";
    counts.forEach((c, w) => {
      html += '<tr><td><i style="display:inline-block;width:10px;height:10px;margin-right:6px;background:' +
              workerFill(w) + '"></i>' + (w === DATA.device ? "device" : (DATA.actor || "thread") + " " + w) + "</td>" +
              shown.map(k => "<td>" + (c[k] || 0) + "</td>").join("") + "</tr>";
    });
    el("threads").innerHTML = html;
  }

  function draw() {
    el("slider").value = cur;
    el("position").textContent = "step " + cur + " of " + steps.length +
        (cur > 0 ? " (" + (steps[cur - 1][0] / 1000).toFixed(1) + " µs into the collection)" : "");
    const [sentence, paper] = describe(cur - 1);
    el("sentence").textContent = sentence;
    el("paper").textContent = paper;
    drawHeap();
    drawGraph();
    drawThreads();
    const summary = [0, 0, 0, 0, 0];
    for (const s of state) if (s !== UNALLOCATED) summary[s]++;
    document.body.dataset.states = summary.join(",");
    document.body.dataset.step = cur;
    if (cur === steps.length) document.body.dataset.finalCheck = checkFinal();
  }

  // The state after every step against the heap the collector left (its
  // objects' headers, DATA.after): every object the page shows live is
  // there, at the address the steps moved it to; no freed object is; and
  // after a full collection, nothing else is. "ok", or what differs.
  function checkFinal() {
    const after = new Set(DATA.after);
    const live = new Set();
    const problems = [];
    for (const o of objects) {
      const s = state[o.id];
      const allocated = o.id >= initialObjects && s !== UNALLOCATED;
      if (s === STATE.black || (allocated && s !== STATE.freed)) {
        live.add(at[o.id]);
        if (!after.has(at[o.id])) problems.push("live " + hex(at[o.id]) + " is not in the heap after");
      } else if (s === STATE.freed && !DATA.cycle && after.has(o.header)) {
        problems.push("freed " + hex(o.header) + " is still in the heap after");
      } else if (s === STATE.grey) {
        problems.push(hex(at[o.id]) + " is still grey");
      }
    }
    if (DATA.full && !DATA.cycle)
      for (const h of after) if (!live.has(h)) problems.push(hex(h) + " is in the heap after, but the steps never reached it");
    return problems.length ? problems.length + " differences, the first: " + problems[0] : "ok";
  }

  // --- controls
  let timer = null;
  function pause() { if (timer) { clearInterval(timer); timer = null; } el("play").textContent = "play"; }
  function play() {
    if (cur >= steps.length) seek(0);
    const rate = +el("speed").value;
    const perTick = Math.max(1, Math.round(rate / 30));
    timer = setInterval(() => {
      if (cur >= steps.length) return pause();
      seek(cur + perTick);
    }, 1000 * perTick / rate);
    el("play").textContent = "pause";
  }
  function nextPhase() {
    let k = cur;
    while (k < steps.length && kinds[steps[k][1]] !== "phase start") ++k;
    seek(k + 1);
  }
  el("play").onclick = () => (timer ? pause() : play());
  el("first").onclick = () => { pause(); seek(0); };
  el("back").onclick = () => { pause(); seek(cur - 1); };
  el("forward").onclick = () => { pause(); seek(cur + 1); };
  el("next-phase").onclick = () => { pause(); nextPhase(); };
  el("speed").onchange = () => { if (timer) { pause(); play(); } };
  el("by-thread").onchange = draw;
  el("slider").oninput = e => { pause(); seek(+e.target.value); };
  document.addEventListener("keydown", e => {
    if (e.key === " ") { e.preventDefault(); timer ? pause() : play(); }
    else if (e.key === "ArrowRight") { pause(); seek(cur + 1); }
    else if (e.key === "ArrowLeft") { pause(); seek(cur - 1); }
    else if (e.key === "Home") { pause(); seek(0); }
    else if (e.key === "End") { pause(); seek(steps.length); }
    else if (e.key === "PageDown") { pause(); nextPhase(); }
  });
  // For tests and scripts: the page's state after `k` steps.
  window.gclabSeek = k => { pause(); seek(k); return document.body.dataset.states; };

  reset();
  // A link may name a step: page.html#step=N opens there.
  const linked = /step=(\d+)/.exec(location.hash);
  seek(linked ? +linked[1] : 0);
  // For tests: #trail=N,0,N seeks to each step in turn, as the controls
  // would, and keeps the states shown after each (data-trail).
  const trail = /trail=([\d,]+)/.exec(location.hash);
  if (trail) {
    const seen = [];
    for (const k of trail[1].split(",")) { seek(+k); seen.push(document.body.dataset.states); }
    document.body.dataset.trail = seen.join("|");
  }
  document.body.dataset.animationStatus = "ready";
  el("status").textContent = "ready";
}

try {
  start();
} catch (e) {
  fail("The page could not draw this recording: " + e);
}
