// webui_config.js — the Config menu in headless Chromium (run by
// webui_config.sh):  node webui_config.js UI_URL SETTINGS_FILE
// Save as ... a view's settings, find them in the menu and in the file,
// apply them from another view, delete them; no console errors.
'use strict';
const fs = require('fs');
const path = require('path');
const { check, launch, problemsOf } = require('./browser_common.js');

const [UI, SETTINGS] = process.argv.slice(2);

(async () => {
  const { ctx, close } = await launch({});
  const page = ctx.pages()[0] || (await ctx.newPage());
  const problems = problemsOf(page);
  page.on('dialog', (d) => d.accept()); // the delete confirmation
  const menuNames = () => page.$$eval('#config a.config', (as) => as.map((a) => a.firstChild.textContent.trim()));

  await page.goto(UI + '/ui/top?f=use_&g=lines&nf=0.02', { waitUntil: 'load' });
  check((await menuNames()).join() === 'Default', 'the Config menu holds Default only');
  await page.hover('#config .menu-name');
  await page.click('#save-config');
  await page.fill('#save-name', 'lines of use_');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#save-ok')]);
  check((await menuNames()).includes('lines of use_'), 'Save as ... adds the configuration to the menu');
  const current = await page.$eval('#config a.current', (a) => a.firstChild.textContent.trim());
  check(current === 'lines of use_', 'it is marked as the current one');
  const saved = JSON.parse(fs.readFileSync(SETTINGS, 'utf8'));
  const c = saved.configs.find((x) => x.name === 'lines of use_');
  check(c && c.focus === 'use_' && c.granularity === 'lines' && c.nodefraction === 0.02,
        'the settings file holds its fields: ' + JSON.stringify(c));

  // Applying it from another view with other settings.
  await page.goto(UI + '/ui/?f=main', { waitUntil: 'load' });
  await page.hover('#config .menu-name');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
                     page.click('#config a.config:has-text("lines of use_")')]);
  const u = new URL(page.url());
  check(u.pathname === '/ui/' && u.searchParams.get('f') === 'use_' && u.searchParams.get('g') === 'lines' &&
        u.searchParams.get('nf') === '0.02', 'choosing it applies it to the view: ' + u.search);

  // Deleting it.
  await page.hover('#config .menu-name');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
                     page.click('#config .menu-delete-btn[data-config="lines of use_"]')]);
  check(!(await menuNames()).includes('lines of use_'), 'its cross deletes it from the menu');
  check(!JSON.parse(fs.readFileSync(SETTINGS, 'utf8')).configs.some((x) => x.name === 'lines of use_'),
        'and from the settings file');
  check(problems.length === 0, 'no console errors' + (problems.length ? ': ' + problems.join('; ') : ''));
  await close();
})().catch((e) => { console.error(e.message || e); process.exit(1); });
