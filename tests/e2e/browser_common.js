// browser_common.js — what the browser tests (webui_*.js, trace_browser.js)
// share: headless Chromium through playwright-core, one
// page whose uncaught exceptions, failed requests and requests to anything
// but the allowed servers (the tests work offline) are collected in
// `problems`, and check(), which prints "ok ..." or throws.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

function check(cond, what) {
  if (!cond) throw new Error('FAIL: ' + what);
  console.log('ok   ' + what);
}

// openBrowser(allowed): allowed is a list of URL prefixes; resolves to
// { page, problems, close }.
async function openBrowser(allowed) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cprof-chromium-'));
  const ctx = await chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROME || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const problems = [];
  const page = ctx.pages()[0] || (await ctx.newPage());
  page.on('pageerror', (e) => problems.push('exception: ' + e.message));
  page.on('requestfailed', (r) => problems.push('request failed: ' + r.url()));
  await page.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith('data:') || allowed.some((a) => a && u.startsWith(a)))
      return route.continue();
    problems.push('external request: ' + u);
    return route.abort();
  });
  const close = async () => {
    await ctx.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  };
  return { page, problems, close };
}

module.exports = { check, openBrowser };
