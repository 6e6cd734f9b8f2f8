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
  server = await startServer();
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

// The whole prompt of an Anthropic usage block: input_tokens counts only the part not read
// from the prefix cache.
const promptOf = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

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
  assert.ok(promptOf(msg.usage) > 5);
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

test('count_tokens equals the prompt count of the same request (input + cache read + cache creation)', async () => {
  const params = { model: MODEL, system: 'Be terse.', tools: [LOOKUP], messages: [{ role: 'user', content: 'hello' }] };
  const counted = await client.messages.countTokens(params);
  const msg = await client.messages.create({ ...params, max_tokens: 2 });
  assert.equal(promptOf(msg.usage), counted.input_tokens);
  const again = await client.messages.create({ ...params, max_tokens: 2 });
  assert.equal(promptOf(again.usage), counted.input_tokens);
  assert.equal(again.usage.input_tokens, 1, 'all but the last prompt token read from the cache');
});

// A system prompt of ~400 tokens that no other test uses.
const longSystem = (seed) => {
  const w = ['amber', 'basil', 'cedar', 'dune', 'ember', 'fjord', 'grove', 'heath', 'inlet', 'juniper'];
  let x = seed;
  return Array.from({ length: 400 }, () => w[(x = (x * 1103515245 + 12345) % 2147483648) % w.length]).join(' ');
};

test('prefix cache: a second request sharing a long system prompt reports cache_read_input_tokens', async () => {
  const system = `You are a careful assistant. ${longSystem(7)}`;
  const first = { model: MODEL, system, messages: [{ role: 'user', content: 'List the files.' }] };
  const second = { model: MODEL, system, messages: [{ role: 'user', content: 'Read README.md.' }] };
  const [n1, n2] = [(await client.messages.countTokens(first)).input_tokens, (await client.messages.countTokens(second)).input_tokens];
  assert.ok(n1 > 400, `a long prompt: ${n1}`);
  const a = await client.messages.create({ ...first, max_tokens: 4, temperature: 0 });
  assert.equal(promptOf(a.usage), n1);
  assert.equal(a.usage.cache_creation_input_tokens, 0, 'cache writes are free: never reported as creation');
  assert.ok(a.usage.cache_read_input_tokens < 50, `the system prompt is new: ${JSON.stringify(a.usage)}`);
  // Streamed: message_start (what older SDKs keep) already has the final counts.
  const before = checked.length;
  const stream = client.messages.stream({ ...second, max_tokens: 4, temperature: 0 });
  const b = await stream.finalMessage();
  assert.equal(promptOf(b.usage), n2);
  assert.ok(b.usage.cache_read_input_tokens > 400, `the system prompt was read from the cache: ${JSON.stringify(b.usage)}`);
  assert.equal(b.usage.input_tokens, n2 - b.usage.cache_read_input_tokens);
  const s = await streamChecked(before + 1);
  assert.equal(s.message.usage.cache_read_input_tokens, b.usage.cache_read_input_tokens);
  assert.equal(s.message.usage.input_tokens, b.usage.input_tokens);
});

test('prefix cache: two Claude-Code-shaped requests differing only in the billing header line share their prefix', async () => {
  // Claude Code sends the per-request billing header as the first system block.
  const params = (cch) => ({
    model: MODEL,
    system: [
      { type: 'text', text: `x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=cli; cch=${cch};` },
      { type: 'text', text: `You are Claude Code. ${longSystem(11)}`, cache_control: { type: 'ephemeral' } },
    ],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'List the files.' }] }],
    max_tokens: 4,
    temperature: 0,
  });
  const { max_tokens, temperature, ...countable } = params('0a1b2');
  const counted = (await client.messages.countTokens(countable)).input_tokens;
  const a = await client.messages.create(params('0a1b2'));
  const b = await client.messages.create(params('9f8e7'));
  assert.equal(promptOf(a.usage), counted, 'count_tokens leaves out the billing line as /v1/messages does');
  assert.equal(promptOf(b.usage), counted);
  assert.ok(b.usage.cache_read_input_tokens > 400, `shared past the billing header: ${JSON.stringify(b.usage)}`);
  assert.equal(b.usage.input_tokens, 1, 'the prompts are equal once the billing line is gone');
});

test('SDK errors: an unknown model is answered by the served one, missing max_tokens is BadRequestError', async () => {
  assert.equal((await client.messages.create({ model: 'nope', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] })).model, MODEL);
  await assert.rejects(client.messages.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }), Anthropic.BadRequestError);
});
