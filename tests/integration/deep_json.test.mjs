// Issue #38 item 3: one request must not kill the head. A body nested 100,000 deep (~200 KB,
// under the default body limit) in chat_template_kwargs, a json_schema, an Anthropic tool schema,
// an Ollama format or a Responses input: the server answers 400 in the API's own error shape and
// keeps serving. On the code before the depth cap at parse time the head died of SIGSEGV (its
// request readers and json's dump() recurse once per level). Default flags: the body limit and
// the cap under test are the defaults a user gets.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';

let server;

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

const DEPTH = 100000;
// A JSON value nested `depth` levels: objects and arrays alternating, as an attacker would mix them.
function deep(depth) {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 ? '[' : '{"a":';
    close = (i % 2 ? ']' : '}') + close;
  }
  return open + '1' + close;
}

async function post(path, body) {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, text: await res.text() };
}

async function stillServes() {
  assert.equal(server.proc.exitCode, null, 'the head is alive');
  assert.equal(server.proc.signalCode, null, 'the head was not killed by a signal');
  const r = await post('/v1/chat/completions', JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }));
  assert.equal(r.status, 200, r.text);
  assert.equal(JSON.parse(r.text).object, 'chat.completion');
}

const user = '[{"role":"user","content":"hi"}]';

test('deep chat_template_kwargs and json_schema: 400 in OpenAI shape, the server keeps serving', async () => {
  for (const body of [
    `{"messages":${user},"chat_template_kwargs":${deep(DEPTH)}}`,
    `{"messages":${user},"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${deep(DEPTH)}}}}`,
    `{"prompt":"hi","extra":${deep(DEPTH)}}`,
  ]) {
    const path = body.startsWith('{"prompt"') ? '/v1/completions' : '/v1/chat/completions';
    const r = await post(path, body);
    assert.equal(r.status, 400, r.text);
    const e = JSON.parse(r.text).error;
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.code, 'invalid_json');
    assert.match(e.message, /deeper than 64 levels/);
  }
  await stillServes();
});

test('deep bodies on the Anthropic, Responses and Ollama routes: 400 in each shape', async () => {
  const a = await post('/v1/messages', `{"model":"m","max_tokens":8,"messages":${user},"tools":[{"name":"t","input_schema":${deep(DEPTH)}}]}`);
  assert.equal(a.status, 400, a.text);
  const ab = JSON.parse(a.text);
  assert.equal(ab.type, 'error');
  assert.equal(ab.error.type, 'invalid_request_error');
  assert.match(ab.error.message, /deeper than 64 levels/);

  const r = await post('/v1/responses', `{"input":${deep(DEPTH)}}`);
  assert.equal(r.status, 400, r.text);
  assert.match(JSON.parse(r.text).error.message, /deeper than 64 levels/);

  for (const path of ['/api/chat', '/api/generate']) {
    const o = await post(path, `{"model":"m","prompt":"hi","messages":${user},"format":${deep(DEPTH)}}`);
    assert.equal(o.status, 400, o.text);
    assert.match(JSON.parse(o.text).error, /deeper than 64 levels/);
  }
  const p = await post('/api/pull', `{"model":"m","x":${deep(DEPTH)}}`);
  assert.equal(p.status, 400, p.text);
  assert.match(JSON.parse(p.text).error, /deeper than 64 levels/);
  await stillServes();
});

test('nesting up to the cap is accepted: the cap refuses depth, not structure', async () => {
  // 63 levels inside the top-level object (an unknown field, which the readers ignore): the
  // deepest a body may be; one more is refused.
  const r = await post('/v1/chat/completions', `{"messages":${user},"max_tokens":2,"x_extra":${deep(63)}}`);
  assert.equal(r.status, 200, r.text);
  const over = await post('/v1/chat/completions', `{"messages":${user},"max_tokens":2,"x_extra":${deep(64)}}`);
  assert.equal(over.status, 400, over.text);
});
