// Handed API cases (../shared/cases/api-cases.md) on the Anthropic Messages API, over raw HTTP
// so the bytes are seen; every stream goes through the event-grammar checker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { contextLength, startServer } from '../lib/server.mjs';
import { checkAnthropicStream } from '../lib/event_grammar.mjs';
import { validate } from '../lib/schema.mjs';

let server;
const MODEL = 'default';
const HEADERS = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-test' };

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

async function post(path, body, headers = {}) {
  const res = await fetch(server.url + path, { method: 'POST', headers: { ...HEADERS, ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}
const messages = (body) => post('/v1/messages', { model: MODEL, ...body });
const stream = async (body) => {
  const r = await messages({ ...body, stream: true });
  assert.equal(r.status, 200, r.text);
  return checkAnthropicStream(r.text);
};
function assertAnthropicError(r, status, type) {
  assert.equal(r.status, status, r.text);
  const j = JSON.parse(r.text);
  assert.equal(j.type, 'error');
  assert.equal(j.error.type, type);
  assert.equal(typeof j.error.message, 'string');
  return j.error;
}

const RUN_TOOL = {
  name: 'run',
  description: 'run a shell command',
  // Bounded: random weights never close an unbounded string; the grammar ends this one.
  input_schema: { type: 'object', properties: { code: { type: 'string', maxLength: 8 } }, required: ['code'] },
};

test('B01 a turn with only a tool result (no user text) is rendered and answered', async () => {
  const r = await messages({
    max_tokens: 4,
    tools: [{ name: 'ls', description: 'list files', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }],
    messages: [
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ls', input: { path: '.' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt\nb.txt' }] },
    ],
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(JSON.parse(r.text).type, 'message');
});

test('B03 streamed tool input equals non-streamed and validates against the schema', async () => {
  const body = {
    max_tokens: 128,
    temperature: 0,
    tool_choice: { type: 'tool', name: 'run' },
    tools: [RUN_TOOL],
    messages: [{ role: 'user', content: 'Call run with code=uptime' }],
  };
  const whole = await messages(body);
  assert.equal(whole.status, 200, whole.text);
  const msg = JSON.parse(whole.text);
  assert.equal(msg.stop_reason, 'tool_use');
  const uses = msg.content.filter((b) => b.type === 'tool_use');
  assert.equal(uses.length, 1);
  assert.equal(uses[0].name, 'run');
  assert.deepEqual(validate(uses[0].input, RUN_TOOL.input_schema), []);

  const s = await stream(body);
  assert.equal(s.stopReason, 'tool_use');
  const tools = s.blocks.filter((b) => b.type === 'tool_use');
  assert.equal(tools.length, 1);
  assert.ok(tools[0].json.length > 0, 'the arguments arrive as input_json_delta events');
  assert.deepEqual(JSON.parse(tools[0].json), uses[0].input);
  assert.equal(s.usage.output_tokens, msg.usage.output_tokens);
});

// The whole prompt in an Anthropic usage block: input_tokens counts only what was not read
// from the prefix cache.
const promptOf = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

test('B04 B07 usage: message_start and message_delta carry the real prompt count, equal to count_tokens', async () => {
  const body = { system: 's', messages: [{ role: 'user', content: 'hi' }] };
  const counted = await post('/v1/messages/count_tokens?beta=true', { model: MODEL, ...body });
  assert.equal(counted.status, 200, counted.text);
  const n = JSON.parse(counted.text).input_tokens;
  assert.ok(n > 5, `input_tokens ${n}`);
  const s = await stream({ ...body, max_tokens: 6 });
  assert.equal(promptOf(s.message.usage), n);
  // message_start waits for the first token, so it already has the final cache count.
  for (const k of ['input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'])
    assert.equal(s.usage[k], s.message.usage[k], `message_delta repeats message_start's ${k}`);
  assert.ok(s.usage.output_tokens >= 1 && s.usage.output_tokens <= 6);
  // The same request again: all but the last prompt token comes from the cache.
  const whole = JSON.parse((await messages({ ...body, max_tokens: 6 })).text);
  assert.equal(promptOf(whole.usage), n);
  assert.equal(whole.usage.cache_read_input_tokens, n - 1, JSON.stringify(whole.usage));
  assert.equal(whole.usage.input_tokens, 1);
  assert.equal(whole.usage.cache_creation_input_tokens, 0);
});

test('B07 count_tokens counts tools and system the way /v1/messages renders them (?beta=true ignored)', async () => {
  const base = { model: MODEL, messages: [{ role: 'user', content: 'hello' }] };
  const plain = JSON.parse((await post('/v1/messages/count_tokens?beta=true', base)).text).input_tokens;
  const withSystem = JSON.parse((await post('/v1/messages/count_tokens', { ...base, system: [{ type: 'text', text: 'You are terse.' }] })).text).input_tokens;
  const withTools = await post('/v1/messages/count_tokens?beta=true', { ...base, tools: [RUN_TOOL] });
  assert.equal(withTools.status, 200, withTools.text);
  assert.ok(withSystem > plain);
  assert.ok(JSON.parse(withTools.text).input_tokens > plain + 20, 'the tool definitions are in the prompt');
  const started = await stream({ ...base, tools: [RUN_TOOL], max_tokens: 2 });
  assert.equal(promptOf(started.message.usage), JSON.parse(withTools.text).input_tokens);
});

test('B06 thinking and redacted_thinking blocks in assistant history, tool_result content as blocks', async () => {
  const r = await messages({
    max_tokens: 4,
    messages: [
      { role: 'user', content: 'read a file' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call Read.', signature: '' },
          { type: 'redacted_thinking', data: 'abc' },
          { type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'x' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'hello' }] }] },
    ],
    tools: [{ name: 'Read', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } }],
  });
  assert.equal(r.status, 200, r.text);
});

