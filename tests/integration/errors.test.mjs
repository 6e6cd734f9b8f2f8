// Bad input on the real server: status codes and OpenAI's error shape, checked byte-level with
// fetch (an SDK would hide them). The server runs with a small context and body limit.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';

let server;

before(async () => {
  // Small limits on purpose: the tests provoke context_length_exceeded and 413 with small bodies.
  server = await startServer(['--ctx-size', '256', '--max-body-bytes', '65536']);
});
after(async () => server && (await server.stop()));

async function post(path, body, headers = {}) {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

// Asserts the OpenAI error shape {"error":{"message","type","param","code"}}.
function assertOpenAIError(r, status, { param, code, type = 'invalid_request_error' } = {}) {
  assert.equal(r.status, status, r.text);
  assert.match(r.type, /application\/json/);
  const body = JSON.parse(r.text);
  assert.deepEqual(Object.keys(body), ['error']);
  const e = body.error;
  for (const k of ['message', 'type', 'param', 'code']) assert.ok(k in e, `error.${k} present`);
  assert.equal(typeof e.message, 'string');
  assert.ok(e.message.length > 10, 'the message says something');
  assert.equal(e.type, type);
  if (param !== undefined) assert.equal(e.param, param);
  if (code !== undefined) assert.equal(e.code, code);
  return e;
}

const user = [{ role: 'user', content: 'hi' }];

test('malformed JSON is a 400', async () => {
  assertOpenAIError(await post('/v1/chat/completions', '{"messages": [}'), 400, { code: 'invalid_json' });
  assertOpenAIError(await post('/v1/completions', 'not json at all'), 400, { code: 'invalid_json' });
  assertOpenAIError(await post('/v1/chat/completions', '[1,2,3]'), 400, { code: 'invalid_json' });
});

test('missing and ill-typed fields are 400s naming the field', async () => {
  assertOpenAIError(await post('/v1/chat/completions', {}), 400, { param: 'messages' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: 'hi' }), 400, { param: 'messages' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: [] }), 400, { param: 'messages' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: [{ content: 'x' }] }), 400, { param: 'messages[0].role' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: [{ role: 'user' }] }), 400, { param: 'messages[0].content' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, temperature: 'hot' }), 400, { param: 'temperature' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, max_tokens: '5' }), 400, { param: 'max_tokens' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, model: 7 }), 400, { param: 'model' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, stream: 'yes' }), 400, { param: 'stream' });
  assertOpenAIError(await post('/v1/completions', { model: 'default' }), 400, { param: 'prompt' });
});

test('max_tokens < 1 is a 400 (both spellings)', async () => {
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, max_tokens: 0 }), 400, { param: 'max_tokens' });
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, max_completion_tokens: -1 }), 400, {
    param: 'max_completion_tokens',
  });
  assertOpenAIError(await post('/v1/completions', { prompt: 'x', max_tokens: 0 }), 400, { param: 'max_tokens' });
});

test('n other than 1 is a 400 before any stream byte (B17)', async () => {
  for (const n of [0, 2]) {
    assertOpenAIError(await post('/v1/chat/completions', { messages: user, n, stream: true, max_tokens: 4 }), 400, { param: 'n' });
  }
});

test('an unknown model is answered by the served model, the header naming what was asked (404s: --strict-model-names, clients/model_names)', async () => {
  const res = await fetch(server.url + '/v1/chat/completions', {
    method: 'POST',
    body: JSON.stringify({ model: 'no-such-model', messages: user, max_tokens: 2 }),
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-superfluid-model-substituted'), 'no-such-model');
  assert.notEqual((await res.json()).model, 'no-such-model');
});

test('a prompt longer than the context is a 400 that says so, streaming or not (B22)', async () => {
  const long = [{ role: 'user', content: 'word '.repeat(400) }];
  for (const stream of [false, true]) {
    const e = assertOpenAIError(await post('/v1/chat/completions', { messages: long, stream }), 400, {
      code: 'context_length_exceeded',
      param: 'messages',
    });
    assert.match(e.message, /\d+ tokens > 255 maximum/);
  }
  assertOpenAIError(await post('/v1/completions', { prompt: 'word '.repeat(400) }), 400, { code: 'context_length_exceeded' });
});

test('a prompt that fits but runs into the context limit ends with finish_reason length', async () => {
  const r = await post('/v1/chat/completions', { messages: [{ role: 'user', content: 'word '.repeat(200) }], max_tokens: 1000 });
  assert.equal(r.status, 200, r.text);
  const body = JSON.parse(r.text);
  if (body.choices[0].finish_reason === 'length') {
    assert.ok(body.usage.prompt_tokens + body.usage.completion_tokens <= 256);
  }
});

test('a body over the size limit is a 413 in the same shape', async () => {
  const huge = { messages: [{ role: 'user', content: 'x'.repeat(100000) }] };
  assertOpenAIError(await post('/v1/chat/completions', huge), 413, { code: 'request_too_large' });
});

test('unsupported features are refused, not ignored; an image part is a 400, not a 500 (B15)', async () => {
  assertOpenAIError(await post('/v1/chat/completions', { messages: user, logprobs: true }), 400, { param: 'logprobs' });
  assertOpenAIError(
    await post('/v1/chat/completions', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }] }),
    400,
    { param: 'messages[0].content' },
  );
});

