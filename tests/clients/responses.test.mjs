// The official `openai` SDK's Responses API (client.responses.create / .stream) against a
// real server and the tiny model. Stream event order is checked by tests/lib/responses_grammar.mjs;
// validity of forced function-call arguments and JSON output comes from the chat layer's grammar.
// Background mode (issue #5): create / retrieve (poll and resumed streams) / cancel, on the
// token journal.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startServer } from '../lib/server.mjs';
import { checkResponsesStream } from '../lib/responses_grammar.mjs';

let server;
let client;
const MODEL = 'tiny-qwen3-1';
const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string', maxLength: 12 }, days: { type: 'integer' } },
    required: ['city', 'days'],
    additionalProperties: false,
  },
};

before(async () => {
  server = await startServer();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
});
after(async () => server && (await server.stop()));

async function collect(stream) {
  const events = [];
  for await (const e of stream) events.push(e);
  return events;
}

test('responses.create non-streaming: a response object with output_text and usage', async () => {
  const r = await client.responses.create({ model: MODEL, input: 'Say hello.', instructions: 'Be brief.', max_output_tokens: 8, temperature: 0 });
  assert.equal(r.object, 'response');
  assert.match(r.id, /^resp_/);
  assert.ok(['completed', 'incomplete'].includes(r.status));
  if (r.status === 'incomplete') assert.equal(r.incomplete_details.reason, 'max_output_tokens');
  assert.equal(r.instructions, 'Be brief.');
  assert.equal(typeof r.output_text, 'string');
  assert.ok(r.usage.input_tokens > 5);
  assert.ok(r.usage.output_tokens >= 1 && r.usage.output_tokens <= 8);
  assert.equal(r.usage.total_tokens, r.usage.input_tokens + r.usage.output_tokens);
});

test('prefix cache: a second response sharing long instructions reports input_tokens_details.cached_tokens', async () => {
  const w = ['amber', 'basil', 'cedar', 'dune', 'ember', 'fjord', 'grove', 'heath', 'inlet', 'juniper'];
  let x = 3;
  const instructions = `You are a careful assistant. ${Array.from({ length: 400 }, () => w[(x = (x * 1103515245 + 12345) % 2147483648) % w.length]).join(' ')}`;
  const a = await client.responses.create({ model: MODEL, instructions, input: 'List the files.', max_output_tokens: 4, temperature: 0 });
  assert.ok(a.usage.input_tokens > 400);
  assert.ok(a.usage.input_tokens_details.cached_tokens < 50, `new instructions: ${JSON.stringify(a.usage)}`);
  const b = await client.responses.create({ model: MODEL, instructions, input: 'Read README.md.', max_output_tokens: 4, temperature: 0 });
  // OpenAI's semantics: input_tokens is the whole prompt, the cached part included.
  assert.ok(b.usage.input_tokens > 400);
  assert.ok(b.usage.input_tokens_details.cached_tokens > 400, JSON.stringify(b.usage));
  assert.ok(b.usage.input_tokens_details.cached_tokens < b.usage.input_tokens);
});

test('responses.create streaming: typed events in order, sequence_numbers increasing, text equals non-streamed', async () => {
  const req = { model: MODEL, input: 'Tell me a story.', max_output_tokens: 12, temperature: 0 };
  const full = await client.responses.create(req);
  const events = await collect(await client.responses.create({ ...req, stream: true }));
  const { items, response, terminal } = checkResponsesStream(events);
  assert.equal(terminal, full.status === 'completed' ? 'response.completed' : 'response.incomplete');
  const text = items.filter((i) => i.kind === 'message').map((i) => i.text).join('');
  assert.equal(text, full.output_text);
  assert.equal(response.usage.output_tokens, full.usage.output_tokens);
});

test('responses.stream (SDK accumulator) gives a final response', async () => {
  const stream = client.responses.stream({ model: MODEL, input: 'Hi', max_output_tokens: 6 });
  const final = await stream.finalResponse();
  assert.ok(['completed', 'incomplete'].includes(final.status));
  assert.equal(typeof final.output_text, 'string');
});