test('B08 a failure mid-stream closes the open block and ends with an error event', async () => {
  const own = await startServer();
  try {
    const res = await fetch(own.url + '/v1/messages', {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: MODEL, max_tokens: 100000, stream: true, messages: [{ role: 'user', content: 'go' }] }),
    });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let text = '';
    while (!text.includes('content_block_delta')) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream delivered a delta');
      text += dec.decode(value, { stream: true });
    }
    own.proc.kill('SIGTERM'); // the server shuts down: the session fails mid-answer
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ done: true }));
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
    const s = checkAnthropicStream(text);
    assert.ok(s.error, `the stream ends with an error event:\n${text.slice(-400)}`);
    assert.ok(s.blocks.length >= 1, 'the open block was closed first');
  } finally {
    await own.stop();
  }
});

test('B08 thinking then tools: blocks are sequential and closed in order', async () => {
  const s = await stream({
    max_tokens: 48,
    thinking: { type: 'enabled', budget_tokens: 16 },
    tools: [RUN_TOOL],
    messages: [{ role: 'user', content: 'think, then call run' }],
  });
  for (const b of s.blocks) assert.ok(['thinking', 'text', 'tool_use'].includes(b.type));
});

test('B15 an image block is a 400 invalid_request_error (no vision support), not a 500', async () => {
  const r = await messages({
    max_tokens: 4,
    messages: [{ role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] }],
  });
  const e = assertAnthropicError(r, 400, 'invalid_request_error');
  assert.match(e.message, /vision/);
});

test('B18 no split code point in Anthropic text deltas; joined text equals the non-streamed text', async () => {
  const body = { max_tokens: 24, temperature: 0, messages: [{ role: 'user', content: 'Repeat exactly: 赋予 🚀 歪' }] };
  const s = await stream(body);
  const streamed = s.blocks.map((b) => b.text).join('');
  assert.ok(!streamed.includes('\uFFFD'));
  const whole = JSON.parse((await messages(body)).text);
  assert.equal(whole.content.filter((b) => b.type === 'text').map((b) => b.text).join(''), streamed);
});

