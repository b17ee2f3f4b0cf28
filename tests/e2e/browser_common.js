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

// The browser context ($CHROME, else /usr/bin/chromium) with a throwaway
// profile; close() ends it and removes the profile.
async function launch(options) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cprof-chromium-'));
  const ctx = await chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.CHROME || '/usr/bin/chromium',
    headless: true,
    ...options,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    ctx,
    close: async () => {
      await ctx.close();
      fs.rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

// The console errors and uncaught exceptions of page, collected as they come.
function problemsOf(page) {
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
  page.on('pageerror', (e) => problems.push('exception: ' + e.message));
  return problems;
}

// openBrowser(allowed): allowed is a list of URL prefixes; resolves to
// { page, problems, close }.
async function openBrowser(allowed) {
  const { ctx, close } = await launch({ viewport: { width: 1280, height: 800 } });
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
  return { page, problems, close };
}

module.exports = { check, launch, openBrowser, problemsOf };
