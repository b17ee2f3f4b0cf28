// webui_lib.js — what the browser tests share (a module, not a test):
// headless Chromium started through playwright-core with a throwaway
// profile, and check(), which prints "ok ..." or throws.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

function check(cond, what) {
  if (!cond) throw new Error('FAIL: ' + what);
  console.log('ok   ' + what);
}

// The browser context ($CHROME, else /usr/bin/chromium); close() ends it
// and removes its profile.
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

module.exports = { check, launch, problemsOf };
