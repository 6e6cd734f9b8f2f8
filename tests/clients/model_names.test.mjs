// Clients hard-coded to a model name (issue #19): `gpt-4o-mini` through the official `openai`
// SDK, `claude-sonnet-4-5` through `@anthropic-ai/sdk` and `llama3` through `ollama` each get an
// answer from the served model, which the answer names, with X-Superfluid-Model-Substituted
// saying what was asked; model lists stay truthful. With --strict-model-names each gets its
// API's 404. A model pulled into the store but not served is a 404 that says how to serve it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import { startServer } from '../lib/server.mjs';

const SERVED = 'tiny-qwen3-1';
const HEADER = 'x-superfluid-model-substituted';
const PULLED = 'test/Other-GGUF:Q4_K_M';
let lenient;
let strict;

// A state directory whose store holds a pulled model that is not the served one.
function stateWithPulledModel() {
  const dir = mkdtempSync(join(tmpdir(), 'sf-names-'));
  const commit = 'a'.repeat(40);
  const snap = join(dir, 'hf', 'hub', 'models--test--Other-GGUF', 'snapshots', commit);
  mkdirSync(snap, { recursive: true });
  writeFileSync(join(snap, 'Other-Q4_K_M.gguf'), 'GGUF');
  const state = join(dir, 'state');
  mkdirSync(state);
  const entry = { name: PULLED, repo: 'test/Other-GGUF', quant: 'Q4_K_M', revision: '', commit, files: ['Other-Q4_K_M.gguf'], path: join(snap, 'Other-Q4_K_M.gguf'), size: 4, pulled_at: 1 };
  writeFileSync(join(state, 'models.json'), JSON.stringify({ version: 1, models: [entry] }));
  return { state, hfHome: join(dir, 'hf') };
}

before(async () => {
  const box = stateWithPulledModel();
  process.env.HF_HOME = box.hfHome; // the servers below inherit it: their store is the sandbox's
  lenient = await startServer([], { stateDir: box.state });
  strict = await startServer(['--strict-model-names']);
});
after(async () => {
  await lenient?.stop();
  await strict?.stop();
});

const openai = (s) => new OpenAI({ apiKey: 'sk-test', baseURL: s.baseURL, maxRetries: 0 });
const anthropic = (s) => new Anthropic({ apiKey: 'sk-test', baseURL: s.url, maxRetries: 0 });
const user = [{ role: 'user', content: 'Say hello.' }];

test('openai SDK: gpt-4o-mini is answered by the served model (chat, responses, embeddings)', async () => {
  const client = openai(lenient);
  const { data, response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 4 }).withResponse();
  assert.equal(data.model, SERVED);
  assert.equal(typeof data.choices[0].message.content, 'string');
  assert.equal(response.headers.get(HEADER), 'gpt-4o-mini');
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 4, stream: true });
  for await (const chunk of stream) assert.equal(chunk.model, SERVED);
  const r = await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 4 });
  assert.equal(r.model, SERVED);
  const e = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
  assert.equal(e.model, SERVED);
  // A served name is answered as named, without the header; the list names only the served model.
  const named = await client.chat.completions.create({ model: SERVED, messages: user, max_tokens: 2 }).withResponse();
  assert.equal(named.response.headers.get(HEADER), null);
  assert.deepEqual((await client.models.list()).data.map((m) => m.id), [SERVED]);
  assert.match(lenient.log(), /model 'gpt-4o-mini' is not served here: answering with 'tiny-qwen3-1'/);
});

test('anthropic SDK: claude-sonnet-4-5 is answered by the served model (messages, stream, count_tokens)', async () => {
  const client = anthropic(lenient);
  const { data, response } = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 4, messages: user }).withResponse();
  assert.equal(data.model, SERVED);
  assert.equal(data.type, 'message');
  assert.equal(response.headers.get(HEADER), 'claude-sonnet-4-5');
  const final = await client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 4, messages: user }).finalMessage();
  assert.equal(final.model, SERVED);
  const count = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: user });
  assert.ok(count.input_tokens > 0);
  assert.deepEqual((await client.models.list()).data.map((m) => m.id), [SERVED]);
});

