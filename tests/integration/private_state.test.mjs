// Issue #38 items 2 and 7: what serve writes is its user's alone, and session ids cannot be
// guessed. Before: under the usual umask 022 the state dir was 0755 and journal.db (every prompt
// and answer) 0644, as was the prefix cache; ids were "sess_" + 64 bits of a per-thread
// mt19937_64 seeded with 32 bits, plus a counter. Default flags (startServer's --state-dir and
// --cache-dir only place them in the test's scratch folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, chmodSync, statSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../lib/server.mjs';

let server;
let stateDir;
const oldUmask = process.umask(0o022); // the usual one; the server inherits it

before(async () => {
  // A state dir made by an older version (0755), holding nothing yet.
  stateDir = mkdtempSync(join(tmpdir(), 'sf-private-'));
  chmodSync(stateDir, 0o755);
  server = await startServer([], { stateDir });
});
after(async () => {
  process.umask(oldUmask);
  if (server) await server.stop();
});

const mode = (p) => statSync(p).mode & 0o777;

test('the state dir, journal and prefix cache are 0700/0600 under umask 022', async () => {
  const res = await fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
  });
  assert.equal(res.status, 200);
  await res.json();
  assert.equal(mode(stateDir).toString(8), '700', 'the state dir, made 0755 before, is 0700');
  const db = join(stateDir, 'journal.db');
  assert.ok(existsSync(db), 'the journal exists');
  for (const f of [db, `${db}-wal`, `${db}-shm`]) if (existsSync(f)) assert.equal(mode(f).toString(8), '600', f);
  // Everything else serve wrote there (models, the cache's folders and files, the lock).
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isSymbolicLink()) continue;
      assert.equal((mode(p) & 0o077).toString(8), '0', `${p} is not readable by others (${mode(p).toString(8)})`);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(stateDir);
});

test('session ids are 128 random bits', async () => {
  const ids = new Set();
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: `hi ${i}` }], max_tokens: 2 }),
    });
    await res.json();
    const id = res.headers.get('x-superfluid-session');
    assert.match(id ?? '', /^sess_[0-9a-f]{32}$/);
    ids.add(id);
  }
  assert.equal(ids.size, 4);
});
