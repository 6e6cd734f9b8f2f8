// The official `openai` npm SDK against a real `superfluid serve` and a tiny mkmodel model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { contextLength, startServer, until } from '../lib/server.mjs';
import { checkOpenAIStream, checkingFetch } from '../lib/event_grammar.mjs';
import { validate } from '../lib/schema.mjs';

let server;
let client;
const MODEL = 'tiny-qwen3-1'; // the harness names the file tiny-qwen3-1.gguf; its stem is the model id

before(async () => {
  server = await startServer();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0, fetch: checkingFetch(checkOpenAIStream, streamChecks) });
});
after(async () => {
  if (server) await server.stop();
  // Every stream this file read obeyed the chunk grammar.
  for (const r of streamChecks) if (r instanceof Error) throw r;
});
const streamChecks = [];

test('GET /v1/models lists the served model', async () => {
  const page = await client.models.list();
  assert.deepEqual(page.data.map((m) => m.id), [MODEL]);
});

test('non-streaming chat completion', async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 12,
  });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, MODEL);
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 5);
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(r.usage.prompt_tokens_details.cached_tokens, 0);
});

test('max_completion_tokens bounds the answer and finish_reason is length (B10)', async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: 'user', content: 'Count from 1 to 500.' }],
    max_completion_tokens: 10,
    // ignore_eos is not an OpenAI field: a random model may stop early, so allow both.
  });
  assert.ok(r.usage.completion_tokens <= 10);
  if (r.usage.completion_tokens === 10) assert.equal(r.choices[0].finish_reason, 'length');
});

test('the developer role is accepted (B13)', async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    messages: [
      { role: 'developer', content: 'Answer in rhymes.' },
      { role: 'user', content: 'Capital of France?' },
    ],
    max_tokens: 4,
  });
  assert.equal(r.choices.length, 1);
});

test('streaming chat completion with usage, no split code point, joined text equals the non-streamed text (B18)', async () => {
  const req = { model: MODEL, messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 24, temperature: 0 };
  const full = await client.chat.completions.create(req);
  const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish = null;
  let usage = null;
  let first = true;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    if (!chunk.choices.length) continue;
    if (first) assert.equal(chunk.choices[0].delta.role, 'assistant');
    first = false;
    text += chunk.choices[0].delta.content ?? '';
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  assert.ok(!text.includes('\uFFFD'), 'no replacement characters from split code points');
  assert.equal(text, full.choices[0].message.content);
  assert.equal(finish, full.choices[0].finish_reason);
  assert.ok(usage, 'a usage chunk arrives with include_usage');
  assert.equal(usage.completion_tokens, full.usage.completion_tokens);
  assert.equal(usage.prompt_tokens, full.usage.prompt_tokens);
});

test('temperature 0: the same request twice gives the same text', async () => {
  const req = { model: MODEL, messages: [{ role: 'user', content: 'Describe the sea.' }], max_tokens: 32, temperature: 0 };
  const a = await client.chat.completions.create(req);
  const b = await client.chat.completions.create(req);
  // The Qwen3 template lets the model start with a <think> block: that text is reasoning; the
  // chat parser trims the whitespace around content (this model's greedy answer is newlines).
  const said = (r) => (r.choices[0].message.reasoning_content ?? '') + r.choices[0].message.content;
  assert.ok(a.usage.completion_tokens > 0);
  assert.equal(a.usage.completion_tokens, b.usage.completion_tokens);
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
  assert.equal(said(a), said(b));
});

test('the same seed gives the same sampled text', async () => {
  const req = { model: MODEL, messages: [{ role: 'user', content: 'Pick words.' }], max_tokens: 24, temperature: 1, seed: 42 };
  const a = await client.chat.completions.create(req);
  const b = await client.chat.completions.create(req);
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
});

