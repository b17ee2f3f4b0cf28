// graphpan.js — pan and zoom for cprof's SVG call graphs (our own code).
// The SVG holds <g id="viewport" transform="scale(0.5,0.5) translate(0,0)">
// around Graphviz's graph. Wheel zooms around the pointer, dragging the
// background pans, double click (or the 0 key) resets, + and - zoom. A
// drag only starts after the pointer moved a few pixels, so clicks stay
// clicks.
// The script comes before the graph in the document: it starts on load.
(function () {
  "use strict";
  function init() {
    var vp = document.getElementById("viewport");
    if (!vp) return;
    var svg = vp.ownerSVGElement || document.documentElement;
    var s0 = 0.5, s = s0, tx = 0, ty = 0;
    function apply() {
      vp.setAttribute("transform", "translate(" + tx + "," + ty + ") scale(" + s + ")");
    }
    function local(e) {
      var r = svg.getBoundingClientRect();
      return { x: e.clientX - r.left, y: e.clientY - r.top };
    }
    function zoomAt(p, k) {
      var ns = Math.min(Math.max(s * k, 0.02), 50);
      k = ns / s;
      tx = p.x - (p.x - tx) * k;
      ty = p.y - (p.y - ty) * k;
      s = ns;
      apply();
    }
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var d = e.deltaY * (e.deltaMode === 1 ? 30 : e.deltaMode === 2 ? 300 : 1);
      zoomAt(local(e), Math.pow(1.0015, -d));
    }, { passive: false });
    var drag = null;
    svg.addEventListener("mousedown", function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, tx: tx, ty: ty, moved: false };
    });
    window.addEventListener("mousemove", function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      drag.moved = true;
      tx = drag.tx + dx;
      ty = drag.ty + dy;
      apply();
      e.preventDefault();
    });
    window.addEventListener("mouseup", function (e) {
      if (drag && drag.moved) e.preventDefault();
      drag = null;
    });
    function reset() { s = s0; tx = 0; ty = 0; apply(); }
    svg.addEventListener("dblclick", function (e) { e.preventDefault(); reset(); });
    window.addEventListener("keydown", function (e) {
      if (e.key === "0") reset();
      else if (e.key === "+" || e.key === "=") zoomAt({ x: svg.clientWidth / 2, y: svg.clientHeight / 2 }, 1.25);
      else if (e.key === "-") zoomAt({ x: svg.clientWidth / 2, y: svg.clientHeight / 2 }, 0.8);
    });
    apply();
  }
  if (document.readyState === "complete") init();
  else window.addEventListener("load", init);
})();