test('a forced function call streams arguments that parse and validate against the tool schema', async () => {
  const events = await collect(
    await client.responses.create({
      model: MODEL,
      input: 'What is the weather in Paris for 3 days?',
      tools: [WEATHER, { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } }],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false, // exactly one call, then the grammar ends the answer
      max_output_tokens: 400,
      stream: true,
    }),
  );
  const { items, terminal } = checkResponsesStream(events);
  assert.equal(terminal, 'response.completed');
  const calls = items.filter((i) => i.kind === 'function_call');
  assert.equal(calls.length, 1, 'one function call item');
  for (const c of calls) {
    assert.equal(c.item.name, 'get_weather');
    assert.match(c.item.call_id, /^call_/);
    const args = JSON.parse(c.text);
    assert.deepEqual(Object.keys(args).sort(), ['city', 'days']);
    assert.equal(typeof args.city, 'string');
    assert.ok([...args.city].length <= 12, 'maxLength counts code points');
    assert.ok(Number.isInteger(args.days));
  }
});

test('text.format json_schema: output_text is JSON valid against the schema', async () => {
  const r = await client.responses.create({
    model: MODEL,
    input: 'Is the sky blue?',
    text: { format: { type: 'json_schema', name: 'answer', strict: true, schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false } } },
    max_output_tokens: 200,
  });
  const v = JSON.parse(r.output_text);
  assert.deepEqual(Object.keys(v), ['ok']);
  assert.equal(typeof v.ok, 'boolean');
});