test('8 concurrent streams all complete with correct usage, batched into shared ticks (B25)', async () => {
  const before = await server.metrics();
  const one = async (i) => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: `Request number ${i}: write a poem.` }],
      max_tokens: 32,
      stream: true,
      stream_options: { include_usage: true },
    });
    let deltas = 0;
    let usage = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices.length && chunk.choices[0].delta.content) deltas++;
    }
    return { deltas, usage };
  };
  const results = await Promise.all([...Array(8).keys()].map(one));
  for (const r of results) {
    assert.ok(r.usage);
    assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 32);
    assert.ok(r.usage.prompt_tokens > 5);
    assert.ok(r.deltas <= r.usage.completion_tokens);
  }
  const after = await server.metrics();
  const generated = results.reduce((s, r) => s + r.usage.completion_tokens, 0);
  assert.equal(after.generation_tokens_total - before.generation_tokens_total, generated);
  // Continuous batching: decodes carried several sequences at once.
  assert.ok(after.batched_ticks_total > before.batched_ticks_total, 'some ticks carried more than one sequence');
  assert.ok(after.max_sequences_per_tick > 1);
});

test('legacy /v1/completions, streamed and not', async () => {
  const r = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', max_tokens: 8 });
  assert.equal(r.object, 'text_completion');
  assert.ok(r.usage.completion_tokens <= 8);
  const stream = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', max_tokens: 8, stream: true });
  let n = 0;
  for await (const chunk of stream) n += chunk.choices.length;
  assert.ok(n >= 1);
});

test('an unknown model is answered by the served model (its 404 is for --strict-model-names)', async () => {
  const r = await client.chat.completions.create({ model: 'gpt-nonexistent', messages: [{ role: 'user', content: 'x' }], max_tokens: 2 });
  assert.equal(r.model, MODEL);
});

test('a prompt longer than the context is a 400 context_length_exceeded, also when streaming', async () => {
  // Past the per-request context, which on default flags is the model's training context.
  const ctx = await contextLength(server);
  const long = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(ctx / 4)); // ~6 tokens each
  for (const stream of [false, true]) {
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: long }], stream }),
      (e) => e instanceof OpenAI.BadRequestError && e.code === 'context_length_exceeded' && /tokens > \d+/.test(e.message),
    );
  }
});

// Tools and structured output through the SDK: with random weights, validity comes only from
// the grammar.
const FORECAST = {
  type: 'object',
  properties: { city: { type: 'string', enum: ['Paris', 'Rome'] }, days: { type: 'integer', minimum: 1, maximum: 5 } },
  required: ['city', 'days'],
  additionalProperties: false,
};

test('forced tool call (named) returns valid arguments for that tool, streamed and not', async () => {
  const params = {
    model: MODEL,
    seed: 21,
    parallel_tool_calls: false,
    tools: [
      { type: 'function', function: { name: 'forecast', description: 'weather forecast', parameters: FORECAST } },
      { type: 'function', function: { name: 'noop', parameters: { type: 'object', properties: {} } } },
    ],
    tool_choice: { type: 'function', function: { name: 'forecast' } },
    messages: [{ role: 'user', content: 'Forecast for Rome, 2 days.' }],
  };
  const r = await client.chat.completions.create(params);
  const calls = r.choices[0].message.tool_calls;
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].type, 'function');
  assert.equal(calls[0].function.name, 'forecast');
  assert.deepEqual(validate(JSON.parse(calls[0].function.arguments), FORECAST), []);

  const checked = [];
  const streaming = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0, fetch: checkingFetch(checkOpenAIStream, checked) });
  const stream = await streaming.chat.completions.create({ ...params, stream: true });
  const args = [];
  for await (const chunk of stream) for (const tc of chunk.choices[0]?.delta?.tool_calls ?? []) args.push(tc.function?.arguments ?? '');
  await until(() => checked.length === 1, 10000, 20);
  if (checked[0] instanceof Error) throw checked[0];
  assert.equal(checked[0].toolCalls[0].name, 'forecast');
  assert.equal(args.join(''), calls[0].function.arguments, 'same seed: the streamed arguments equal the non-streamed ones');
});

test('response_format json_schema output parses and validates', async () => {
  const r = await client.chat.completions.create({
    model: MODEL,
    seed: 4,
    messages: [{ role: 'user', content: 'Forecast as JSON.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'forecast', strict: true, schema: FORECAST } },
  });
  assert.equal(r.choices[0].finish_reason, 'stop');
  assert.deepEqual(validate(JSON.parse(r.choices[0].message.content), FORECAST), []);
  await assert.rejects(
    client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'x' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'string', format: 'email' } } } } },
    }),
    (e) => e.status === 400 && /format/.test(e.message),
  );
});