test('B22 a prompt longer than the context is a 400 "prompt is too long" before any stream byte', async () => {
  const long = 'word '.repeat((await contextLength(server)) + 100); // ~1 token a word: past the context
  for (const streamFlag of [false, true]) {
    const r = await messages({ max_tokens: 8, stream: streamFlag, messages: [{ role: 'user', content: long }] });
    const e = assertAnthropicError(r, 400, 'invalid_request_error');
    assert.match(e.message, /^prompt is too long: \d+ tokens > \d+ maximum$/);
    assert.ok(!r.text.includes('event:'));
  }
});

test('B24 CORS preflight on /v1/messages allows the Anthropic headers without authentication', async () => {
  const res = await fetch(server.url + '/v1/messages', {
    method: 'OPTIONS',
    headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key, anthropic-version, anthropic-beta, content-type' },
  });
  assert.ok(res.status === 200 || res.status === 204);
  // A loopback origin (a local web UI) is allowed by default and echoed, never '*' (issue #38).
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  assert.match(res.headers.get('access-control-allow-methods'), /POST/);
  for (const h of ['x-api-key', 'anthropic-version', 'anthropic-beta']) assert.match(res.headers.get('access-control-allow-headers'), new RegExp(h));
  const bare = await fetch(server.url + '/v1/models', { method: 'OPTIONS' });
  for (const h of ['x-api-key', 'anthropic-version', 'anthropic-beta']) assert.match(bare.headers.get('access-control-allow-headers'), new RegExp(h));
});

test('errors come in Anthropic shape with Anthropic statuses; the connection stays usable', async () => {
  assertAnthropicError(await messages({ messages: [{ role: 'user', content: 'x' }] }), 400, 'invalid_request_error'); // max_tokens missing
  // An unknown model is answered by the served one (its 404 is for --strict-model-names).
  assert.equal((await post('/v1/messages', { model: 'no-such-model', max_tokens: 2, messages: [{ role: 'user', content: 'x' }] })).status, 200);
  assertAnthropicError(await post('/v1/messages/nothing', {}), 404, 'not_found_error');
  assertAnthropicError(await messages({ max_tokens: 2, tool_choice: { type: 'tool', name: 'missing' }, tools: [RUN_TOOL], messages: [{ role: 'user', content: 'x' }] }), 400, 'invalid_request_error');
  assertAnthropicError(
    await messages({ max_tokens: 2, thinking: { type: 'enabled', budget_tokens: 8 }, tool_choice: { type: 'any' }, tools: [RUN_TOOL], messages: [{ role: 'user', content: 'x' }] }),
    400,
    'invalid_request_error',
  );
  const ok = await messages({ max_tokens: 2, stop_sequences: ['\n\n'], metadata: { user_id: 'u' }, messages: [{ role: 'user', content: 'x' }] }, { 'anthropic-beta': 'tools-2024-04-04' });
  assert.equal(ok.status, 200, ok.text);
});

test('GET /v1/models answers in the caller\'s shape', async () => {
  const ant = await (await fetch(server.url + '/v1/models', { headers: HEADERS })).json();
  assert.equal(ant.has_more, false);
  assert.equal(ant.data[0].type, 'model');
  assert.equal(typeof ant.data[0].display_name, 'string');
  const oai = await (await fetch(server.url + '/v1/models')).json();
  assert.equal(oai.object, 'list');
  assert.equal(oai.data[0].object, 'model');
});

test('tool_choice none: no tool_use block; system as blocks and stop sequences are accepted', async () => {
  const s = await stream({
    max_tokens: 8,
    system: [{ type: 'text', text: 'Be brief.' }],
    tool_choice: { type: 'none' },
    tools: [RUN_TOOL],
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(s.blocks.filter((b) => b.type === 'tool_use').length, 0);
});