test('input items: messages with parts, a function_call and its output, reasoning effort', async () => {
  const r = await client.responses.create({
    model: MODEL,
    input: [
      { role: 'developer', content: 'Use tools.' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo","days":1}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is sunny.' }] },
      { role: 'user', content: 'Thanks!' },
    ],
    tools: [WEATHER],
    reasoning: { effort: 'low' },
    max_output_tokens: 4,
  });
  assert.ok(['completed', 'incomplete'].includes(r.status));
  assert.ok(r.usage.input_tokens > 30, 'the whole history is in the prompt');
});

test('unsupported requests are 400s that name the field', async () => {
  for (const [extra, param] of [
    [{ background: true, store: false }, 'store'],
    [{ previous_response_id: 'resp_x' }, 'previous_response_id'],
    [{ text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object', not: { required: ['a'] } } } } }, 'text.format.schema'],
    [{ input: [{ type: 'item_reference', id: 'x' }] }, 'input[0]'],
  ]) {
    await assert.rejects(
      client.responses.create({ model: MODEL, input: 'x', ...extra }),
      (e) => e.status === 400 && e.error?.param === param,
    );
  }
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const messageText = (r) =>
  r.output
    .filter((i) => i.type === 'message')
    .flatMap((i) => i.content)
    .map((c) => c.text)
    .join('');

async function pollUntilDone(id) {
  for (;;) {
    const r = await client.responses.retrieve(id);
    if (!['queued', 'in_progress'].includes(r.status)) return r;
    await sleep(50);
  }
}

test('background: created at once, runs with no client, polled to the same text as a plain greedy run', async () => {
  // A prompt the tiny model answers with text greedily (others give mostly reasoning or nothing).
  const req = { model: MODEL, input: 'Explain gravity in detail.', max_output_tokens: 24, temperature: 0 };
  const plain = await client.responses.create(req);
  const bg = await client.responses.create({ ...req, background: true });
  assert.match(bg.id, /^resp_sess_/);
  assert.equal(bg.background, true);
  assert.ok(['queued', 'in_progress'].includes(bg.status), `status ${bg.status}`);
  const done = await pollUntilDone(bg.id);
  assert.equal(done.id, bg.id);
  assert.equal(done.status, plain.status);
  assert.equal(messageText(done), messageText(plain));
  assert.equal(done.usage.output_tokens, plain.usage.output_tokens);
  assert.equal(done.usage.input_tokens, plain.usage.input_tokens);
  // A plain (stored) response is retrievable too: it is journaled the same way.
  const again = await client.responses.retrieve(plain.id);
  assert.equal(messageText(again), messageText(plain));
  assert.equal(again.background, false);
});

test('background + stream: resuming with starting_after=N gets exactly the events after N, same sequence numbers', async () => {
  const all = await collect(
    await client.responses.create({ model: MODEL, input: 'Count to twenty.', max_output_tokens: 16, temperature: 0, background: true, stream: true }),
  );
  checkResponsesStream(all);
  const id = all[0].response.id;
  assert.equal(all[0].response.background, true);
  // From the start: the same events (the final one's usage now comes from the journal).
  assert.deepEqual(await collect(await client.responses.retrieve(id, { stream: true })), all);
  for (const n of [0, 3, Math.floor(all.length / 2), all.length - 2]) {
    const rest = await collect(await client.responses.retrieve(id, { stream: true, starting_after: n }));
    assert.deepEqual(rest, all.filter((e) => e.sequence_number > n), `starting_after=${n}`);
  }
  const none = await collect(await client.responses.retrieve(id, { stream: true, starting_after: all.at(-1).sequence_number }));
  assert.deepEqual(none, []);
});

test('background: a live re-attach follows the generation to its end; the texts match', async () => {
  const bg = await client.responses.create({ model: MODEL, input: 'Explain gravity in detail.', max_output_tokens: 60, temperature: 0, background: true });
  const events = await collect(await client.responses.retrieve(bg.id, { stream: true }));
  const { items, response } = checkResponsesStream(events);
  const done = await client.responses.retrieve(bg.id);
  assert.equal(items.filter((i) => i.kind === 'message').map((i) => i.text).join(''), messageText(done));
  assert.deepEqual(response.usage, done.usage);
});

test('background: cancel in flight ends it cancelled; cancel rules and unknown ids as OpenAI answers them', async () => {
  const bg = await client.responses.create({ model: MODEL, input: 'Write a very long essay.', max_output_tokens: 4000, temperature: 0, background: true });
  // Wait until it is generating.
  for (let r = bg; r.status !== 'in_progress'; r = await client.responses.retrieve(bg.id)) await sleep(30);
  const c = await client.responses.cancel(bg.id);
  assert.equal(c.id, bg.id);
  assert.equal(c.status, 'cancelled');
  const after = await client.responses.retrieve(bg.id);
  assert.equal(after.status, 'cancelled');
  assert.ok(after.usage.output_tokens < 4000, 'stopped early');
  // The stream of a cancelled response ends with its own terminal event.
  const events = await collect(await client.responses.retrieve(bg.id, { stream: true }));
  assert.equal(events.at(-1).type, 'response.cancelled');
  assert.equal(events.at(-1).response.status, 'cancelled');
  // Cancelling again answers the same object (idempotent).
  assert.equal((await client.responses.cancel(bg.id)).status, 'cancelled');

  const finished = await client.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 2, background: true });
  await pollUntilDone(finished.id);
  await assert.rejects(client.responses.cancel(finished.id), (e) => e.status === 400 && /Cannot cancel/.test(e.message));
  const plain = await client.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 2 });
  await assert.rejects(client.responses.cancel(plain.id), (e) => e.status === 400 && /background/.test(e.message));
  for (const id of ['resp_sess_doesnotexist', 'sess_nope']) {
    await assert.rejects(client.responses.retrieve(id), (e) => e.status === 404 && e.error?.code === 'response_not_found');
    await assert.rejects(client.responses.cancel(id), (e) => e.status === 404);
  }
  // store:false responses are not retrievable; bad query values are 400s in OpenAI's shape.
  const unstored = await client.responses.create({ model: MODEL, input: 'Hi', max_output_tokens: 2, store: false });
  assert.equal(unstored.store, false);
  await assert.rejects(client.responses.retrieve(unstored.id), (e) => e.status === 404);
  for (const q of ['starting_after=abc', 'starting_after=-1', 'stream=maybe']) {
    const res = await fetch(`${server.baseURL}/responses/${bg.id}?${q}`);
    assert.equal(res.status, 400, q);
    assert.equal((await res.json()).error.type, 'invalid_request_error');
  }
});

test('usage.input_tokens_details.cached_tokens read back from the journal equals the live one', async () => {
  const req = { model: MODEL, input: 'The same question, asked twice, hits the prefix cache.', max_output_tokens: 4, temperature: 0 };
  await client.responses.create(req);
  const live = await client.responses.create(req);
  assert.ok(live.usage.input_tokens_details.cached_tokens > 0, 'the second run reused the prefix');
  assert.deepEqual((await client.responses.retrieve(live.id)).usage, live.usage);
  const bg = await pollUntilDone((await client.responses.create({ ...req, background: true })).id);
  assert.ok(bg.usage.input_tokens_details.cached_tokens > 0);
});
