// Issue #38, the shared-cache side channel: a client that can time its first token learns
// whether another client's prompt is in the prefix cache. `cache_salt` (vLLM's field) scopes a
// request's cached prefixes to requests of the same salt; with several API keys each key's
// requests share only among themselves unless `--cache-share all`. The test model is the
// tiny qwen3 (tools/mkmodel), so the measure is the count the server reports
// (usage.prompt_tokens_details.cached_tokens), not a time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model } from '../lib/server.mjs';
import { words } from '../lib/prefix_cache_cases.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'sf-salt-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

// One long shared system prompt (~400 tokens) and a short question: what a hit would reuse.
const messages = (q) => [{ role: 'system', content: `You are a helpful assistant. ${words(5, 300)}` }, { role: 'user', content: q }];

async function chat(server, { salt, key, q = 'Name three colours.' } = {}) {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ messages: messages(q), max_tokens: 4, temperature: 0, ...(salt !== undefined ? { cache_salt: salt } : {}) }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body.usage.prompt_tokens_details.cached_tokens;
}

// Both kinds of cache entry: shared KV prefixes (qwen3) and state snapshots at message
// boundaries (lfm2, hybrid).
for (const arch of ['qwen3', 'lfm2'])
test(`cache_salt (${arch}): identical prompts with different salts share no cached tokens; the same salt does`, async () => {
  const s = await startServer([], { modelPath: model({ arch }) }); // defaults: the salt needs no flag
  try {
    assert.equal(await chat(s, { salt: 'alice-7f3a9c' }), 0, 'a fresh server');
    assert.equal(await chat(s, { salt: 'bob-51e0d2', q: 'Count to five.' }), 0, "bob does not get alice's prefix");
    assert.ok((await chat(s, { salt: 'alice-7f3a9c', q: 'What is a prime?' })) > 300, 'alice shares with herself');
    assert.ok((await chat(s, { salt: 'bob-51e0d2', q: 'Spell cat.' })) > 300, 'bob shares with himself');
    assert.equal(await chat(s, { q: 'Hello?' }), 0, 'an unsalted request gets no salted prefix');
    assert.ok((await chat(s, { q: 'Goodbye?' })) > 300, 'unsalted requests share among themselves');
    assert.equal(await chat(s, { salt: 'carol-0d9e', q: 'Goodbye?' }), 0, 'a salted request gets no unsalted prefix');
    const m = await (await fetch(`${s.url}/metrics`)).text();
    assert.match(m, /superfluid:prefix_cache_hits_total \d+/);
  } finally {
    await s.stop();
  }
});

test('cache_salt: a bad salt is a 400 in each API shape; the server keeps serving', async () => {
  const s = await startServer([]);
  try {
    const post = (path, body) =>
      fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const msgs = [{ role: 'user', content: 'hi' }];
    for (const salt of ['', 7, { a: 1 }, 'x'.repeat(1025)]) {
      let r = await post('/v1/chat/completions', { messages: msgs, max_tokens: 2, cache_salt: salt });
      let b = await r.json();
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.equal(b.error.param, 'cache_salt');
      r = await post('/v1/messages', { model: 'm', max_tokens: 2, messages: msgs, cache_salt: salt });
      b = await r.json();
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.equal(b.type, 'error');
      assert.match(b.error.message, /cache_salt/);
      r = await post('/api/chat', { model: 'm', stream: false, messages: msgs, cache_salt: salt });
      b = await r.json();
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.match(b.error, /cache_salt/);
      r = await post('/v1/responses', { model: 'm', input: 'hi', max_output_tokens: 16, cache_salt: salt });
      b = await r.json();
      assert.equal(r.status, 400, JSON.stringify(b));
      assert.equal(b.error.param, 'cache_salt');
    }
    for (const [path, body] of [
      ['/v1/messages', { model: 'm', max_tokens: 2, messages: msgs, cache_salt: 'ok' }],
      ['/api/chat', { model: 'm', stream: false, options: { num_predict: 2 }, messages: msgs, cache_salt: 'ok' }],
      ['/v1/responses', { model: 'm', input: 'hi', max_output_tokens: 16, cache_salt: 'ok' }],
      ['/v1/completions', { prompt: 'hi', max_tokens: 2, cache_salt: 'ok' }],
    ]) {
      const r = await post(path, body);
      assert.equal(r.status, 200, `${path}: ${await r.text()}`);
    }
  } finally {
    await s.stop();
  }
});

// The flag is the subject here: several keys (--api-key-file) and --cache-share.
test('several API keys: each key shares cached prefixes only with itself; --cache-share all shares them', async () => {
  const file = join(scratch, 'keys');
  writeFileSync(file, 'sk-team-a\nsk-team-b\n', { mode: 0o600 });
  const own = await startServer(['--api-key-file', file]);
  try {
    assert.equal(await chat(own, { key: 'sk-team-a' }), 0);
    assert.equal(await chat(own, { key: 'sk-team-b', q: 'Count to five.' }), 0, "key b does not get key a's prefix");
    assert.ok((await chat(own, { key: 'sk-team-a', q: 'What is a prime?' })) > 300, 'key a shares with itself');
  } finally {
    await own.stop();
  }
  const all = await startServer(['--api-key-file', file, '--cache-share', 'all']);
  try {
    assert.equal(await chat(all, { key: 'sk-team-a' }), 0);
    assert.ok((await chat(all, { key: 'sk-team-b', q: 'Count to five.' })) > 300, '--cache-share all: shared');
    // A salt still scopes a request when keys share.
    assert.equal(await chat(all, { key: 'sk-team-b', salt: 'private-b', q: 'Spell cat.' }), 0);
  } finally {
    await all.stop();
  }
});
