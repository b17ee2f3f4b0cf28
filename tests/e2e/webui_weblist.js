// webui_weblist.js — the source (weblist) and disassembly pages in headless
// Chromium (run by webui_weblist.sh):  node webui_weblist.js UI_URL PAGE_URL
// UI_URL serves a heap profile of tests/progs/disasm_main.c; PAGE_URL is a
// file written by -weblist. No page may log a console error, throw, or
// contact anything but the server.
'use strict';
const path = require('path');
const { check, launch, problemsOf } = require('./browser_common.js');

const [UI, PAGE] = process.argv.slice(2);

(async () => {
  const { ctx, close } = await launch({});
  const page = ctx.pages()[0] || (await ctx.newPage());
  const problems = problemsOf(page);
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(UI) || u === PAGE || u.startsWith('data:')) return route.continue();
    problems.push('external request: ' + u);
    return route.abort();
  });
  async function open(url) {
    problems.length = 0;
    const resp = await page.goto(url, { waitUntil: 'load' });
    await page.waitForTimeout(100);
    check(problems.length === 0, `${url.replace(/^[a-z]+:\/\/[^/]*/, '')}: no console errors` +
      (problems.length ? ': ' + problems.join('; ') : ''));
    return resp;
  }
  // A click on a line with instructions shows them; a second hides them.
  async function toggles(where) {
    const line = page.locator('span.livesrc').first();
    const asm = page.locator('span.livesrc + span.asm').first();
    check(!(await asm.isVisible()), `${where}: instructions hidden at first`);
    await line.click();
    check(await asm.isVisible(), `${where}: a click on a source line shows its instructions`);
    const text = await asm.textContent();
    check(/[0-9a-f]+: /.test(text), `${where}: they are instructions with addresses`);
    await line.click();
    check(!(await asm.isVisible()), `${where}: a second click hides them`);
  }

  await open(PAGE);
  await toggles('-weblist page');
  const r = await open(UI + '/ui/source?f=%5Cbgrab%5Cb');
  check(r.status() === 200, '/ui/source: status 200');
  await toggles('/ui/source');

  const d = await open(UI + '/ui/disasm?f=%5Cbgrab%5Cb');
  check(d.status() === 200, '/ui/disasm: status 200');
  check((await page.textContent('#text')).includes('ROUTINE ======================== grab'),
        '/ui/disasm shows the routine');
  await open(UI + '/ui/top');
  const hrefs = await page.$$eval('a', (as) => as.map((a) => a.getAttribute('href') || ''));
  check(hrefs.some((h) => /(^|\/)disasm(\?|$)/.test(h)), 'the View menu links to the disassembly');
  await close();
})().catch((e) => { console.error(e.message || e); process.exit(1); });
