// webui_lifetimes.js — the lifetime histogram in headless Chromium (run by
// webui_lifetimes.sh, which starts the server):
//
//   node webui_lifetimes.js UI_URL ARTIFACT_DIR OBJS_FILE
//
// OBJS_FILE: "OBJ fn LOW HIGH" per object: the lifetime the program
// measured inside malloc and free, and outside them. cprof's own lies
// between (it times the events inside malloc and free).
'use strict';
const fs = require('fs');
const path = require('path');
const { check, openBrowser } = require('./browser_common.js');

const [UI, ART, OBJS] = process.argv.slice(2);
const logged = {}; // fn -> [[low, high]]
for (const l of fs.readFileSync(OBJS, 'utf8').trim().split('\n')) {
  const [, fn, low, high] = l.split(' ');
  (logged[fn] = logged[fn] || []).push([Number(low), Number(high)]);
}
const octave = (ns) => Math.floor(Math.log2(ns));

(async () => {
  const { page, problems, close } = await openBrowser([UI]);
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });

  // The bars of the page: octave -> [objects, live]
  async function bars(shot) {
    await page.screenshot({ path: path.join(ART, shot + '.png') });
    check(problems.length === 0, 'no console errors' + (problems.length ? ': ' + problems.join('; ') : ''));
    const gs = await page.$$eval('#lifehist g.bin', (g) => g.map((x) =>
      [Number(x.dataset.lo), Number(x.dataset.hi), Number(x.dataset.value), Number(x.dataset.live)]));
    const out = {};
    for (const [lo, hi, v, live] of gs) {
      check(hi === 2 * lo && octave(lo) === Math.log2(lo), `bar ${lo}..${hi} is an octave`);
      if (v) out[octave(lo)] = [v, live];
    }
    return out;
  }
  // Each octave holds the objects of fn whose logged lifetime lies in it;
  // an object whose LOW and HIGH straddle an edge may be either side.
  function compare(fn, got) {
    const want = {}, loose = {};
    for (const [low, high] of logged[fn]) {
      want[octave(low)] = (want[octave(low)] || 0) + 1;
      for (let o = octave(low); octave(high) !== octave(low) && o <= octave(high); o++)
        loose[o] = (loose[o] || 0) + 1;
    }
    let total = 0;
    for (const o of new Set([...Object.keys(want), ...Object.keys(got)])) {
      const w = want[o] || 0, g = got[o] ? got[o][0] : 0;
      total += g;
      check(Math.abs(w - g) <= (loose[o] || 0), `${fn}: octave 2^${o} ns holds ${g} objects, logged ${w} (±${loose[o] || 0} straddling its edges)`);
    }
    check(total === logged[fn].length, `${fn}: ${total} objects in all = ${logged[fn].length} logged`);
  }

  // Select life_same in the top view, then View > Lifetimes
  await page.goto(UI + '/ui/top', { waitUntil: 'load' });
  await page.click('#rows tr[data-name="life_same"] td.name');
  await page.hover('#view');
  await Promise.all([page.waitForNavigation(), page.click('#lifetimesbtn')]);
  const u = new URL(page.url());
  check(u.pathname === '/ui/lifetimes' && u.searchParams.get('f') === '^life_same( |$)',
    `View > Lifetimes opens the selection's histogram (${u.pathname}?f=${u.searchParams.get('f')})`);
  const same = await bars('life_same');
  compare('life_same', same);
  check(Object.keys(same).length >= 2, `life_same spreads over octaves (${Object.keys(same).join(' ')})`);
  check(Object.values(same).every(([, live]) => live === 0), 'life_same: nothing still live');

  // From the table of functions: life_live, right-censored
  await page.goto(UI + '/ui/lifetimes', { waitUntil: 'load' });
  const sites = await page.$$eval('#lifesites tbody tr', (t) => t.map((r) => r.dataset.name));
  check(['life_same', 'life_other', 'life_live'].every((f) => sites.includes(f)), `the functions are listed (${sites.join(' ')})`);
  await Promise.all([page.waitForNavigation(), page.click('#lifesites tr[data-name="life_live"] a.lifesite')]);
  const live = await bars('life_live');
  check(Object.values(live).every(([v, l]) => v === l), 'life_live: every object still live');
  const lv = Object.values(live).reduce((a, [v]) => a + v, 0);
  check(lv === logged.life_live.length, `life_live: ${lv} objects = ${logged.life_live.length}`);
  // censored at the profile's writing, after the program's END: the
  // octave of the logged 300 ms or the next
  const lives = logged.life_live.map(([l]) => l);
  const lo = Math.min(...Object.keys(live).map(Number)), top = octave(Math.max(...lives));
  check(lo >= octave(Math.min(...lives)) && Math.max(...Object.keys(live).map(Number)) <= top + 1,
    `life_live's octaves (${Object.keys(live).join(' ')}) hold its logged lifetimes`);

  await page.goto(UI + '/ui/lifetimes?f=' + encodeURIComponent('^life_other( |$)'), { waitUntil: 'load' });
  compare('life_other', await bars('life_other'));
  await close();
})().catch((e) => { console.error(e.message || e); process.exit(1); });
