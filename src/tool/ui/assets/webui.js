// webui.js — the behaviour of cprof's web UI pages (cprof -http): selecting
// nodes (click; the search box selects by regexp), the Refine menu (focus,
// ignore, hide, show, show from the selection), view links that carry the
// selection, double-click to focus on one node, sorting the top table,
// panning and zooming the call graph, and the flame graph's page data.
// The state of a view is its URL: every action ends in a new URL.
(function () {
  'use strict';

  const content = document.getElementById('content');
  const search = document.getElementById('search');
  const selected = new Set(); // names
  let regexpMode = false; // the selection comes from the search box
  let moved = false; // the pointer dragged the graph: not a click

  // --- helpers ---------------------------------------------------------------
  function quotemeta(s) {
    return s.replace(/([\\.?+*\[\](){}|^$])/g, '\\$1');
  }

  function hint(text) {
    let h = document.getElementById('hint');
    if (!h) {
      h = document.createElement('div');
      h.id = 'hint';
      document.body.appendChild(h);
    }
    h.textContent = text;
    h.classList.add('shown');
    clearTimeout(hint.timer);
    hint.timer = setTimeout(() => h.classList.remove('shown'), 2500);
  }

  // The URL of path (relative to this page) with this page's parameters,
  // changed by edit(params).
  function urlWith(path, edit) {
    const u = new URL(path, window.location.href);
    u.hash = '';
    const params = new URLSearchParams(window.location.search);
    if (edit) edit(params);
    u.search = params.toString();
    return u.toString();
  }

  function nameOf(el) {
    return el.getAttribute('data-name');
  }

  function nodes() {
    return content ? content.querySelectorAll('[data-name]') : [];
  }

  // A regexp for one node: its name, alone or followed by " file:line" (the
  // printable names peek matches at the lines granularity).
  function nodeRegexp(n) {
    return '^' + quotemeta(n) + '( |$)';
  }

  // The regexp the selection stands for ("" when nothing is selected).
  function selectionRegexp() {
    if (regexpMode && search && search.value !== '') return search.value;
    return Array.from(selected).map(nodeRegexp).join('|');
  }

  function paint() {
    for (const el of nodes()) el.classList.toggle('sel', selected.has(nameOf(el)));
    const enable = selected.size > 0 || (search && search.value !== '');
    for (const a of document.querySelectorAll('a.refine')) a.classList.toggle('disabled', !enable);
  }

  function toggle(name) {
    regexpMode = false;
    if (selected.has(name)) selected.delete(name);
    else selected.add(name);
    paint();
  }

  // --- selection by click and by search ---------------------------------------
  if (content) {
    content.addEventListener('click', (e) => {
      // links navigate (Graphviz wraps nodes in SVG <a>s: those select);
      // a flame frame zooms
      const link = e.target.closest('a');
      if ((link && !(link instanceof SVGElement)) || e.target.closest('#flame')) return;
      const el = e.target.closest('[data-name]');
      if (!el || !content.contains(el) || moved) return;
      const name = nameOf(el);
      if (name === null || name === '') return;
      toggle(name);
    });
    // Double-click: focus on that node.
    content.addEventListener('dblclick', (e) => {
      if (e.target.closest('#flame')) return;
      const el = e.target.closest('[data-name]');
      if (!el || !content.contains(el)) return;
      const name = nameOf(el);
      if (!name) return;
      window.location.href = urlWith(window.location.pathname, (p) => p.set('f', nodeRegexp(name)));
    });
  }

  let searchTimer = null;
  function selectMatching() {
    searchTimer = null;
    let re = null;
    search.classList.remove('bad');
    if (search.value !== '') {
      try {
        re = new RegExp(search.value);
      } catch (err) {
        search.classList.add('bad');
        return;
      }
    }
    regexpMode = true;
    selected.clear();
    if (re) for (const el of nodes()) if (re.test(nameOf(el))) selected.add(nameOf(el));
    paint();
  }
  if (search) {
    search.addEventListener('input', () => {
      if (searchTimer) clearTimeout(searchTimer);
      searchTimer = setTimeout(selectMatching, 250);
    });
    search.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      const v = search.value;
      window.location.href = urlWith(window.location.pathname, (p) => {
        if (v === '') p.delete('f');
        else p.set('f', v);
      });
    });
    // The search box starts with the focus regexp; nothing is selected by it.
    search.addEventListener('focus', () => search.select());
  }

  // --- refine menu and view links ----------------------------------------------
  for (const a of document.querySelectorAll('a.refine')) {
    const param = a.getAttribute('data-param');
    const update = () => {
      const re = selectionRegexp();
      a.href = urlWith(window.location.pathname, (p) => {
        if (re === '') return;
        // focus, show and show from replace; ignore and hide add to what was there
        const old = p.get(param);
        p.set(param, (param === 'i' || param === 'h') && old ? re + '|' + old : re);
      });
    };
    a.addEventListener('mouseenter', update);
    a.addEventListener('focus', update);
    a.addEventListener('click', (e) => {
      update();
      if (selectionRegexp() === '') {
        e.preventDefault();
        hint('Select nodes first (click them), or type a regexp in the search box.');
      }
    });
  }
  // View links carry the selection into the focus parameter, as pprof's do.
  for (const a of document.querySelectorAll('a.viewlink')) {
    const base = a.getAttribute('href');
    const update = () => {
      const re = selectionRegexp();
      a.href = re === '' ? base : urlWith(base, (p) => p.set('f', re));
    };
    a.addEventListener('mouseenter', update);
    a.addEventListener('focus', update);
    a.addEventListener('click', update);
  }
  // Download: the profile as loaded, whatever the view's parameters.

  // --- the top table --------------------------------------------------------------
  const table = document.getElementById('toptable');
  if (table) {
    const total = Number(table.getAttribute('data-total')) || 0;
    const body = table.tBodies[0];
    let column = 'flat';
    let descending = true;
    const pct = (v) => (total === 0 ? '0.00%' : ((v * 100) / Math.abs(total)).toFixed(2) + '%');
    const sortBy = (col) => {
      if (col === column) descending = !descending;
      else {
        column = col;
        descending = col !== 'name';
      }
      const rows = Array.from(body.rows);
      const key = (r) =>
        col === 'name' ? r.cells[5].textContent : Number(r.getAttribute('data-' + col));
      rows.sort((a, b) => {
        const x = key(a), y = key(b);
        let c = x < y ? -1 : x > y ? 1 : 0;
        if (col !== 'name') c = Math.abs(x) < Math.abs(y) ? -1 : Math.abs(x) > Math.abs(y) ? 1 : c;
        return descending ? -c : c;
      });
      let sum = 0;
      for (const r of rows) {
        sum += Number(r.getAttribute('data-flat'));
        r.cells[2].textContent = pct(sum);
        body.appendChild(r);
      }
      const marked = table.querySelector('th[data-sort="' + col + '"]');
      for (const th of table.tHead.rows[0].cells) {
        th.classList.toggle('asc', th === marked && !descending);
        th.classList.toggle('desc', th === marked && descending);
      }
    };
    for (const th of table.querySelectorAll('th[data-sort]'))
      th.addEventListener('click', () => sortBy(th.getAttribute('data-sort')));
    table.querySelector('th[data-sort="flat"]').classList.add('desc');
  }

  // --- the call graph: names, pan and zoom ------------------------------------------------
  const graph = document.getElementById('graph');
  const svg = graph ? graph.querySelector('svg') : null;
  if (svg) {
    // Call graph nodes are Graphviz's <g class="node"> titled N<number>;
    // their tooltip is "name (value)".
    for (const g of svg.querySelectorAll('g.node')) {
      const title = g.querySelector('title');
      if (!title || !/^N\d+$/.test(title.textContent)) continue;
      const a = g.querySelector('a');
      const t = a ? a.getAttribute('xlink:title') || a.getAttribute('title') || '' : '';
      const m = /^([\s\S]*?) \([^()]*\)$/.exec(t);
      const name = m ? m[1] : t;
      if (name) g.setAttribute('data-name', name);
      if (a) a.addEventListener('click', (e) => e.preventDefault());
    }
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    const vb = svg.viewBox.baseVal;
    let view = vb && vb.width ? { x: vb.x, y: vb.y, w: vb.width, h: vb.height } : null;
    const apply = () => svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
    const toSvg = (cx, cy) => {
      const r = svg.getBoundingClientRect();
      const s = Math.max(view.w / r.width, view.h / r.height);
      // preserveAspectRatio xMidYMid meet: the drawing is centred
      const ox = (r.width * s - view.w) / 2, oy = (r.height * s - view.h) / 2;
      return { x: view.x - ox + (cx - r.left) * s, y: view.y - oy + (cy - r.top) * s, s: s };
    };
    if (view) {
      graph.addEventListener('wheel', (e) => {
        e.preventDefault();
        const p = toSvg(e.clientX, e.clientY);
        const f = Math.exp((e.deltaMode === 1 ? e.deltaY * 16 : e.deltaY) * 0.0015);
        view = { x: p.x - (p.x - view.x) * f, y: p.y - (p.y - view.y) * f, w: view.w * f, h: view.h * f };
        apply();
      }, { passive: false });
      let drag = null;
      graph.addEventListener('mousedown', (e) => {
        if (e.button !== 0) return;
        drag = { x: e.clientX, y: e.clientY, v: Object.assign({}, view), s: toSvg(0, 0).s };
        moved = false;
      });
      window.addEventListener('mousemove', (e) => {
        if (!drag) return;
        const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 3) {
          moved = true;
          graph.classList.add('dragging');
        }
        view = { x: drag.v.x - dx * drag.s, y: drag.v.y - dy * drag.s, w: drag.v.w, h: drag.v.h };
        apply();
      });
      window.addEventListener('mouseup', () => {
        drag = null;
        graph.classList.remove('dragging');
        setTimeout(() => (moved = false), 0);
      });
    }
  }

  // --- the flame graph ---------------------------------------------------------------------
  // flame.js draws it; the search box of the bar drives its search (its own
  // box is hidden), and "/" goes to the bar's box.
  const flame = document.getElementById('flame');
  const dataEl = document.getElementById('page-data');
  if (flame && dataEl && typeof window.cprofFlame === 'function') {
    const fg = window.cprofFlame(flame, JSON.parse(dataEl.textContent));
    window.cprofFlameGraph = fg;
    if (search && fg) {
      search.addEventListener('input', () => {
        regexpMode = true;
        fg.search(search.value);
      });
      window.addEventListener('keydown', (e) => {
        if (e.key === '/' && document.activeElement !== search) {
          e.preventDefault();
          e.stopImmediatePropagation();
          search.focus();
        }
      }, true);
    }
  }


  // --- saved configurations (pprof's Config menu) ---------------------------------------
  // "Save as ..." asks for a name and saves the settings of this URL under
  // it (./saveconfig); the cross of a saved one deletes it (./deleteconfig).
  // Both reload the page, whose menu lists the settings file's configs.
  function settingsRequest(path, params, onError) {
    const url = new URL(path, document.URL);
    url.search = params.toString();
    fetch(url.toString(), { method: 'POST' }).then((r) => {
      if (r.ok) location.reload();
      else r.text().then(onError);
    }, (e) => onError(String(e)));
  }
  function saveDialog() {
    let d = document.getElementById('save-dialog');
    if (!d) {
      d = document.createElement('div');
      d.id = 'save-dialog';
      d.className = 'dialog';
      d.innerHTML = '<div class="dialog-header">Save options as</div>' +
        '<input id="save-name" type="text" placeholder="New config" autocomplete="off">' +
        '<div class="dialog-error" id="save-error"></div>' +
        '<div class="dialog-footer"><button id="save-cancel">Cancel</button> ' +
        '<button id="save-ok">Save</button></div>';
      document.body.appendChild(d);
      const close = () => { d.style.display = 'none'; };
      const commit = () => {
        const name = document.getElementById('save-name').value.trim();
        const error = (t) => { document.getElementById('save-error').textContent = t; };
        if (!name) return error('Name must be non-empty');
        const params = new URLSearchParams(location.search);
        params.set('config', name);
        settingsRequest('./saveconfig', params, error);
      };
      document.getElementById('save-cancel').addEventListener('click', close);
      document.getElementById('save-ok').addEventListener('click', commit);
      document.getElementById('save-name').addEventListener('keydown', (e) => {
        if (e.key === 'Enter') commit();
        if (e.key === 'Escape') close();
      });
    }
    d.style.display = 'block';
    document.getElementById('save-name').focus();
  }
  const saveConfig = document.getElementById('save-config');
  if (saveConfig) {
    saveConfig.addEventListener('click', (e) => {
      e.preventDefault();
      saveDialog();
    });
  }
  for (const del of document.querySelectorAll('.menu-delete-btn')) {
    del.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      const name = del.dataset.config;
      if (!window.confirm('Delete ' + name + '?')) return;
      settingsRequest('./deleteconfig', new URLSearchParams({ config: name }), (t) => window.alert(t));
    });
  }

  // --- the memory view: dragging over the chart asks for a time window ----
  // The chart's data-t0/data-t1 (unix ns) sit at x = data-x0/data-x1 of its
  // viewBox; the window goes to the flame graph as window=START,END (unix
  // seconds), which the server fetches from the process's flight recorder.
  const chart = document.getElementById('chart');
  const winHint = document.getElementById('window-hint');
  if (chart && winHint && winHint.dataset.window === 'on') {
    const num = (k) => Number(chart.dataset[k]);
    const svgX = (e) => {
      const pt = chart.createSVGPoint();
      pt.x = e.clientX;
      pt.y = e.clientY;
      const x = pt.matrixTransform(chart.getScreenCTM().inverse()).x;
      return Math.min(Math.max(x, num('x0')), num('x1'));
    };
    const seconds = (x) => {
      const f = (x - num('x0')) / (num('x1') - num('x0'));
      return ((num('t0') + f * (num('t1') - num('t0'))) / 1e9).toFixed(3);
    };
    let from = null;
    const brush = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    brush.id = 'window-brush';
    brush.setAttribute('y', '10');
    brush.setAttribute('height', String(chart.viewBox.baseVal.height - 38));
    brush.setAttribute('fill', 'rgba(31,119,180,0.18)');
    brush.setAttribute('width', '0');
    chart.appendChild(brush);
    chart.style.cursor = 'crosshair';
    const draw = (a, b) => {
      brush.setAttribute('x', String(Math.min(a, b)));
      brush.setAttribute('width', String(Math.abs(b - a)));
    };
    chart.addEventListener('mousedown', (e) => {
      e.preventDefault();
      from = svgX(e);
      draw(from, from);
    });
    chart.addEventListener('mousemove', (e) => { if (from !== null) draw(from, svgX(e)); });
    window.addEventListener('mouseup', (e) => {
      if (from === null) return;
      const to = svgX(e), a = Math.min(from, to), b = Math.max(from, to);
      from = null;
      if (b - a < 3) return draw(0, 0); // a click, not a drag
      window.location.href = urlWith('./flamegraph', (p) => {
        p.delete('site');
        p.set('window', seconds(a) + ',' + seconds(b));
      });
    });
  }

  paint();
})();
