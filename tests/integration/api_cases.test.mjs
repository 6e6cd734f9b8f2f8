// Handed API cases (../shared/cases/api-cases.md) on the OpenAI chat API with tools, structured
// output and reasoning, over raw HTTP; every stream goes through the event-grammar checker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { checkOpenAIStream } from '../lib/event_grammar.mjs';
import { validate } from '../lib/schema.mjs';

let server;
const MODEL = 'default';

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

async function chat(body) {
  const res = await fetch(server.url + '/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  const text = await res.text();
  if (body.stream && res.status === 200) return { status: 200, stream: checkOpenAIStream(text), text };
  return { status: res.status, json: JSON.parse(text), text };
}
function assert400(r, param) {
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.type, 'invalid_request_error');
  if (param) assert.equal(r.json.error.param, param);
  return r.json.error;
}

// Tools without arguments: their calls end quickly under the grammar, even with random weights.
const TIME_TOOLS = ['get_time_utc', 'get_time_local'].map((name) => ({
  type: 'function',
  function: { name, description: `current time (${name.slice(9)})`, parameters: { type: 'object', properties: {} } },
}));
const PERSON = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 6 }, age: { type: 'integer', minimum: 0, maximum: 120 } },
  required: ['name', 'age'],
  additionalProperties: false,
};

test('B01 OpenAI: assistant tool call then tool output, no user message, is answered (200)', async () => {
  const r = await chat({
    max_tokens: 4,
    tools: [{ type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } }],
    messages: [
      { role: 'system', content: 's' },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: 'a.txt' }] },
    ],
  });
  assert.equal(r.status, 200, r.text);
});

test('B16 an object-form tool_choice is enforced: exactly one call to the named tool', async () => {
  for (const stream of [false, true]) {
    const r = await chat({
      stream,
      seed: 7,
      parallel_tool_calls: false,
      tools: TIME_TOOLS,
      tool_choice: { type: 'function', function: { name: 'get_time_local' } },
      messages: [{ role: 'user', content: 'what time is it in UTC' }],
    });
    assert.equal(r.status, 200, r.text);
    const calls = stream ? r.stream.toolCalls : r.json.choices[0].message.tool_calls.map((c) => ({ ...c.function, id: c.id }));
    const finish = stream ? r.stream.finishReason : r.json.choices[0].finish_reason;
    assert.equal(calls.length, 1);
    assert.equal(calls[0].name, 'get_time_local');
    assert.deepEqual(JSON.parse(calls[0].arguments), {});
    assert.equal(finish, 'tool_calls');
  }
});

test('B16 tool_choice required gives a call; none gives none; bad choices are 400s', async () => {
  const req = await chat({ seed: 3, parallel_tool_calls: false, tools: TIME_TOOLS, tool_choice: 'required', messages: [{ role: 'user', content: 'time?' }] });
  assert.equal(req.status, 200, req.text);
  assert.ok(req.json.choices[0].message.tool_calls.length >= 1);
  assert.ok(TIME_TOOLS.some((t) => t.function.name === req.json.choices[0].message.tool_calls[0].function.name));
  const none = await chat({ max_tokens: 6, tools: TIME_TOOLS, tool_choice: 'none', messages: [{ role: 'user', content: 'time?' }], stream: true });
  assert.equal(none.stream.toolCalls.length, 0);
  assert400(await chat({ tools: TIME_TOOLS, tool_choice: { type: 'function', function: { name: 'nope' } }, messages: [{ role: 'user', content: 'x' }] }), 'tool_choice');
  assert400(await chat({ tool_choice: 'required', messages: [{ role: 'user', content: 'x' }] }), 'tool_choice');
});

