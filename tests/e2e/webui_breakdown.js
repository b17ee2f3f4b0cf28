// webui_breakdown.js — the breakdown view and memory over time by class in
// headless Chromium (run by webui_breakdown.sh, which starts the servers):
//
//   node webui_breakdown.js ONE_URL SERIES_URL ARTIFACT_DIR CLASSES_JSON
//
// ONE_URL serves memory_known's memory profile, whose per-class
// resident_space go tool pprof summed into CLASSES_JSON; SERIES_URL the
// numbered memory profiles of a program whose heap grows (from grow()).
'use strict';
const path = require('path');
const { check, openBrowser } = require('./browser_common.js');

const [ONE, SERIES, ART, CLASSES] = process.argv.slice(2);
// classes whose samples are all 0 in resident_space have no row
const want = Object.fromEntries(Object.entries(JSON.parse(CLASSES)).filter(([, v]) => v !== 0));

(async () => {
  const { page, problems, close } = await openBrowser([ONE, SERIES]);
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  async function open(url, shot) {
    problems.length = 0;
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(150);
    if (shot) await page.screenshot({ path: path.join(ART, shot + '.png') });
    check(problems.length === 0, `${url.replace(/^http:\/\/[^/]*/, '')}: no console errors` +
      (problems.length ? ': ' + problems.join('; ') : ''));
  }
  const param = (name) => new URL(page.url()).searchParams.get(name);

  // --- the view is offered, and reached from the menu --------------------------------
  await open(ONE + '/ui/top');
  await page.hover('#view');
  await Promise.all([page.waitForNavigation(), page.click('#breakdownbtn')]);
  check(new URL(page.url()).pathname === '/ui/breakdown', 'View > Breakdown opens /ui/breakdown');
  await open(page.url(), 'breakdown');

  // --- each class: go tool pprof's sum, and its share of the bar ---------------------
  const rows = await page.$$eval('#classes tbody tr', (trs) =>
    trs.map((t) => [t.dataset.class, Number(t.dataset.value)]));
  const got = Object.fromEntries(rows);
  for (const [c, v] of Object.entries(want))
    check(got[c] === v, `class ${c}: ${got[c]} = go tool pprof's ${v}`);
  check(rows.length === Object.keys(want).length, `no other class (${rows.map((r) => r[0]).join(' ')})`);
  const sorted = rows.every((r, i) => i === 0 || rows[i - 1][1] >= r[1]);
  check(sorted, 'classes largest first');
  const bar = await page.$eval('#breakdown-bar', (b) => b.clientWidth);
  const segs = await page.$$eval('#breakdown-bar a.seg', (as) =>
    as.map((a) => [a.dataset.class, a.getBoundingClientRect().width]));
  const total = Object.values(want).reduce((a, b) => a + Math.max(b, 0), 0);
  for (const [c, w] of segs) {
    const expect = (want[c] / total) * bar;
    check(Math.abs(w - Math.max(expect, 2)) <= 2, `segment ${c}: ${w.toFixed(1)}px for ${(100 * want[c] / total).toFixed(1)}% of ${bar}px`);
  }
  check(segs.length === Object.values(want).filter((v) => v > 0).length, `a segment per class (${segs.length})`);

  // --- click the mmap segment: the flame graph of that class --------------------------
  await Promise.all([page.waitForNavigation(), page.click('#breakdown-bar a.seg[data-class="mmap"]')]);
  check(new URL(page.url()).pathname === '/ui/flamegraph', 'clicking a segment opens the flame graph');
  check(param('tf') === 'class=^mmap( |$)', `its tagfocus is the class (${param('tf')})`);
  await open(page.url(), 'breakdown-mmap-flame');
  const frames = await page.$$eval('#flame g.cf-f', (g) => g.map((x) => x.dataset.name));
  check(frames.includes('map_known'), 'the mmap flame graph has map_known');
  check(!frames.includes('touched_block') && !frames.includes('untouched_block'),
    'and no heap frame (touched_block, untouched_block)');
  check((await page.textContent('#filters')).includes('tagfocus=class=^mmap( |$)'), 'the class filter is shown');
  // the heap class, from its table row: not heap-free's
  await open(ONE + '/ui/breakdown');
  await Promise.all([page.waitForNavigation(), page.click('#classes tr[data-class="heap"] a.class')]);
  const hframes = await page.$$eval('#flame g.cf-f', (g) => g.map((x) => x.dataset.name));
  check(hframes.includes('touched_block') && !hframes.includes('map_known') &&
    !hframes.some((n) => /malloc: freed/.test(n)), 'the heap row opens the heap flame graph only');

  // --- memory over time by class -------------------------------------------------------
  await open(SERIES + '/ui/memory?by=class', 'memory-by-class');
  const crow = await page.$$eval('#classes tbody tr', (trs) =>
    trs.map((t) => [t.dataset.class, Number(t.dataset.first), Number(t.dataset.last)]));
  const heap = crow.find((r) => r[0] === 'heap');
  check(heap && heap[2] - heap[1] >= 10 << 20, `heap grows over the snapshots (${heap && heap[1]} -> ${heap && heap[2]})`);
  check(crow.length >= 5, `every class has a row (${crow.map((r) => r[0]).join(' ')})`);
  const legend = await page.$$eval('#chart-legend span', (s) => s.map((x) => x.textContent));
  check(legend.includes('heap') && legend.includes('code'), `the chart has the classes (${legend.join(', ')})`);
  const lines = await page.$$eval('#chart polyline, #chart path', (p) => p.length);
  check(lines >= 3, `the chart draws the class lines (${lines})`);
  await Promise.all([page.waitForNavigation(), page.click('#classes tr[data-class="heap"] a.flame')]);
  check(param('tf') === 'class=^heap( |$)', 'a class row links to its flame graph');
  const gframes = await page.$$eval('#flame g.cf-f', (g) => g.map((x) => x.dataset.name));
  check(gframes.includes('grow'), 'whose frames are the heap\'s (grow)');

  await close();
})().catch((e) => { console.error(e.message || e); process.exit(1); });
