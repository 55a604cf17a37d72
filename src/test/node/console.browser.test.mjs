// The web console at / in headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
// the page loads with no error, shows the cluster's workers fed over the SockJS bridge, streams a
// completion into the page whose text equals the HTTP API's, and leaves a full-page screenshot in
// target/console-screenshot.png. Without Chromium the test fails (TANDEM_SKIP_BROWSER=1 skips it).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { MODEL, PROJECT_DIR, clientFor, startTandem } from './tandem-server.mjs';

const CHROMIUM = process.env.TANDEM_CHROMIUM || '/usr/bin/chromium';
const SKIP = process.env.TANDEM_SKIP_BROWSER === '1';
const SCREENSHOT = join(PROJECT_DIR, 'target', 'console-screenshot.png');
const T = { timeout: 60_000 };

const MISSING = `${CHROMIUM} does not exist: the browser test needs Debian's chromium `
  + '(apt-get install -y chromium; .ci/run installs it), or TANDEM_SKIP_BROWSER=1 to skip it';

// A failure of its own, counted as one, rather than only the suite's tests cancelled.
test('Chromium is installed', { skip: SKIP && 'TANDEM_SKIP_BROWSER=1' }, () => {
  assert.ok(existsSync(CHROMIUM), MISSING);
});

describe('web console in headless Chromium', { skip: SKIP && 'TANDEM_SKIP_BROWSER=1' }, () => {
  let server;
  let browser;
  let page;
  const problems = [];

  before(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(MISSING);
    const { chromium } = await import('playwright-core');
    server = await startTandem();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // A script error or a CSP violation shows here; the console must have none.
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`);
    });
  }, { timeout: 90_000 });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the console loads and shows the workers, fed over SockJS', T, async () => {
    await page.goto(`${server.baseUrl}/`);
    assert.equal(await page.title(), 'Tandem console');
    await page.waitForSelector('#bridge-status[data-state="open"]', { timeout: 15_000 });
    await page.waitForFunction(() => document.querySelectorAll('#workers tr[data-worker]').length === 4,
      null, { timeout: 15_000 });
    const rows = await page.$$eval('#workers tr[data-worker]',
      (trs) => trs.map((tr) => ({ role: tr.dataset.role, worker: tr.dataset.worker })));
    const { workers } = await (await fetch(`${server.baseUrl}/admin/workers`)).json();
    const order = { prefill: 0, decode: 1 };
    const expected = workers.map((w) => ({ role: w.role, worker: w.worker_id }))
      .sort((a, b) => order[a.role] - order[b.role] || a.worker.localeCompare(b.worker));
    assert.deepEqual(rows, expected, 'prefill workers then decode workers, as the registry has them');
    assert.equal(rows.filter((r) => r.role === 'prefill').length, 2);
    assert.equal(rows.filter((r) => r.role === 'decode').length, 2);
    assert.match(await page.textContent('#router-id'), /^router router-/);
    assert.equal(await page.$$eval('#routers tr[data-router]', (trs) => trs.length), 1);
    assert.deepEqual(problems, []);
  });

  test('a completion streams into the page, equal to the HTTP API\'s', T, async () => {
    const prompt = 'In a quiet village by the sea';
    const maxTokens = 48;
    const expected = await clientFor(server).completions.create({
      model: MODEL, prompt, max_tokens: maxTokens, temperature: 0,
    });
    await page.fill('#prompt', prompt);
    await page.fill('#max-tokens', String(maxTokens));
    await page.fill('#temperature', '0');
    // Count the writes into #output: a stream arrives in several.
    await page.evaluate(() => {
      window.outputWrites = 0;
      new MutationObserver((records) => { window.outputWrites += records.length; })
        .observe(document.getElementById('output'), { characterData: true, childList: true, subtree: true });
    });
    await page.click('#generate');
    await page.waitForSelector('#output[data-state="done"]', { timeout: 30_000 });
    assert.equal(await page.textContent('#output'), expected.choices[0].text);
    assert.ok(await page.evaluate(() => window.outputWrites) >= 3, 'the text arrived in pieces');
    const status = await page.textContent('#gen-status');
    assert.match(status, new RegExp(`finish: ${expected.choices[0].finish_reason}`));
    assert.match(status, new RegExp(`${expected.usage.completion_tokens} completion tokens`));
    assert.deepEqual(problems, []);
  });

  test('the cluster view shows rates and affinity; a screenshot is saved', T, async () => {
    // Session requests, so the affinity hit rate has something to show.
    const client = clientFor(server);
    for (let i = 0; i < 3; i++) {
      await client.completions.create({ model: MODEL, prompt: `session ${i}`, max_tokens: 4, user: 'console-browser-test' });
    }
    await page.waitForFunction(() => document.getElementById('stat-affinity').textContent === '67%',
      null, { timeout: 15_000 });
    const rates = await page.textContent('#stat-rps');
    assert.match(rates, /^\d+\.\d$/);
    mkdirSync(join(PROJECT_DIR, 'target'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.ok(statSync(SCREENSHOT).size > 10_000, `${SCREENSHOT} holds a real picture`);
    assert.deepEqual(problems, []);
  });
});
