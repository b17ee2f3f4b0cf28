// trace_browser.js — opens go tool trace's timeline of a cprof trace in
// headless Chromium through playwright-core (run by trace_browser.sh,
// which starts go tool trace's server):
//
//   node trace_browser.js TRACE_URL ARTIFACT_DIR
//
// The timeline page (/trace) must load the trace viewer and its model
// without an uncaught exception, contact nothing but the server, and show
// the program's threads: slices of the goroutines named after the worker
// routine on their processors, the heap counter, and the user regions.
// Prints "ok ..." per check or throws; a screenshot goes to ARTIFACT_DIR.
'use strict';
const path = require('path');
const { check, openBrowser } = require('./browser_common.js');

const [URL, ART] = process.argv.slice(2);

(async () => {
  const { page, problems, close } = await openBrowser([URL]);
  try {
    await page.goto(URL + '/trace', { waitUntil: 'load', timeout: 120000 });
    await page.waitForFunction(() => {
      const v = document.getElementById('trace-viewer');
      return v && v.model && v.model.getAllThreads().length > 0;
    }, null, { timeout: 120000 });
    const seen = await page.evaluate(() => {
      const m = document.getElementById('trace-viewer').model;
      const titles = new Set();
      let slices = 0;
      for (const t of m.getAllThreads()) {
        for (const s of t.sliceGroup.slices) { titles.add(s.title); slices++; }
      }
      const counters = Object.values(m.getAllCounters ? m.getAllCounters() : []).map((c) => c.name);
      return { threads: m.getAllThreads().length, slices, titles: [...titles], counters };
    });
    console.log('# threads ' + seen.threads + ', slices ' + seen.slices + ', counters ' + seen.counters.join(','));
    check(seen.threads >= 5, 'the timeline has a row per processor (' + seen.threads + ')');
    check(seen.titles.some((t) => / worker$/.test(t)), 'goroutine slices named after worker');
    check(seen.counters.some((c) => /Heap/.test(c)), 'the heap counter');
    await page.waitForTimeout(500);
    await page.screenshot({ path: path.join(ART, 'trace-timeline.png') });
    check(problems.length === 0, 'no page errors' + (problems.length ? ': ' + problems.join('; ') : ''));
  } finally {
    await close();
  }
})().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
