// KV cache element types (issue #21): --cache-type-k/-v and --flash-attn reach the engine, the
// KV bytes per token are reported (/metrics, /api/ps) and shrink as the types say, a bad name is
// refused before anything starts, and the prefix cache's disk tier keeps entries apart per type
// (a state saved as q8_0 is never loaded into an f16 cache).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { model, runSuperfluid, startServer } from '../lib/server.mjs';

const bench = () => model({ preset: 'bench' });
const prompt = 'The quick brown fox jumps over the lazy dog. '.repeat(60);

async function chat(srv) {
  const r = await fetch(`${srv.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: prompt }], max_tokens: 4, temperature: 0 }),
  });
  assert.equal(r.status, 200, await r.clone().text());
  return (await r.json()).usage;
}

test('q8_0 K and V take 34/64 of f16\'s bytes per token, and the server answers', async () => {
  const f16 = await startServer(['--cache-dir', 'off'], { modelPath: bench() });
  let b16;
  try {
    b16 = (await f16.metrics()).kv_cache_bytes_per_token;
    assert.ok(b16 > 0);
    const ps = await (await fetch(`${f16.url}/api/ps`)).json();
    assert.deepEqual(ps.models[0].kv_cache, { type_k: 'f16', type_v: 'f16', bytes_per_token: b16 });
  } finally {
    await f16.stop();
  }
  const q8 = await startServer(['--cache-dir', 'off', '--cache-type-k', 'q8_0', '--cache-type-v', 'q8_0'], { modelPath: bench() });
  try {
    const b8 = (await q8.metrics()).kv_cache_bytes_per_token;
    assert.equal(b8 * 64, b16 * 34, 'q8_0 stores 32 values in 34 bytes, f16 in 64');
    const usage = await chat(q8);
    assert.equal(usage.completion_tokens, 4);
  } finally {
    await q8.stop();
  }
});

test('an unknown cache type is refused before the server starts', async () => {
  const r = await runSuperfluid(['serve', bench(), '--port', '1', '--cache-type-k', 'q9']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr + r.stdout, /--cache-type-k: q9 not in \{f32,f16,bf16,q8_0/);
});

test('the disk tier keeps states apart per KV cache type', async () => {
  const cacheDir = mkdtempSync(join(tmpdir(), 'sf-kvdisk-'));
  const q8args = ['--cache-dir', cacheDir, '--cache-type-k', 'q8_0', '--cache-type-v', 'q8_0'];
  const first = await startServer(q8args, { modelPath: bench() });
  try {
    await chat(first);
    await chat(first); // reused once: hot, so its state is written to disk (prefix_cache.h)
  } finally {
    await first.stop(); // the prefix is on disk now
  }
  const f16 = await startServer(['--cache-dir', cacheDir], { modelPath: bench() });
  try {
    const usage = await chat(f16);
    assert.equal(usage.prompt_tokens_details?.cached_tokens ?? 0, 0, 'an f16 cache loads no q8_0 state');
    assert.equal((await f16.metrics()).prefix_cache_disk_loads_total, 0);
  } finally {
    await f16.stop();
  }
  const again = await startServer(q8args, { modelPath: bench() });
  try {
    const usage = await chat(again);
    assert.ok(usage.prompt_tokens_details.cached_tokens > 0, 'the same type finds its state on disk');
  } finally {
    await again.stop();
  }
});
