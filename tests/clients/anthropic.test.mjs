// The official @anthropic-ai/sdk against a real `superfluid serve` and the tiny random-weight
// model: with random weights, valid tool input can only come from the grammar. Every stream
// the SDK reads is also checked by the event-grammar checker (checkingFetch).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startServer, until } from '../lib/server.mjs';
import { checkAnthropicStream, checkingFetch } from '../lib/event_grammar.mjs';
import { validate } from '../lib/schema.mjs';

let server;
let client;
const checked = [];
const MODEL = 'tiny-qwen3-1';

before(async () => {
  server = await startServer(['--parallel', '2']);
  client = new Anthropic({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 0, fetch: checkingFetch(checkAnthropicStream, checked) });
});
after(async () => server && (await server.stop()));

// Waits for the grammar check of the n-th stream and fails on a violation.
async function streamChecked(n) {
  await until(() => checked.length >= n, 10000, 20);
  const r = checked[n - 1];
  if (r instanceof Error) throw r;
  return r;
}

const LOOKUP = {
  name: 'lookup',
  description: 'Look up a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string', enum: ['Paris', 'Rome', 'Oslo'] }, days: { type: 'integer', minimum: 1, maximum: 9 }, metric: { type: 'boolean' } },
    required: ['city', 'days', 'metric'],
  },
};

test('streaming text with the SDK: events in order, final message matches the deltas', async () => {
  const stream = client.messages.stream({ model: MODEL, max_tokens: 12, messages: [{ role: 'user', content: 'Say hello.' }] });
  let text = '';
  stream.on('text', (t) => (text += t));
  const msg = await stream.finalMessage();
  assert.equal(msg.role, 'assistant');
  assert.equal(msg.content[0].type, 'text');
  assert.equal(msg.content[0].text, text);
  assert.ok(['end_turn', 'max_tokens'].includes(msg.stop_reason));
  assert.ok(msg.usage.input_tokens > 5);
  const s = await streamChecked(1);
  assert.equal(s.usage.output_tokens, msg.usage.output_tokens);
});

test('streaming forced tool use: the joined input_json_delta parses and validates against the schema', async () => {
  const before = checked.length;
  const stream = client.messages.stream({
    model: MODEL,
    max_tokens: 200,
    tools: [LOOKUP],
    tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
    messages: [{ role: 'user', content: 'Weather in Oslo for 3 days?' }],
  });
  let json = '';
  stream.on('inputJson', (delta) => (json += delta));
  const msg = await stream.finalMessage();
  assert.equal(msg.stop_reason, 'tool_use');
  const use = msg.content.find((b) => b.type === 'tool_use');
  assert.equal(use.name, 'lookup');
  assert.match(use.id, /^toolu_/);
  assert.deepEqual(validate(JSON.parse(json), LOOKUP.input_schema), []);
  assert.deepEqual(use.input, JSON.parse(json));
  const s = await streamChecked(before + 1);
  assert.equal(s.blocks.at(-1).type, 'tool_use');
});

test('thinking enabled: accepted, blocks well formed, thinking kept apart from text', async () => {
  const before = checked.length;
  const msg = await client.messages.create({
    model: MODEL,
    max_tokens: 24,
    thinking: { type: 'enabled', budget_tokens: 12 },
    messages: [{ role: 'user', content: 'Think briefly, then answer: 2+2?' }],
  });
  for (const b of msg.content) {
    assert.ok(['thinking', 'text'].includes(b.type), b.type);
    if (b.type === 'thinking') assert.equal(typeof b.signature, 'string');
    if (b.type === 'text') assert.ok(!b.text.includes('<think>'));
  }
  const stream = client.messages.stream({
    model: MODEL,
    max_tokens: 24,
    thinking: { type: 'enabled', budget_tokens: 12 },
    messages: [{ role: 'user', content: 'Think briefly, then answer: 2+2?' }],
  });
  await stream.finalMessage();
  await streamChecked(before + 1);
});

test('count_tokens equals the input_tokens of the same request', async () => {
  const params = { model: MODEL, system: 'Be terse.', tools: [LOOKUP], messages: [{ role: 'user', content: 'hello' }] };
  const counted = await client.messages.countTokens(params);
  const msg = await client.messages.create({ ...params, max_tokens: 2 });
  assert.equal(counted.input_tokens, msg.usage.input_tokens);
});

test('SDK errors: unknown model is NotFoundError, missing max_tokens is BadRequestError', async () => {
  await assert.rejects(client.messages.create({ model: 'nope', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] }), Anthropic.NotFoundError);
  await assert.rejects(client.messages.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }), Anthropic.BadRequestError);
});
