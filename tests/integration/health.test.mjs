// /health is 503 until the worker has loaded the model, then 200.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPERFLUID, freePort, model, until } from '../lib/server.mjs';

test('health is 503 while the model loads and 200 after; the worker is a child process', async () => {
  const port = await freePort();
  const state = mkdtempSync(join(tmpdir(), 'sf-health-'));
  // The head answers HTTP at once and the worker loads the model behind it: polled every
  // 5 ms, the loading phase (503) is seen before the first 200.
  const proc = spawn(SUPERFLUID, ['serve', model({ preset: 'bench' }), '--port', String(port), '--state-dir', state], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  proc.stderr.on('data', (d) => (log += d));
  try {
    const url = `http://127.0.0.1:${port}/health`;
    const statuses = new Set();
    const ok = await until(async () => {
      try {
        const r = await fetch(url);
        statuses.add(r.status);
        return r.status === 200;
      } catch {
        return false;
      }
    }, 60000, 5);
    assert.equal(ok, true, log);
    // The bench model takes long enough to load that the 503 phase is observed.
    assert.ok(statuses.has(503), `statuses seen: ${[...statuses]}`);
    assert.match(log, /worker started, pid \d+/);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
  }
});