test('ollama SDK: llama3 is answered by the served model (chat, generate, embed, show); /api/tags is truthful', async () => {
  const ollama = new Ollama({ host: lenient.url });
  const chat = await ollama.chat({ model: 'llama3', messages: user, options: { num_predict: 4 } });
  assert.equal(chat.model, SERVED);
  assert.equal(chat.done, true);
  const gen = await ollama.generate({ model: 'llama3:8b', prompt: 'Hello', options: { num_predict: 4 } });
  assert.equal(gen.model, SERVED);
  const emb = await ollama.embed({ model: 'nomic-embed-text', input: 'hi' });
  assert.equal(emb.embeddings.length, 1);
  const show = await ollama.show({ model: 'llama3' });
  assert.ok(show.details);
  const res = await fetch(lenient.url + '/api/chat', { method: 'POST', body: JSON.stringify({ model: 'llama3', messages: user, stream: false, options: { num_predict: 2 } }) });
  assert.equal(res.headers.get(HEADER), 'llama3');
  const names = (await ollama.list()).models.map((m) => m.name);
  assert.ok(!names.some((n) => n.startsWith('llama3')), names.join());
  assert.ok(names.includes(PULLED), 'the pulled model is listed');
});

test('a pulled model that is not served is a 404 in each API saying how to serve it', async () => {
  const how = new RegExp(`superfluid serve ${PULLED.replace('/', '\\/')}`);
  await assert.rejects(openai(lenient).chat.completions.create({ model: PULLED, messages: user, max_tokens: 2 }), (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found' && how.test(e.message));
  await assert.rejects(openai(lenient).responses.create({ model: 'test/Other-GGUF', input: 'x' }), (e) => e instanceof OpenAI.NotFoundError && how.test(e.message));
  await assert.rejects(anthropic(lenient).messages.create({ model: PULLED, max_tokens: 2, messages: user }), (e) => e instanceof Anthropic.NotFoundError && e.error?.error?.type === 'not_found_error' && how.test(e.message));
  await assert.rejects(new Ollama({ host: lenient.url }).chat({ model: PULLED, messages: user }), (e) => e.status_code === 404 && how.test(e.message));
});

test('--strict-model-names: each API answers an unknown name with its own 404', async () => {
  await assert.rejects(
    openai(strict).chat.completions.create({ model: 'gpt-4o-mini', messages: user, max_tokens: 2 }),
    (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found' && e.param === 'model',
  );
  await assert.rejects(openai(strict).responses.create({ model: 'gpt-4o-mini', input: 'x' }), (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
  await assert.rejects(openai(strict).embeddings.create({ model: 'text-embedding-3-small', input: 'x' }), (e) => e instanceof OpenAI.NotFoundError);
  await assert.rejects(
    anthropic(strict).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 2, messages: user }),
    (e) => e instanceof Anthropic.NotFoundError && e.error?.error?.type === 'not_found_error',
  );
  const ollama = new Ollama({ host: strict.url });
  for (const call of [() => ollama.chat({ model: 'llama3', messages: user }), () => ollama.generate({ model: 'llama3', prompt: 'x' }), () => ollama.show({ model: 'llama3' }), () => ollama.embed({ model: 'llama3', input: 'x' })]) {
    await assert.rejects(call(), (e) => e.status_code === 404 && /model 'llama3' not found/.test(e.message));
  }
  // The served model's own names still work.
  const r = await openai(strict).chat.completions.create({ model: SERVED, messages: user, max_tokens: 2 });
  assert.equal(r.model, SERVED);
  const o = await ollama.chat({ model: `${SERVED}:latest`, messages: user, options: { num_predict: 2 } });
  assert.equal(o.done, true);
});
