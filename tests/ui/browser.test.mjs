// The /ui page in a real browser (issue #22): headless Chromium (Debian's `chromium`, or
// $CHROMIUM) driven by playwright-core (installed in tests/ui by scripts/setup.sh). While 3
// batch streams run, the page lists them; its chat pane streams an interactive answer that shows
// up as a 4th session; a reload re-attaches to the running answer; Stop cancels it. A screenshot goes to
// $UI_SCREENSHOT_DIR (default build/test-output).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer, until } from '../lib/server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const SHOTS = process.env.UI_SCREENSHOT_DIR || join(root, 'build', 'test-output');

// An agent's batch work: one long stream after another until `signal` aborts (the tiny model
// can fill its context mid-test on a fast machine, and a single stream would then end).
function batchAgent(server, signal) {
  return (async () => {
    while (!signal.aborted) {
      try {
        const res = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          signal,
          headers: { 'content-type': 'application/json', 'X-Superfluid-Priority': 'batch' },
          body: JSON.stringify({ messages: [{ role: 'user', content: 'Index the repository.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
        });
        const reader = res.body.getReader();
        while (!(await reader.read()).done);
      } catch {}
    }
  })();
}

test('the page lists 3 batch streams and its own interactive chat, streams the answer, re-attaches after a reload', { skip: !existsSync(CHROMIUM) && `no browser at ${CHROMIUM}` }, async () => {
  const server = await startServer();
  const agents = new AbortController();
  const streams = [];
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    for (let i = 0; i < 3; ++i) streams.push(batchAgent(server, agents.signal));
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const external = [];
    page.on('request', (r) => { if (!r.url().startsWith(server.url)) external.push(r.url()); });
    // Waits for `fn(arg)` in the page; a timeout names the step and what the page showed.
    const wait = (step, fn, arg) => page.waitForFunction(fn, arg, { timeout: 20000 }).catch(async (e) => {
      const shown = await page.evaluate(() => ({
        sessions: [...document.querySelectorAll('#sessions tbody tr')].map((r) => r.textContent),
        chat: document.querySelector('#chat-state').textContent,
        answer: (document.querySelector('.msg.assistant .content')?.textContent || '').slice(0, 80),
      }));
      throw new Error(`${step}: ${e.message}\n${JSON.stringify(shown)}`);
    });
    // The tiny model's answers end at a random EOS: the test (not the page) asks for a long one,
    // so the answer is still running when it is looked at, reloaded and stopped.
    await page.route('**/v1/chat/completions', (route) => {
      const body = { ...JSON.parse(route.request().postData()), ignore_eos: true, max_tokens: 100000 };
      return route.continue({ postData: JSON.stringify(body) });
    });
    await page.goto(`${server.url}/ui`);

    // The live view: 3 batch rows, the worker up.
    await wait('3 batch rows', () => document.querySelectorAll('#sessions tbody tr[data-priority="batch"]').length === 3);
    assert.match(await page.textContent('#worker'), /worker up/);

    // The chat pane: an interactive question; tokens appear; the session id is shown.
    await page.selectOption('#class', 'interactive');
    await page.fill('#prompt', 'Hello there, tell me a long story.');
    await page.click('#send');
    await wait('session id shown', () => /^sess_/.test(document.querySelector('#session-id').textContent));
    const id = await page.textContent('#session-id');
    await wait('tokens appear', () => (document.querySelector('.msg.assistant .content')?.textContent || '').length > 0);

    // Its session shows up beside the batch ones: 4 rows, the right classes. Without keys the
    // list carries no ids (issue #38 item 2): the row is found by its ref, a hash of the id.
    const ref = createHash('sha256').update(id).digest('hex').slice(0, 16);
    await wait('4 sessions', (r0) => {
      const rs = [...document.querySelectorAll('#sessions tbody tr')];
      return rs.some((r) => r.dataset.ref === r0 && r.dataset.priority === 'interactive' && !r.dataset.session) &&
        rs.map((r) => r.dataset.priority).sort().join(',') === 'batch,batch,batch,interactive';
    }, ref);
    assert.equal(await page.textContent('#chat-state'), 'streaming…');

    // A few seconds of the tokens/s chart, then the picture.
    await wait('chart', () => (document.querySelector('#chart polyline')?.getAttribute('points') || '').split(' ').length >= 4);
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, 'ui.png'), fullPage: true });

    // Reload: the page re-attaches to the session and shows its answer again.
    const before = await page.textContent('.msg.assistant .content');
    await page.reload();
    await wait('re-attached id', (sid) => document.querySelector('#session-id').textContent === sid, id);
    await wait('re-attached answer', (n) => (document.querySelector('.msg.assistant .content')?.textContent || '').length >= n, before.length);
    const after = await page.textContent('.msg.assistant .content');
    assert.ok(after.startsWith(before.slice(0, 20)), 'the re-attached answer is the same answer');

    // Stop: the session is cancelled on the server.
    assert.equal((await (await fetch(`${server.url}/v1/sessions/${id}`)).json()).status, 'running');
    await page.click('#stop');
    await wait('stopped', () => document.querySelector('#chat-state').textContent === 'stopped');
    const s = await until(async () => {
      const j = await (await fetch(`${server.url}/v1/sessions/${id}`)).json();
      return j.status !== 'running' ? j : null;
    });
    assert.equal(s.status, 'cancelled');
    // A reload after Stop does not re-attach (the answer was stopped on purpose).
    await page.reload();
    await wait('idle after reload', () => document.querySelector('#chat-state').textContent === '' && !document.querySelector('#send').disabled);
    assert.deepEqual(errors, [], 'no script errors on the page');
    assert.deepEqual(external, [], 'no request leaves the server');
  } finally {
    agents.abort();
    await Promise.all(streams);
    await browser.close();
    await server.stop();
  }
});