test('B12 response_format json_schema: the content parses and validates; json_object and text work', async () => {
  const r = await chat({
    seed: 11,
    messages: [{ role: 'user', content: 'Give a person.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'p', strict: true, schema: PERSON } },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.choices[0].finish_reason, 'stop');
  assert.deepEqual(validate(JSON.parse(r.json.choices[0].message.content), PERSON), []);

  const s = await chat({
    seed: 12,
    stream: true,
    messages: [{ role: 'user', content: 'Give a person.' }],
    response_format: { type: 'json_schema', json_schema: { name: 'p', schema: PERSON } },
  });
  assert.deepEqual(validate(JSON.parse(s.stream.content), PERSON), []);

  const text = await chat({ max_tokens: 3, response_format: { type: 'text' }, messages: [{ role: 'user', content: 'x' }] });
  assert.equal(text.status, 200, text.text);
});

test('B12 a schema keyword the grammar cannot enforce is a 400 naming it, never unconstrained', async () => {
  const bad = async (schema) =>
    assert400(
      await chat({ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }),
      'response_format.json_schema.schema',
    ).message;
  assert.match(await bad({ type: 'object', properties: { a: { not: { type: 'string' } } } }), /'not'/);
  assert.match(await bad({ type: 'number', minimum: 1 }), /'minimum'/);
  assert.match(await bad({ type: 'string', format: 'email' }), /format/);
  assert.match(await bad({ type: 'object', if: { required: ['a'] }, then: {} }), /'if'/);
  assert400(await chat({ messages: [{ role: 'user', content: 'x' }], response_format: { type: 'json_schema', json_schema: { name: 'x' } } }), 'response_format.json_schema.schema');
});

test('B27 every documented reasoning_effort is accepted and mapped; none/minimal turn thinking off', async () => {
  const prompt = async (extra) => {
    const r = await chat({ max_tokens: 1, messages: [{ role: 'user', content: '2+2?' }], ...extra });
    assert.equal(r.status, 200, r.text);
    return r.json.usage.prompt_tokens;
  };
  // The Qwen3 template closes an empty think block in the prompt when thinking is off.
  const on = await prompt({ reasoning_effort: 'high' });
  const off = await prompt({ reasoning_effort: 'none' });
  assert.ok(off > on, `thinking off renders the empty think block (${off} > ${on})`);
  assert.equal(await prompt({ reasoning_effort: 'minimal' }), off);
  for (const e of ['low', 'medium', 'xhigh']) assert.equal(await prompt({ reasoning_effort: e }), on);
  assert.equal(await prompt({ chat_template_kwargs: { enable_thinking: false } }), off);
  assert400(await chat({ reasoning_effort: 'extreme', messages: [{ role: 'user', content: 'x' }] }), 'reasoning_effort');
  assert400(await chat({ chat_template_kwargs: { enable_thinking: 'no' }, messages: [{ role: 'user', content: 'x' }] }), 'chat_template_kwargs.enable_thinking');
  const s = await chat({ stream: true, max_tokens: 8, reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] });
  assert.ok(!s.stream.content.includes('<think>'), 'reasoning never leaks into content');
});

test('B15 content-part arrays: text parts joined (also tool/assistant), image part → 400 no vision support', async () => {
  const ok = await chat({
    max_tokens: 2,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }, { type: 'text', text: 'please' }] },
    ],
  });
  assert.equal(ok.status, 200, ok.text);
  const e = assert400(
    await chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'describe' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] }] }),
    'messages[0].content',
  );
  assert.match(e.message, /no vision support/);
});

test('B17 n:0 and n:2 with stream are 400s naming n before any SSE byte', async () => {
  for (const n of [0, 2]) {
    const r = await chat({ stream: true, n, max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
    assert400(r, 'n');
    assert.ok(!r.text.startsWith('data:'));
  }
});

test('B25 identical requests in parallel each get their own forced tool call', async () => {
  const ask = (name) =>
    chat({ seed: 5, parallel_tool_calls: false, tools: TIME_TOOLS, tool_choice: { type: 'function', function: { name } }, messages: [{ role: 'user', content: 'time' }] });
  const names = ['get_time_utc', 'get_time_local', 'get_time_utc', 'get_time_local'];
  const rs = await Promise.all(names.map(ask));
  rs.forEach((r, i) => {
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.choices[0].message.tool_calls.map((c) => c.function.name), [names[i]]);
  });
  assert.equal(rs[0].json.choices[0].message.tool_calls[0].function.arguments, rs[2].json.choices[0].message.tool_calls[0].function.arguments);
});

test('B31 (chat, Ollama): a tool call cut by max_tokens, sent back with its result, is accepted', async () => {
  const tools = [{ type: 'function', function: { name: 'shell', description: 'runs a command', parameters: PERSON } }];
  let cut = 0;
  for (const max_tokens of [14, 17, 20, 23, 26]) {
    const first = await chat({ max_tokens, tools, tool_choice: 'required', messages: [{ role: 'user', content: 'run ls' }] });
    assert.equal(first.status, 200, first.text);
    const msg = first.json.choices[0].message;
    if (!msg.tool_calls) continue; // cut before the call's name: nothing to send back
    // What this server emitted goes back verbatim, whole or cut.
    const args = msg.tool_calls[0].function.arguments;
    try {
      JSON.parse(args);
    } catch {
      cut++;
    }
    const history = [{ role: 'user', content: 'run ls' }, msg, ...msg.tool_calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'a.txt' }))];
    const again = await chat({ max_tokens: 2, tools, messages: history });
    assert.equal(again.status, 200, again.text);
    // The same history on Ollama's API: arguments as the text the server emitted.
    const res = await fetch(server.url + '/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        stream: false,
        options: { num_predict: 2 },
        tools,
        messages: [{ role: 'user', content: 'run ls' }, { role: 'assistant', content: '', tool_calls: [{ function: { name: 'shell', arguments: args } }] }, { role: 'tool', content: 'a.txt' }],
      }),
    });
    assert.equal(res.status, 200, await res.text());
  }
  assert.ok(cut > 0, 'at least one call was cut mid-arguments');
});