test('an unknown endpoint is a 404 in the same shape', async () => {
  assertOpenAIError(await post('/v1/nothing-here', {}), 404, {});
});

test("an unknown endpoint is a 404 in the caller's API shape: Ollama under /api/, Anthropic with anthropic-version", async () => {
  const ollama = await post('/api/nothing-here', {});
  assert.equal(ollama.status, 404);
  const o = JSON.parse(ollama.text);
  assert.equal(typeof o.error, 'string', ollama.text); // Ollama: {"error": "message"}
  assert.match(o.error, /unknown endpoint: POST \/api\/nothing-here/);
  const anthropic = await post('/v1/nothing-here', {}, { 'anthropic-version': '2023-06-01' });
  assert.equal(anthropic.status, 404);
  const a = JSON.parse(anthropic.text);
  assert.equal(a.type, 'error', anthropic.text);
  assert.equal(a.error.type, 'not_found_error');
});

test("a path's wrong method is a 405 naming the allowed ones; an unknown method a 501; both in the caller's API shape", async () => {
  const wrong = await fetch(server.url + '/v1/chat/completions', { method: 'PATCH' });
  const w = { status: wrong.status, type: wrong.headers.get('content-type') ?? '', text: await wrong.text() };
  const e = assertOpenAIError(w, 405, { code: 'method_not_allowed' });
  assert.equal(wrong.headers.get('allow'), 'POST');
  assert.match(e.message, /PATCH is not allowed on \/v1\/chat\/completions \(allowed: POST\)/);
  // /v1/models is GET only: a POST there is a 405 too, not a 404.
  assert.equal((await post('/v1/models', {})).status, 405);
  const unknown = await fetch(server.url + '/v1/chat/completions', { method: 'FOO' });
  const u = { status: unknown.status, type: unknown.headers.get('content-type') ?? '', text: await unknown.text() };
  assert.match(assertOpenAIError(u, 501, { code: 'unsupported_method' }).message, /FOO is not supported/);
  const o = await fetch(server.url + '/api/chat', { method: 'FOO' });
  assert.equal(o.status, 501);
  assert.match((await o.json()).error, /FOO is not supported/);
  // An unknown path is still a 404 whatever the method.
  assert.equal((await fetch(server.url + '/v1/nothing-here', { method: 'PATCH' })).status, 404);
});

test('the connection stays usable after an error response (keep-alive)', async () => {
  for (let i = 0; i < 3; i++) {
    assertOpenAIError(await post('/v1/chat/completions', '{bad'), 400, {});
    const ok = await post('/v1/chat/completions', { messages: user, max_tokens: 2 });
    assert.equal(ok.status, 200, ok.text);
  }
});

test('CORS preflight is answered without authentication (B24)', async () => {
  const res = await fetch(server.url + '/v1/chat/completions', {
    method: 'OPTIONS',
    headers: {
      Origin: 'http://localhost:5173',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type',
    },
  });
  assert.ok(res.status === 200 || res.status === 204);
  // A loopback origin (a local web UI) is allowed by default and echoed, never '*' (issue #38).
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  assert.match(res.headers.get('access-control-allow-methods'), /POST/);
  assert.match(res.headers.get('access-control-allow-headers'), /authorization/);
});

test('/health is 200 once the model is loaded', async () => {
  const res = await fetch(server.url + '/health');
  assert.equal(res.status, 200);
  assert.equal((await res.json()).status, 'ok');
});
