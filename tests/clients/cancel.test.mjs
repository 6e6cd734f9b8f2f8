// A client that aborts mid-stream frees its sequence: with one sequence slot, the next
// request can only be served if the aborted one was cancelled.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer, until } from '../lib/server.mjs';

let server;
let client;

before(async () => {
  server = await startServer(['--parallel', '1']); // one sequence: what the aborts must free
  client = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
});
after(async () => server && (await server.stop()));

async function abortAfterFirstChunk(stream) {
  const ac = new AbortController();
  const s = await client.chat.completions.create(
    { model: 'default', messages: [{ role: 'user', content: 'Write forever.' }], max_tokens: 1000000, stream },
    { signal: ac.signal },
  );
  if (stream) {
    for await (const chunk of s) {
      if (chunk.choices.length && chunk.choices[0].delta.content) break; // leaving the loop aborts
    }
  }
  return s;
}

test('aborting a stream frees the only sequence slot for the next request (B21)', async () => {
  const before = await server.metrics();
  await abortAfterFirstChunk(true);
  const r = await client.chat.completions.create({
    model: 'default', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4,
  });
  assert.ok(r.usage.completion_tokens >= 1);
  const after = await server.metrics();
  // Without cancellation the aborted session would have run to its context (32,768 tokens).
  const generated = after.generation_tokens_total - before.generation_tokens_total;
  assert.ok(generated < 2000, `the aborted session kept generating (${generated} tokens)`);
  assert.equal(await until(async () => (await server.metrics()).num_requests_running === 0), true);
});

test('a non-streaming request whose client disconnects is cancelled too (B21)', async () => {
  const before = await server.metrics();
  const ac = new AbortController();
  const pending = client.chat.completions
    .create({ model: 'default', messages: [{ role: 'user', content: 'Write forever.' }], max_tokens: 1000000 }, { signal: ac.signal })
    .catch((e) => e);
  // Abort once the session is generating.
  await until(async () => (await server.metrics()).generation_tokens_total > before.generation_tokens_total, 20000, 20);
  ac.abort();
  assert.ok((await pending) instanceof Error);
  const r = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  assert.ok(r.usage.completion_tokens >= 1);
  const generated = (await server.metrics()).generation_tokens_total - before.generation_tokens_total;
  assert.ok(generated < 2000, `the abandoned session kept generating (${generated} tokens)`);
});
