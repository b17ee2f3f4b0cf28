// webui_browser.js — drives cprof's web UI in headless Chromium through
// playwright-core (run by webui_browser.sh, which starts the servers):
//
//   node webui_browser.js MAIN_URL MEMORY_URL ARTIFACT_DIR
//
// MAIN_URL serves heapknown's profile (use_large holds the most in-use
// space; thread_work made the most allocations), MEMORY_URL the snapshots
// of a leaking program. Every page must load without a console error or an
// uncaught exception; each check prints "ok ..." or throws. Screenshots go
// to ARTIFACT_DIR.
'use strict';
const path = require('path');
const { check, launch } = require(path.join(__dirname, 'webui_lib.js'));

const [MAIN, MEMORY, ART, DEMO] = process.argv.slice(2);

(async () => {
  const { ctx, close } = await launch({ viewport: { width: 1280, height: 800 } });
  const problems = [];
  let expectErrorStatus = false;
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // the 400 of an error page is logged by the browser itself
    if (expectErrorStatus && /status of 400/.test(m.text())) return;
    problems.push('console: ' + m.text());
  });
  page.on('pageerror', (e) => problems.push('exception: ' + e.message));
  page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));
  // Nothing but the server itself may be contacted (works offline).
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(MAIN) || u.startsWith(MEMORY) || (DEMO && u.startsWith(DEMO)) || u.startsWith('data:'))
      return route.continue();
    problems.push('external request: ' + u);
    return route.abort();
  });

  async function open(url, shot) {
    problems.length = 0;
    const resp = await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(150);
    if (shot) await page.screenshot({ path: path.join(ART, shot + '.png') });
    check(problems.length === 0, `${url.replace(/^http:\/\/[^/]*/, '')}: no console errors` +
      (problems.length ? ': ' + problems.join('; ') : ''));
    return resp;
  }
  const rowNames = () => page.$$eval('#rows tr td.name', (tds) => tds.map((t) => t.textContent));
  const param = (name) => new URL(page.url()).searchParams.get(name);

  // --- every view loads cleanly ---------------------------------------------
  for (const [p, shot] of [['/ui/', 'graph'], ['/ui/top', 'top'], ['/ui/flamegraph', 'flame'],
                           ['/ui/peek?f=thread_work', 'peek'], ['/ui/source', null],
                           ['/ui/source?f=use_malloc_keep', 'source'], ['/ui/memory', null]]) {
    const r = await open(MAIN + p, shot);
    check(r.status() === 200, `${p}: status 200`);
  }

  // --- top: the expected function first; sorting -------------------------------
  await open(MAIN + '/ui/top');
  let names = await rowNames();
  check(names[0] === 'use_large', `top lists use_large first (got ${names[0]})`);
  const flat0 = await page.textContent('#rows tr:first-child td:first-child');
  await page.click('#namehdr');
  names = await rowNames();
  check(names.every((n, i) => i === 0 || names[i - 1] <= n), 'top: sorted by name after a click on Name');
  await page.click('#cumhdr1');
  const cums = await page.$$eval('#rows tr', (trs) => trs.map((t) => Number(t.dataset.cum)));
  check(cums.every((c, i) => i === 0 || Math.abs(cums[i - 1]) >= Math.abs(c)), 'top: sorted by cum after a click on Cum');

  // --- the sample type selector changes the numbers -------------------------------
  await open(MAIN + '/ui/top');
  await page.hover('#sample');
  await Promise.all([page.waitForNavigation(), page.click('#sample a:has-text("alloc_objects")')]);
  check(param('si') === 'alloc_objects', 'sample menu: si=alloc_objects in the URL');
  names = await rowNames();
  const flat1 = await page.textContent('#rows tr:first-child td:first-child');
  check(names[0] === 'thread_work', `alloc_objects: thread_work first (got ${names[0]})`);
  check(flat1 !== flat0, `sample type changes the numbers (${flat0} -> ${flat1})`);
  check((await page.textContent('#sample .menu-name')).includes('alloc_objects'), 'sample menu shows the current type');

  // --- search box selects; Enter focuses -----------------------------------------------
  await open(MAIN + '/ui/top');
  await page.fill('#search', 'thread');
  await page.waitForTimeout(500);
  const sel = await page.$$eval('#rows tr.sel td.name', (tds) => tds.map((t) => t.textContent));
  check(sel.length >= 3 && sel.includes('thread_work') && sel.every((n) => n.includes('thread')), `search selects matching rows (${sel.join(', ')})`);
  await Promise.all([page.waitForNavigation(), page.press('#search', 'Enter')]);
  check(param('f') === 'thread', 'Enter in the search box sets the focus');
  names = await rowNames();
  check(!names.includes('use_large') && names.includes('thread_work'), 'focus from the search box drops use_large');

  // --- double-click a row: focus on it --------------------------------------------------
  await open(MAIN + '/ui/top');
  const before = (await rowNames()).length;
  await Promise.all([page.waitForNavigation(), page.dblclick('#rows tr[data-name="thread_work"] td.name')]);
  check(param('f') === '^thread_work( |$)', 'double-click focuses on the row');
  names = await rowNames();
  check(names.length < before && !names.includes('use_large'), `focused table is smaller (${before} -> ${names.length})`);

  // --- the graph: click a node, Refine > Focus ------------------------------------------
  await open(MAIN + '/ui/');
  const nodes0 = await page.$$eval('#graph g.node[data-name]', (g) => g.map((x) => x.dataset.name));
  check(nodes0.includes('thread_work') && nodes0.includes('use_large'), `graph has named nodes (${nodes0.length})`);
  await page.click('#graph g.node[data-name="thread_work"] polygon');
  check(await page.$eval('#graph g.node[data-name="thread_work"]', (g) => g.classList.contains('sel')), 'click selects a graph node');
  await page.hover('#refine');
  await Promise.all([page.waitForNavigation(), page.click('#focus')]);
  check(param('f') === '^thread_work( |$)', 'Refine > Focus puts the selection in the URL');
  const nodes1 = await page.$$eval('#graph g.node[data-name]', (g) => g.map((x) => x.dataset.name));
  check(nodes1.length < nodes0.length && !nodes1.includes('use_large') && nodes1.includes('thread_work'),
    `focus reduces the graph (${nodes0.length} -> ${nodes1.length} nodes)`);
  check((await page.textContent('#filters')).includes('focus=^thread_work( |$)'), 'the active filter is shown');
  // Reset
  await page.hover('#refine');
  await Promise.all([page.waitForNavigation(), page.click('#reset')]);
  check(!param('f'), 'Reset drops the filters');
  // wheel zooms the graph
  const vb0 = await page.getAttribute('#graph svg', 'viewBox');
  await page.mouse.move(640, 400);
  await page.mouse.wheel(0, -400);
  await page.waitForTimeout(100);
  const vb1 = await page.getAttribute('#graph svg', 'viewBox');
  check(vb0 !== vb1, 'the mouse wheel zooms the graph');
  // Ignore a selected node
  await open(MAIN + '/ui/');
  await page.click('#graph g.node[data-name="use_large"] polygon');
  await page.hover('#refine');
  await Promise.all([page.waitForNavigation(), page.click('#ignore')]);
  check(param('i') === '^use_large( |$)', 'Refine > Ignore');
  check(!(await page.$('#graph g.node[data-name="use_large"]')), 'ignored node gone');

  // --- the flame graph: a click zooms ------------------------------------------------------
  await open(MAIN + '/ui/flamegraph');
  const nframes = await page.$$eval('#flame g.cf-f', (g) => g.length);
  check(nframes >= 5, `flame graph draws frames (${nframes})`);
  const width = (name) => page.$eval(`#flame g.cf-f[data-name="${name}"] rect`, (r) => Number(r.getAttribute('width')));
  const w0 = await width('thread_main');
  await page.click('#flame g.cf-f[data-name="thread_main"] rect');
  await page.waitForTimeout(200);
  const w1 = await width('thread_main');
  check(w1 > w0 * 5, `clicking a frame zooms into it (width ${w0.toFixed(1)} -> ${w1.toFixed(1)})`);
  check(!(await page.$('#flame g.cf-f[data-name="use_large"]')), 'zoomed: frames outside it are gone');
  await page.screenshot({ path: path.join(ART, 'flame-zoomed.png') });
  await page.keyboard.press('Escape');
  await page.waitForTimeout(200);
  check(Math.abs((await width('thread_main')) - w0) < 1, 'Esc zooms back out');
  await page.fill('#search', 'use_');
  await page.waitForTimeout(400);
  check(/Matched/.test(await page.textContent('#flame .cf-match')), 'the search box of the bar searches the flame graph');
  // the sample type changes the flame graph's total
  const total0 = await page.textContent('#flame .cf-legend summary');
  await open(MAIN + '/ui/flamegraph?si=alloc_objects');
  const total1 = await page.textContent('#flame .cf-legend summary');
  check(total0 !== total1, `flame graph follows the sample type (${total0} / ${total1})`);

  // --- messages ------------------------------------------------------------------------------
  expectErrorStatus = true;
  let r = await open(MAIN + '/ui/top?f=(');
  check(r.status() === 400, 'bad regexp: status 400');
  check((await page.textContent('#errors.failed')).includes('parsing focus regexp'), 'bad regexp: message on the page');
  r = await open(MAIN + '/ui/top?si=nope');
  check((await page.textContent('#errors.failed')).includes('must be one of'), 'bad sample index: message on the page');
  expectErrorStatus = false;
  await open(MAIN + '/ui/top?f=matches_nothing');
  check((await page.textContent('#errors.warning')).includes('matched no samples'), 'no match: a warning');

  // --- memory over time ----------------------------------------------------------------------
  await open(MEMORY + '/ui/memory', 'memory');
  const sites = await page.$$eval('a.site', (a) => a.map((x) => x.textContent));
  check(sites[0] === 'leaky_cache_insert', `memory: the leak is the top grower (${sites.join(', ')})`);
  check((await page.$$eval('#chart polyline', (p) => p.length)) >= 2, 'memory: the chart has lines');
  await Promise.all([page.waitForNavigation(), page.click('a.site >> nth=0')]);
  check(param('site') === 'leaky_cache_insert', 'memory: a grower links to its stacks');
  await page.waitForTimeout(100);
  await page.screenshot({ path: path.join(ART, 'memory-site.png') });
  check(problems.length === 0, 'memory stacks page: no console errors ' + problems.join('; '));
  check((await page.textContent('#stacks')).includes('main'), 'memory: the stacks go through main');

  // --- screenshots of the demo program's profile (for the README) ------------------
  if (DEMO) {
    const clip = async (name, height) =>
      page.screenshot({ path: path.join(ART, name + '.png'), clip: { x: 0, y: 0, width: 1280, height } });
    await open(DEMO + '/ui/?si=alloc_space');
    await clip('docs-graph', 800);
    await open(DEMO + '/ui/top?si=alloc_space');
    await page.click('#rows tr[data-name="cache_insert"] td.name');
    await clip('docs-top', 250);
    await open(DEMO + '/ui/flamegraph?si=alloc_space');
    await clip('docs-flame', 290);
    await open(MEMORY + '/ui/memory');
    await clip('docs-memory', 560);
  }

  await close();
  console.log('all browser checks passed');
})().catch((e) => {
  console.error(e.message || e);
  process.exit(1);
});
