// flame.js — cprof's interactive flame graph (our own code, no library).
//
// cprofFlame(container, data) renders data (the JSON of flame.c's
// flame_json) into container: a toolbar (search, reset, what is shown),
// the legend, and an SVG icicle graph, root at the top. Click a frame to
// zoom into it (a click on an ancestor bar zooms back out), Esc or "Reset
// zoom" to go back to the whole profile; type a regexp in the search box to
// highlight frames and see the share of the total they account for; hover
// for values. Only frames at least a third of a pixel wide are drawn, so a
// redraw stays cheap whatever the zoom. Returns an object with zoom(i),
// search(re) and reset() for pages and tests that drive it.
function cprofFlame(container, data) {
  "use strict";
  var ROW = 18, MINPX = 0.33, CHARPX = 6.6;
  var diff = !!data.diff, stride = diff ? 6 : 4, raw = data.nodes;
  var n = Math.floor(raw.length / stride);
  var nameIx = new Int32Array(n), val = new Float64Array(n), base = new Float64Array(n);
  var self = new Float64Array(n), selfb = new Float64Array(n), wid = new Float64Array(n);
  var parent = new Int32Array(n), depth = new Int32Array(n), end = new Int32Array(n);
  var x = new Float64Array(n), kidsW = new Float64Array(n), maxDepth = 0;
  var names = data.names || [], total = Math.abs(data.total) || 1;

  // Decode the pre-order list: each node's children follow it.
  var stack = [];
  for (var i = 0; i < n; i++) {
    var o = i * stride, nch;
    nameIx[i] = raw[o];
    val[i] = raw[o + 1];
    if (diff) { base[i] = raw[o + 2]; self[i] = raw[o + 3]; selfb[i] = raw[o + 4]; nch = raw[o + 5]; }
    else { self[i] = raw[o + 2]; nch = raw[o + 3]; }
    wid[i] = val[i] + base[i];
    if (stack.length) {
      var top = stack[stack.length - 1];
      parent[i] = top.i;
      depth[i] = depth[top.i] + 1;
      x[i] = top.next;
      top.next += wid[i];
      kidsW[top.i] += wid[i];
      top.left--;
    } else {
      parent[i] = -1;
      depth[i] = 0;
      x[i] = 0;
    }
    if (depth[i] > maxDepth) maxDepth = depth[i];
    end[i] = i + 1;
    if (nch > 0) stack.push({ i: i, next: x[i], left: nch });
    while (stack.length && stack[stack.length - 1].left === 0) {
      end[stack[stack.length - 1].i] = i + 1;
      stack.pop();
    }
  }

  // --- formatting ---------------------------------------------------------
  var unit = (data.unit || "").toLowerCase();
  function trim2(v) { var s = v.toFixed(2); return s.replace(/\.?0+$/, ""); }
  function fmt(v) {
    var neg = v < 0, a = Math.abs(v), s;
    if (/^(b|bytes?)$/.test(unit)) {
      var u = ["B", "kB", "MB", "GB", "TB", "PB"], k = 0;
      while (a >= 1024 && k < u.length - 1) { a /= 1024; k++; }
      s = trim2(a) + u[k];
    } else if (/^(ns|nanoseconds?)$/.test(unit)) {
      var t = [[3600e9, "hrs"], [1e9, "s"], [1e6, "ms"], [1e3, "us"]], done = false;
      for (var j = 0; j < t.length && !done; j++)
        if (a >= t[j][0]) { s = trim2(a / t[j][0]) + t[j][1]; done = true; }
      if (!done) s = trim2(a) + "ns";
    } else {
      s = String(Math.round(a)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
      if (unit && unit !== "count") s += " " + data.unit;
    }
    return (neg ? "-" : "") + s;
  }
  function pct(v) { return (100 * v / total).toFixed(2) + "%"; }
  function signed(v) { return (v > 0 ? "+" : "") + fmt(v); }
  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }

  // --- colours ---------------------------------------------------------------
  function hash(s) {
    var h = 2166136261;
    for (var k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 16777619);
    return h >>> 0;
  }
  var colCache = {};
  function warm(ix) {
    var c = colCache[ix];
    if (c) return c;
    var nm = names[ix] || "", h = hash(nm.replace(/\(.*$/, ""));
    var r = 205 + (h & 31) + ((h >> 5) & 15);
    var g = 80 + ((h >> 9) % 140);
    var b = 40 + ((h >> 17) % 45);
    c = "rgb(" + Math.min(r, 250) + "," + g + "," + b + ")";
    colCache[ix] = c;
    return c;
  }
  function diffColour(i) {
    var w = wid[i];
    if (w <= 0) return "rgb(220,220,220)";
    var d = (val[i] - base[i]) / w, t = Math.sqrt(Math.abs(d));
    var grey = [222, 222, 222], to = d > 0 ? [226, 70, 60] : [60, 180, 75];
    var c = grey.map(function (g, k) { return Math.round(g + (to[k] - g) * t); });
    return "rgb(" + c.join(",") + ")";
  }
  function colour(i) {
    if (i === 0) return "rgb(200,200,205)";
    return diff ? diffColour(i) : warm(nameIx[i]);
  }

  // --- the page ----------------------------------------------------------------
  container.classList.add("cf");
  container.innerHTML =
    '<div class="cf-bar">' +
    '<span class="cf-title"></span>' +
    '<input class="cf-search" type="search" placeholder="Search (regexp)" spellcheck="false">' +
    '<span class="cf-match"></span>' +
    '<button class="cf-reset" type="button" disabled>Reset zoom</button>' +
    '</div>' +
    '<details class="cf-legend"><summary></summary><pre></pre></details>' +
    '<div class="cf-hint"></div>' +
    '<div class="cf-area"><svg class="cf-svg" xmlns="http://www.w3.org/2000/svg"></svg>' +
    '<div class="cf-tip" hidden></div></div>';
  var q = function (c) { return container.querySelector(c); };
  var svg = q(".cf-svg"), tip = q(".cf-tip"), input = q(".cf-search"), match = q(".cf-match");
  var resetBtn = q(".cf-reset"), area = q(".cf-area");
  q(".cf-title").textContent = (data.title ? data.title + ": " : "") + (data.type || "") +
    (diff ? " (difference)" : "");
  var legend = data.legend || [];
  q(".cf-legend summary").textContent = "Total " + fmt(data.total) +
    (legend.length ? " \u2014 " + legend[0] : "");
  q(".cf-legend pre").textContent = legend.join("\n");
  var hint = "Click a frame to zoom, Esc to reset; / to search.";
  if (data.pruned > 0)
    hint += " Frames of " + fmt(data.pruned) + " (" + pct(data.pruned) + ") or less are not shown (" +
      n + " frames kept).";
  if (diff)
    hint += " Widths: new + base; red grew, green shrank.";
  q(".cf-hint").textContent = hint;

  var focus = 0, matched = null, hover = -1;

  // What a node lost to pruning: its width less its own samples and its
  // kept children. Drawn hatched below it, right of the children.
  function prunedW(i) {
    var p = wid[i] - self[i] - selfb[i] - kidsW[i];
    return p > wid[i] * 1e-9 ? p : 0;
  }

  function isAncestor(a, b) { // a is b or an ancestor of b
    return a <= b && b < end[a];
  }

  function draw() {
    var W = Math.max(area.clientWidth, 200);
    var x0 = x[focus], span = wid[focus] || 1, k = W / span;
    var out = [];
    function frame(i, px, pw) {
      var y = depth[i] * ROW, fill = matched && matched[i] ? "rgb(225,90,230)" : colour(i);
      var label = i === 0 ? "root" : names[nameIx[i]] || "";
      var cls = i === hover ? "cf-f cf-hover" : "cf-f";
      if (isAncestor(i, focus) && i !== focus) cls += " cf-anc";
      out.push('<g class="', cls, '" data-i="', i, '" data-name="', esc(label), '"><rect x="', px.toFixed(2), '" y="', y,
        '" width="', Math.max(pw - 0.5, 0.1).toFixed(2), '" height="', ROW - 1, '" fill="', fill, '"/>');
      var room = Math.floor((pw - 6) / CHARPX);
      if (room >= 3) {
        var t = label.length > room ? label.slice(0, room - 1) + "\u2026" : label;
        out.push('<text x="', (px + 3).toFixed(2), '" y="', y + ROW - 5, '">', esc(t), "</text>");
      }
      out.push("</g>");
      var pw2 = prunedW(i) * (isAncestor(i, focus) && i !== focus ? 0 : k);
      if (pw2 >= 1 && depth[i] + 1 <= maxDepth + 1)
        out.push('<rect class="cf-pruned" data-p="', i, '" x="', (px + kidsW[i] * k).toFixed(2), '" y="',
          y + ROW, '" width="', Math.max(pw2 - 0.5, 0.1).toFixed(2), '" height="', ROW - 1, '"/>');
    }
    for (var a = parent[focus]; a >= 0; a = parent[a]) frame(a, 0, W);
    for (var i = focus; i < end[focus];) {
      var pw = wid[i] * k;
      if (pw < MINPX) { i = end[i]; continue; }
      frame(i, (x[i] - x0) * k, pw);
      i++;
    }
    svg.setAttribute("width", W);
    svg.setAttribute("height", (maxDepth + 2) * ROW);
    svg.innerHTML = '<defs><pattern id="cf-hatch" width="6" height="6" patternUnits="userSpaceOnUse" ' +
      'patternTransform="rotate(45)"><rect width="6" height="6" fill="#eee"/>' +
      '<line x1="0" y1="0" x2="0" y2="6" stroke="#bbb" stroke-width="2"/></pattern></defs>' + out.join("");
    resetBtn.disabled = focus === 0;
  }

  function zoom(i) {
    if (i < 0 || i >= n) return;
    focus = i;
    draw();
    saveHash();
  }
  function reset() { zoom(0); }

  function search(re) {
    input.value = re || "";
    runSearch();
  }
  function runSearch() {
    saveHash();
    var s = input.value;
    if (!s) { matched = null; match.textContent = ""; draw(); return; }
    var rx;
    try { rx = new RegExp(s, "i"); }
    catch (e) { rx = new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i"); }
    var hit = {};
    for (var j = 1; j < names.length; j++) if (rx.test(names[j])) hit[j] = true;
    matched = new Uint8Array(n);
    var sum = 0, sumb = 0, count = 0;
    for (var i = 1; i < n;) {
      if (hit[nameIx[i]]) {
        // the whole subtree is under a match: count it once
        sum += val[i];
        sumb += base[i];
        for (var d = i; d < end[i]; d++) if (hit[nameIx[d]]) { matched[d] = 1; count++; }
        i = end[i];
      } else {
        i++;
      }
    }
    match.textContent = count ? "Matched " + pct(sum - sumb) + " (" + fmt(sum - sumb) + ")" +
      (diff ? " \u2014 new " + fmt(sum) + ", base " + fmt(sumb) : "") : "No match";
    draw();
  }

  function tipHTML(i) {
    var nm = i === 0 ? "root (all samples)" : names[nameIx[i]] || "";
    var h = '<div class="cf-tname">' + esc(nm) + "</div>";
    if (diff) {
      var dv = val[i] - base[i], ds = self[i] - selfb[i];
      h += "<div>new " + fmt(val[i]) + ", base " + fmt(base[i]) + ": <b>" + signed(dv) +
        "</b> (" + pct(dv) + ")</div>";
      h += "<div>self: " + signed(ds) + " (new " + fmt(self[i]) + ", base " + fmt(selfb[i]) + ")</div>";
    } else {
      h += "<div>cum <b>" + fmt(val[i]) + "</b> (" + pct(val[i]) + ")" +
        (focus !== 0 && wid[focus] > 0 ? ", " + (100 * wid[i] / wid[focus]).toFixed(2) + "% of zoom" : "") +
        "</div>";
      h += "<div>flat (self) " + fmt(self[i]) + " (" + pct(self[i]) + ")</div>";
    }
    if (i !== 0 && data.fflat && data.fcum) {
      var ix = nameIx[i];
      h += '<div class="cf-tfunc">in the whole profile: flat ' + fmt(data.fflat[ix]) + " (" +
        pct(data.fflat[ix]) + "), cum " + fmt(data.fcum[ix]) + " (" + pct(data.fcum[ix]) + ")</div>";
    }
    return h;
  }

  function prunedTip(i) {
    return '<div class="cf-tname">(frames too small to show)</div><div>under ' +
      esc(i === 0 ? "root" : names[nameIx[i]]) + ": " + fmt(prunedW(i)) + " (" + pct(prunedW(i)) +
      ") in frames of " + fmt(data.pruned) + " or less each</div>";
  }

  function target(e) {
    var g = e.target.closest ? e.target.closest(".cf-f") : null;
    return g ? +g.getAttribute("data-i") : -1;
  }
  svg.addEventListener("click", function (e) {
    var i = target(e);
    if (i >= 0) zoom(i);
  });
  function setHover(i, g) {
    var old = svg.querySelector(".cf-hover");
    if (old) old.classList.remove("cf-hover");
    if (g) g.classList.add("cf-hover");
    hover = i;
  }
  svg.addEventListener("mousemove", function (e) {
    var i = target(e), p = e.target.getAttribute ? e.target.getAttribute("data-p") : null;
    if (i < 0 && p === null) { setHover(-1, null); tip.hidden = true; return; }
    if (i < 0) {
      setHover(-1, null);
      tip.innerHTML = prunedTip(+p);
    } else if (i !== hover) {
      setHover(i, e.target.closest(".cf-f"));
      tip.innerHTML = tipHTML(i);
    }
    tip.hidden = false;
    var r = area.getBoundingClientRect(), tx = e.clientX - r.left + 14, ty = e.clientY - r.top + 14;
    if (tx + tip.offsetWidth > area.clientWidth) tx = Math.max(0, e.clientX - r.left - tip.offsetWidth - 10);
    tip.style.left = tx + "px";
    tip.style.top = ty + "px";
  });
  svg.addEventListener("mouseleave", function () { tip.hidden = true; setHover(-1, null); });
  resetBtn.addEventListener("click", reset);
  var timer = null;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(runSearch, 120);
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      if (document.activeElement === input && input.value) search("");
      else reset();
    } else if (e.key === "/" && document.activeElement !== input) {
      e.preventDefault();
      input.focus();
    }
  });
  // The view in the URL's fragment (#s=regexp&f=frame), to share or reload:
  // f names the zoomed frame by its path of names from the root.
  function pathOf(i) {
    var p = [];
    for (; i > 0; i = parent[i]) p.unshift(names[nameIx[i]]);
    return p.join(";");
  }
  function findPath(p) {
    var want = p.split(";"), i = 0;
    for (var d = 0; d < want.length; d++) {
      var next = -1;
      for (var c = i + 1; c < end[i]; c = end[c])
        if (names[nameIx[c]] === want[d]) { next = c; break; }
      if (next < 0) {
        // not a path: the heaviest frame of that name
        for (var k = 1; k < n; k++) if (names[nameIx[k]] === p) return k;
        return -1;
      }
      i = next;
    }
    return i;
  }
  var loading = true;
  function saveHash() {
    if (loading || !window.history || !history.replaceState) return;
    var h = [];
    if (input.value) h.push("s=" + encodeURIComponent(input.value));
    if (focus !== 0) h.push("f=" + encodeURIComponent(pathOf(focus)));
    try { history.replaceState(null, "", h.length ? "#" + h.join("&") : location.pathname + location.search); }
    catch (e) { /* file: URLs in some browsers */ }
  }
  function loadHash() {
    var h = (location.hash || "").replace(/^#/, "").split("&");
    for (var k = 0; k < h.length; k++) {
      var kv = h[k].split("="), v = decodeURIComponent(kv.slice(1).join("=") || "");
      if (kv[0] === "s") input.value = v;
      else if (kv[0] === "f") { var z = findPath(v); if (z > 0) focus = z; }
    }
    if (input.value) runSearch();
  }

  var lastW = 0;
  window.addEventListener("resize", function () {
    if (area.clientWidth !== lastW) { lastW = area.clientWidth; draw(); }
  });
  loadHash();
  draw();
  loading = false;
  return { zoom: zoom, search: search, reset: reset, count: n,
           focus: function () { return focus; }, matchText: function () { return match.textContent; } };
}
