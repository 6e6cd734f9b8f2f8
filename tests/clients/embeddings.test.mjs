// Embeddings through the official `openai` SDK (/v1/embeddings: all four input forms, base64)
// and raw /api/embed (Ollama), including identical vectors under concurrency (B25).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';

let server;
let client;
const MODEL = 'tiny-qwen3-1';

before(async () => {
  // A 512-token context: the tests truncate to it and refuse past it.
  server = await startServer(['--ctx-size', '512']);
  client = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
});
after(async () => server && (await server.stop()));

const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

test('openai SDK embeddings: string, strings, token ids and token-id arrays; unit vectors; usage', async () => {
  const one = await client.embeddings.create({ model: MODEL, input: 'hello world', encoding_format: 'float' });
  assert.equal(one.object, 'list');
  assert.equal(one.data.length, 1);
  const dim = one.data[0].embedding.length;
  assert.ok(dim > 0);
  assert.ok(Math.abs(norm(one.data[0].embedding) - 1) < 1e-4, 'normalized');
  assert.ok(one.usage.prompt_tokens >= 2);
  assert.equal(one.usage.total_tokens, one.usage.prompt_tokens);

  const many = await client.embeddings.create({ model: MODEL, input: ['hello world', 'other'], encoding_format: 'float' });
  assert.deepEqual(many.data.map((d) => d.index), [0, 1]);
  assert.deepEqual(many.data[0].embedding, one.data[0].embedding, 'same text, same vector');
  assert.notDeepEqual(many.data[1].embedding, one.data[0].embedding);

  const ids = await client.embeddings.create({ model: MODEL, input: [14990, 1879], encoding_format: 'float' });
  assert.equal(ids.data.length, 1);
  assert.equal(ids.usage.prompt_tokens, 2);
  const rows = await client.embeddings.create({ model: MODEL, input: [[14990, 1879], [1008]], encoding_format: 'float' });
  assert.equal(rows.data.length, 2);
  assert.deepEqual(rows.data[0].embedding, ids.data[0].embedding);
  for (const d of [...ids.data, ...rows.data]) assert.equal(d.embedding.length, dim);
});

test('base64 encoding decodes (SDK and by hand, little-endian float32) to the float form', async () => {
  const input = ['The quick brown fox', 'jumps'];
  const floats = await client.embeddings.create({ model: MODEL, input, encoding_format: 'float' });
  // The SDK asks for base64 by default and decodes it.
  const sdk = await client.embeddings.create({ model: MODEL, input });
  const raw = await (await postJson(server.url, '/v1/embeddings', { model: MODEL, input, encoding_format: 'base64' })).json();
  for (let i = 0; i < input.length; i++) {
    const expect = Array.from(Float32Array.from(floats.data[i].embedding));
    assert.deepEqual(Array.from(sdk.data[i].embedding), expect);
    const buf = Buffer.from(raw.data[i].embedding, 'base64');
    const mine = [];
    for (let k = 0; k < buf.length; k += 4) mine.push(buf.readFloatLE(k));
    assert.deepEqual(mine, expect);
  }
});

test('embedding errors: empty input, token outside the vocabulary, too long (an unknown model is answered)', async () => {
  for (const [body, status] of [
    [{ model: MODEL, input: '' }, 400],
    [{ model: MODEL, input: [] }, 400],
    [{ model: MODEL, input: [999999999] }, 400],
    [{ model: MODEL, input: 'word '.repeat(2000) }, 400],
    [{ model: MODEL, input: 'x', encoding_format: 'hex' }, 400],
  ]) {
    const r = await postJson(server.url, '/v1/embeddings', body);
    assert.equal(r.status, status, JSON.stringify(body).slice(0, 60));
    assert.ok((await r.json()).error.message);
  }
  const other = await postJson(server.url, '/v1/embeddings', { model: 'nope', input: 'x' });
  assert.equal(other.status, 200);
  assert.equal((await other.json()).model, MODEL);
});

test('/api/embed: unit vectors, truncate on by default, truncate false rejects; legacy /api/embeddings', async () => {
  const r = await (await postJson(server.url, '/api/embed', { model: `${MODEL}:latest`, input: ['a', 'b'] })).json();
  assert.equal(r.embeddings.length, 2);
  for (const v of r.embeddings) assert.ok(Math.abs(norm(v) - 1) < 1e-4);
  assert.ok(Number.isInteger(r.total_duration) && r.prompt_eval_count >= 2);
  const long = 'word '.repeat(2000);
  const cut = await (await postJson(server.url, '/api/embed', { model: MODEL, input: long })).json();
  assert.equal(cut.prompt_eval_count, 512, 'truncated to the context');
  const no = await postJson(server.url, '/api/embed', { model: MODEL, input: long, truncate: false });
  assert.equal(no.status, 400);
  assert.ok((await no.json()).error);
  const legacy = await (await postJson(server.url, '/api/embeddings', { model: MODEL, prompt: 'a' })).json();
  assert.equal(legacy.embedding.length, r.embeddings[0].length);
  const scale = norm(legacy.embedding);
  assert.ok(legacy.embedding.every((x, k) => Math.abs(x / scale - r.embeddings[0][k]) < 1e-5), 'legacy is the unnormalized vector');
  const empty = await (await postJson(server.url, '/api/embed', { model: MODEL })).json();
  assert.deepEqual(empty.embeddings, []);
});

test('8 concurrent identical /api/embed and /v1/embeddings requests return identical vectors (B25)', async () => {
  const body = { model: MODEL, input: 'What is the weather like today?' };
  const alone = (await (await postJson(server.url, '/api/embed', body)).json()).embeddings[0];
  // Generation running beside it must not change the vector either.
  const chat = postJson(server.url, '/api/chat', { model: MODEL, stream: false, messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 16 } });
  const results = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      i % 2 ? postJson(server.url, '/api/embed', body).then((r) => r.json()).then((j) => j.embeddings[0])
            : client.embeddings.create({ ...body, encoding_format: 'float' }).then((r) => r.data[0].embedding),
    ),
  );
  for (const v of results) assert.deepEqual(v, alone);
  assert.equal((await chat).status, 200);
});
