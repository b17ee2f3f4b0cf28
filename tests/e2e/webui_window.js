// webui_window.js — dragging a time window over the memory view's chart
// (run by webui_window.sh, which starts the program and the server):
//
//   node webui_window.js UI_URL ARTIFACT_DIR TRUTH_FILE
//
// TRUTH_FILE is record_phases' log: "KEY N UNIXSECONDS" per boundary.
'use strict';
const fs = require('fs');
const path = require('path');
const { check, openBrowser } = require('./browser_common.js');

const [UI, ART, TRUTH] = process.argv.slice(2);
const MIB = 1 << 20;
const truth = {};
for (const l of fs.readFileSync(TRUTH, 'utf8').trim().split('\n')) {
  const [k, n, t] = l.split(' ');
  truth[k + (n === '0' ? '' : n)] = Number(t);
}

(async () => {
  const { page, problems, close } = await openBrowser([UI]);
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });

  // Drags over [from, to] (unix seconds) on the chart of memory?QUERY;
  // resolves to { name: value } of the flame graph it leads to (each
  // function's cum, counted once per stack).
  async function drag(query, from, to, shot) {
    problems.length = 0;
    await page.goto(UI + '/ui/memory' + query, { waitUntil: 'load' });
    const span = await page.$eval('#chart', (s) => [Number(s.dataset.t0) / 1e9, Number(s.dataset.t1) / 1e9]);
    check(span[0] < from && to < span[1], `the chart (${span[0].toFixed(3)}..${span[1].toFixed(3)}) covers ${from.toFixed(3)}..${to.toFixed(3)}`);
    const at = (t) => page.$eval('#chart', (s, t) => {
      const x0 = Number(s.dataset.x0), x1 = Number(s.dataset.x1);
      const pt = s.createSVGPoint();
      pt.x = x0 + ((t * 1e9 - Number(s.dataset.t0)) / (Number(s.dataset.t1) - Number(s.dataset.t0))) * (x1 - x0);
      pt.y = 120;
      const c = pt.matrixTransform(s.getScreenCTM());
      return [c.x, c.y];
    }, t);
    const [xa, y] = await at(from), [xb] = await at(to);
    // the mouse lands on whole pixels: a window's ends are within a pixel's time
    const px = (to - from) / Math.max(xb - xa, 1);
    check(Math.abs(xb - xa) >= 3, `the drag spans ${(xb - xa).toFixed(1)} px (a pixel is ${(px * 1000).toFixed(1)} ms)`);
    await page.mouse.move(xa, y);
    await page.mouse.down();
    await page.mouse.move((xa + xb) / 2, y, { steps: 3 });
    await page.mouse.move(xb, y, { steps: 3 });
    await page.screenshot({ path: path.join(ART, shot + '-drag.png') });
    await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.mouse.up()]);
    const u = new URL(page.url());
    check(u.pathname === '/ui/flamegraph', `the drag opens the flame graph (${u.pathname})`);
    const w = (u.searchParams.get('window') || '').split(',').map(Number);
    check(w.length === 2 && Math.abs(w[0] - from) <= 1.5 * px + 0.002 && Math.abs(w[1] - to) <= 1.5 * px + 0.002,
      `its window ${u.searchParams.get('window')} is the dragged ${from.toFixed(3)},${to.toFixed(3)}`);
    await page.waitForSelector('#flame g.cf-f');
    await page.screenshot({ path: path.join(ART, shot + '.png') });
    check(problems.length === 0, 'no console errors' + (problems.length ? ': ' + problems.join('; ') : ''));
    const data = JSON.parse(await page.$eval('#page-data', (s) => s.textContent));
    // pre-order [name, value, self, children] nodes: a function's cum is
    // the value of its topmost nodes
    const cum = {}, stack = [];
    for (let i = 0; i < data.nodes.length; i += 4) {
      const name = data.names[data.nodes[i]], v = data.nodes[i + 1], kids = data.nodes[i + 3];
      if (!stack.some((s) => s.name === name)) cum[name] = (cum[name] || 0) + v;
      stack.push({ name, left: kids });
      while (stack.length && stack[stack.length - 1].left === 0) {
        stack.pop();
        if (stack.length) stack[stack.length - 1].left--;
      }
    }
    return cum;
  }

  // Phase A, allocated space: 100 MiB from phase_a_alloc, nothing of B's.
  const a = await drag('?si=alloc_space', truth.A_START - 0.04, truth.A_END + 0.04, 'window-a');
  check(a.phase_a_alloc === 100 * MIB, `window A: phase_a_alloc allocated ${a.phase_a_alloc} = ${100 * MIB}`);
  check(!a.phase_b_leak, `window A: no phase_b_leak (${a.phase_b_leak || 0})`);
  check((await page.textContent('#sample')).includes('alloc_space'), 'window A: the sample type is kept');

  // Step 2 of B, live space: 10 MiB of phase_b_leak, nothing of A's.
  const s2 = await drag('', truth.STEP_START2 - 0.3, truth.STEP_END2 + 0.3, 'window-step2');
  check(s2.phase_b_leak === 10 * MIB, `window step 2: phase_b_leak holds ${s2.phase_b_leak} = ${10 * MIB}`);
  check(!s2.phase_a_alloc, `window step 2: no phase_a_alloc (${s2.phase_a_alloc || 0})`);

  // The other views of the window: top, from the menu
  await page.goto(page.url().replace('/ui/flamegraph', '/ui/top'), { waitUntil: 'load' });
  const rows = await page.$$eval('#rows tr', (t) => t.map((r) => r.textContent));
  check(rows.some((r) => r.includes('phase_b_leak')) && !rows.some((r) => r.includes('phase_a_alloc')),
    'the top view of the window has phase_b_leak only');
  await close();
})().catch((e) => { console.error(e.message || e); process.exit(1); });
