// Handed API cases of the reliability issue (#20; ../shared/cases/api-cases-2.md): grammars under
// batching (B36), the queue limit answered at once in each API's shape (B39), and sampling
// values that would poison the sampler (B40). Random-weight model: statuses, shapes, schemas.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until } from '../lib/server.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function post(server, path, body) {
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

const workerStarts = async (server) => (await server.metrics()).worker_starts_total;

// ---- B36 ----------------------------------------------------------------------------------

const schemaA = { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'], additionalProperties: false };
const schemaB = { type: 'object', properties: { b: { type: 'string', enum: ['x', 'y'] } }, required: ['b'], additionalProperties: false };
const schemaC = { type: 'object', properties: { c: { type: 'boolean' } }, required: ['c'], additionalProperties: false };

// A reply under `key`'s schema: a whole instance when it stopped, else (cut by max_tokens in
// whitespace padding) an object's start that names no other request's key.
function checkConstrained(text, finish, key, valueOk) {
  const others = ['a', 'b', 'c'].filter((k) => k !== key);
  for (const k of others) assert.ok(!text.includes(`"${k}"`), `reply for ${key} names "${k}": ${text}`);
  if (finish === 'stop') {
    const j = JSON.parse(text);
    assert.deepEqual(Object.keys(j), [key], text);
    assert.ok(valueOk(j[key]), text);
  } else {
    assert.equal(finish, 'length');
    assert.match(text, /^\s*(\{|$)/, `not the start of an object: ${text}`);
  }
}

test('B36: a plain request and three constrained ones in the same batches each keep their own constraint', { timeout: 300000 }, async () => {
  const server = await startServer();
  try {
    const user = (content) => [{ role: 'user', content }];
    const rf = (name, schema) => ({ type: 'json_schema', json_schema: { name, strict: true, schema } });
    for (let round = 0; round < 10; ++round) {
      // Rounds 0-4: all four within 50 ms; rounds 5-9: 0.3 s apart.
      const gap = round < 5 ? 15 : 300;
      const starts = [
        () => post(server, '/v1/chat/completions', { model: 'm', stream: true, max_tokens: 32, messages: user('tell a story') }),
        () => post(server, '/v1/chat/completions', { model: 'm', max_tokens: 32, messages: user('x'), response_format: rf('a', schemaA) }),
        () => post(server, '/v1/chat/completions', { model: 'm', max_tokens: 32, messages: user('x'), response_format: rf('b', schemaB) }),
        () => post(server, '/api/chat', { model: 'm', stream: false, options: { num_predict: 32 }, messages: user('x'), format: schemaC }),
      ];
      const pending = [];
      for (const s of starts) {
        pending.push(s());
        await sleep(gap);
      }
      const [r1, r2, r3, r4] = await Promise.all(pending);
      for (const r of [r1, r2, r3, r4]) assert.equal(r.status, 200, r.text);
      // R1: a normal stream, neither cut off nor constrained.
      assert.match(r1.text, /data: \[DONE\]/);
      const deltas = r1.text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
      const content = deltas.map((d) => d.choices?.[0]?.delta?.content || '').join('');
      const finish = deltas.map((d) => d.choices?.[0]?.finish_reason).filter(Boolean).pop();
      assert.ok(['length', 'stop'].includes(finish), `R1 finish ${finish}`);
      assert.ok(content.length > 0, 'R1 has content');
      const c2 = r2.json.choices[0], c3 = r3.json.choices[0];
      checkConstrained(c2.message.content, c2.finish_reason, 'a', (v) => typeof v === 'boolean');
      checkConstrained(c3.message.content, c3.finish_reason, 'b', (v) => v === 'x' || v === 'y');
      checkConstrained(r4.json.message.content, r4.json.done_reason === 'stop' ? 'stop' : 'length', 'c', (v) => typeof v === 'boolean');
    }
  } finally {
    await server.stop();
  }
});

// ---- B39 ----------------------------------------------------------------------------------

test('B39: beyond one running and one waiting request, each API answers overload at once in its own shape', { timeout: 300000 }, async () => {
  // One sequence and a queue of one: what the test fills (slots + queue = 2 admitted).
  const server = await startServer(['--parallel', '1', '--max-queue', '1']);
  try {
    const hi = [{ role: 'user', content: 'hi' }];
    const apis = [
      { path: '/v1/chat/completions', body: { model: 'm', max_tokens: 64, messages: hi }, status: 429,
        shape: (j) => j.error.type === 'rate_limit_error' && j.error.code === 'overloaded', retry: true },
      { path: '/v1/chat/completions', body: { model: 'm', max_tokens: 64, messages: hi, stream: true }, status: 429,
        shape: (j) => j.error.type === 'rate_limit_error', retry: true },
      { path: '/v1/messages', body: { model: 'm', max_tokens: 64, messages: hi }, status: 529,
        shape: (j) => j.type === 'error' && j.error.type === 'overloaded_error', retry: true },
      { path: '/api/chat', body: { model: 'm', stream: false, options: { num_predict: 64 }, messages: hi }, status: 503,
        shape: (j) => typeof j.error === 'string' && Object.keys(j).length === 1 },
      { path: '/api/chat', body: { model: 'm', stream: true, options: { num_predict: 64 }, messages: hi }, status: 503,
        shape: (j) => typeof j.error === 'string' },
    ];
    for (const api of apis) {
      // The first request holds the one sequence before the others come: otherwise, on a loaded
      // machine, it could still be in the queue when the second arrives, and that one is then
      // the third in line (refused).
      await until(async () => (await server.metrics()).num_requests_running === 0, 20000, 20);
      const first = post(server, api.path, api.body);
      await until(async () => (await server.metrics()).num_requests_running === 1, 20000, 10);
      const rs = [await Promise.all([1, 2, 3, 4, 5].map(() => post(server, api.path, api.body))), await first].flat();
      const ok = rs.filter((r) => r.status === 200);
      const refused = rs.filter((r) => r.status !== 200);
      const what = `${api.path} stream=${!!api.body.stream}: ${rs.map((r) => r.status).join(',')}`;
      assert.equal(ok.length, 2, `exactly slots + queue succeed (${what})`);
      for (const r of refused) {
        assert.equal(r.status, api.status, what);
        // A refused stream gets its status and a JSON error before any SSE/NDJSON byte.
        assert.ok(r.json && api.shape(r.json), `${what}: ${r.text}`);
        if (api.retry) assert.ok(Number.isInteger(Number(r.headers.get('retry-after'))), 'Retry-After in seconds');
      }
    }
    assert.equal(await workerStarts(server), 1, 'no worker restart');
  } finally {
    await server.stop();
  }
});

// ---- B40 ----------------------------------------------------------------------------------

test('B40: non-finite and extreme sampling values get a 400 naming the field or sample safely; the worker never restarts', { timeout: 300000 }, async () => {
  const server = await startServer();
  try {
    const starts = await workerStarts(server);
    const base = '"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]';
    const lp = ',"logprobs":true,"top_logprobs":2';
    const schema = ',"response_format":{"type":"json_schema","json_schema":{"name":"a","strict":true,"schema":' + JSON.stringify(schemaA) + '}}';
    // [extra fields, expected status, param of a 400 (null: any)]
    const openai = [
      ['"temperature":NaN', 400, null], ['"temperature":1e999', 400, null],
      ['"temperature":1e-45' + lp, 400, 'logprobs'], ['"temperature":1e-45' + schema + lp, 400, 'logprobs'],
      ['"temperature":-1', 400, 'temperature'], ['"temperature":2.5', 400, 'temperature'],
      ['"top_p":2', 400, 'top_p'], ['"top_p":1e-45', 200], ['"temperature":1e-45', 200],
      ['"temperature":1e-45' + schema, 200], ['"presence_penalty":2,"frequency_penalty":2', 200],
      ['"logit_bias":{"1":100}', null],
    ];
    for (const [extra, status, param] of openai) {
      const r = await post(server, '/v1/chat/completions', `{${base},${extra}}`);
      assert.ok(r.status < 500, `${extra}: ${r.status} ${r.text}`);
      if (status) assert.equal(r.status, status, `${extra}: ${r.text}`);
      if (r.status === 400) {
        assert.equal(r.json.error.type, 'invalid_request_error', r.text);
        if (param) assert.equal(r.json.error.param, param, r.text);
      } else {
        assert.equal(typeof r.json.choices[0].message.content, 'string', r.text);
      }
    }
    // A temperature too small to divide by is sampled greedily: the answer of temperature 0,
    // not a sample from NaN probabilities.
    const greedy = await post(server, '/v1/chat/completions', `{${base},"temperature":0}`);
    const tiny = await post(server, '/v1/chat/completions', `{${base},"temperature":1e-45}`);
    assert.equal(tiny.json.choices[0].message.content, greedy.json.choices[0].message.content);
    const antGreedy = await post(server, '/v1/messages', { model: 'm', max_tokens: 8, temperature: 0, messages: [{ role: 'user', content: 'x' }] });
    const antTiny = await post(server, '/v1/messages', { model: 'm', max_tokens: 8, temperature: 1e-45, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(antTiny.status, 200, antTiny.text);
    assert.deepEqual(antTiny.json.content, antGreedy.json.content);
    const ant = await post(server, '/v1/messages', { model: 'm', max_tokens: 8, temperature: 1.5, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(ant.status, 400, ant.text);
    assert.equal(ant.json.error.type, 'invalid_request_error');
    // Ollama: a repeat penalty of 0 cannot be used (llama.cpp divides by it): a 400 naming it,
    // not a 500 from a sampler that failed to build; the other oddities are clamped.
    const msg = [{ role: 'user', content: 'x' }];
    const zero = await post(server, '/api/chat', { model: 'm', stream: false, options: { temperature: 1e-45, repeat_penalty: 0, top_k: -5, min_p: 1, num_predict: 8 }, messages: msg });
    assert.equal(zero.status, 400, zero.text);
    assert.match(zero.json.error, /repeat_penalty/);
    const odd = await post(server, '/api/chat', { model: 'm', stream: false, options: { temperature: 1e-45, top_k: -5, min_p: 1, num_predict: 8 }, messages: msg });
    assert.equal(odd.status, 200, odd.text);
    assert.equal(odd.json.done, true);
    // Still healthy: no restart, and a normal request succeeds.
    assert.equal(await workerStarts(server), starts, 'no worker restart');
    const normal = await post(server, '/v1/chat/completions', `{${base}}`);
    assert.equal(normal.status, 200, normal.text);
  } finally {
    await server.stop();
  }
});
