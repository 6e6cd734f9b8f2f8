// Issue #38 item 4: one request's schema must not stall the others. Templates and grammars were
// built under one process-wide mutex (a 250 KB schema nested 10,000 deep took 57.8 s and held a
// 4-token request for 23.9 s). Now the program's localtime is thread-safe, so renders run in
// parallel with no lock (unit test ThreadLocalTime), nesting is capped at parse time (64 levels,
// deep_json.test.mjs) and a schema at 64 KiB: over it, a 400 (schema_too_large) in each API's
// shape, before any grammar is built.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';

let server;
before(async () => {
  server = await startServer([]);
});
after(async () => server && (await server.stop()));

const user = [{ role: 'user', content: 'hi' }];
const bigSchema = (n) => {
  const props = {};
  for (let i = 0; i < n; i++) props[`p${i}`] = { type: 'string', pattern: '^(a|b|c)+[0-9]{1,30}$' };
  return { type: 'object', properties: props, required: Object.keys(props) };
};
// Time to the first token of a streaming chat request (its role chunk aside), ms.
// Reads an SSE body's frames, calling onFrame(frame) for each until it returns true or the body
// ends.
const readFrames = async (rd, onFrame) => {
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await rd.read();
    if (done) return;
    buf += dec.decode(value);
    for (let i; (i = buf.indexOf('\n\n')) >= 0; ) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (onFrame(frame)) return;
    }
  }
};
const ttftOf = async (body) => {
  const t0 = performance.now();
  const r = await postJson(server.url, '/v1/chat/completions', body);
  assert.equal(r.status, 200);
  const rd = r.body.getReader();
  await readFrames(rd, (f) => /"content":"[^"]/.test(f) || f.includes('"finish_reason":"'));
  const t = performance.now() - t0;
  await rd.cancel().catch(() => {});
  return t;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const withSchema = (schema) => ({ messages: user, max_tokens: 1, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });

test('a schema over 64 KiB is a 400 in each API\'s shape', async () => {
  const schema = bigSchema(1500);
  assert.ok(JSON.stringify(schema).length > 65536);
  const o = await postJson(server.url, '/v1/chat/completions', withSchema(schema));
  assert.equal(o.status, 400);
  const e = (await o.json()).error;
  assert.equal(e.code, 'schema_too_large');
  assert.match(e.message, /at most 65536/);
  const t = await postJson(server.url, '/v1/chat/completions', { messages: user, max_tokens: 1, tools: [{ type: 'function', function: { name: 'f', parameters: schema } }] });
  assert.equal(t.status, 400);
  assert.equal((await t.json()).error.code, 'schema_too_large');
  const a = await postJson(server.url, '/v1/messages', { model: 'm', max_tokens: 1, messages: user, tools: [{ name: 'f', input_schema: schema }] });
  assert.equal(a.status, 400);
  assert.equal((await a.json()).type, 'error');
  const ol = await postJson(server.url, '/api/chat', { model: 'm', messages: user, format: schema, stream: false });
  assert.equal(ol.status, 400);
  assert.match((await ol.json()).error, /at most 65536/);
  const r = await postJson(server.url, '/v1/responses', { input: 'hi', text: { format: { type: 'json_schema', name: 'x', schema } } });
  assert.equal(r.status, 400);
});

// The stall itself (issue #38 item 4): the heaviest schemas the caps let through (~64 KiB of
// patterns: ~0.4 s of grammar each here), four at once, and plain streaming requests beside
// them. Under the old process-wide render lock a plain request waited for the builds ahead of
// it, so its first token came on the scale of the schema requests themselves. Now templates and
// grammars are built on each request's own thread (the sampler too: engine_i::prepare_sampler)
// and the plain requests' median time to first token must stay under half the schema requests'
// shortest time: a bound relative to this machine's speed (an absolute one flaked on a loaded
// 2-core machine). The idle and loaded figures are printed; the 2x idle is not met here
// (3-4x: four grammar builds and one more request share two cores, and the grammar-constrained
// sampling of the schema requests still runs on the tick thread).
test('the heaviest accepted schemas do not stall a concurrent request', async () => {
  const plain = { messages: user, max_tokens: 4, stream: true };
  const ttft = () => ttftOf(plain);
  await ttft(); // warm: the first render of the template
  const idle = [];
  for (let i = 0; i < 7; i++) idle.push(await ttft());
  const schema = bigSchema(980);
  assert.ok(JSON.stringify(schema).length < 65536, 'accepted: under the cap');
  const t0 = performance.now();
  const heavy = Array.from({ length: 4 }, () =>
    postJson(server.url, '/v1/chat/completions', withSchema(schema)).then(async (r) => {
      assert.equal(r.status, 200, await r.text());
      return performance.now() - t0;
    }),
  );
  await new Promise((r) => setTimeout(r, 20));
  const during = [];
  let busy = true;
  const heavyDone = Promise.all(heavy).finally(() => (busy = false));
  while (busy && during.length < 15) during.push(await ttft());
  const heavyMs = await heavyDone;
  console.log(`idle TTFT ms ${idle.map((x) => x.toFixed(1)).join(' ')}; during the schemas ${during.map((x) => x.toFixed(1)).join(' ')}; the schema requests took ${heavyMs.map((x) => x.toFixed(0)).join(' ')} ms`);
  assert.ok(during.length >= 1);
  assert.ok(median(during) < Math.min(...heavyMs) / 2, `median TTFT beside the schemas ${median(during).toFixed(1)} ms (idle ${median(idle).toFixed(1)} ms), the schema requests ${Math.min(...heavyMs).toFixed(0)} ms or more`);
});

// A deep schema's grammar, while it constrains its request's tokens (issue #38 item 4): each
// of that request's tokens checks the grammar against the whole vocabulary when the model's
// pick breaks it (every time, with this random-weight model), 40-100 ms here. That sampling ran
// on the tick thread and held every other sequence's next token (a concurrent request's first
// token came ~6x later than idle); now it runs on the engine's background sampling thread at
// the lowest CPU priority (SCHED_IDLE). The concurrent requests' median time to first token, measured while
// the schema request is still generating, must stay within 2x the idle median + 15 ms. This file runs
// alone (RUN_SERIAL): another test's load would move both medians.
const deepSchema = (depth) => {
  let s = { type: 'string', pattern: '^[a-c]{1,8}$' };
  for (let i = 0; i < depth; i++) s = { type: 'object', properties: { k: s, n: { type: 'integer' } }, required: ['k', 'n'] };
  return s;
};

test('a deep schema generating beside it keeps a concurrent request\'s TTFT within 2x idle + 15 ms', async () => {
  const plain = { messages: user, max_tokens: 2, stream: true };
  const ttft = () => ttftOf(plain);
  await ttft();
  const idle = [];
  for (let i = 0; i < 9; i++) idle.push(await ttft());
  // The schema request streams; its tokens are counted as they come.
  const body = { ...withSchema(deepSchema(30)), max_tokens: 400, stream: true };
  const r = await postJson(server.url, '/v1/chat/completions', body);
  assert.equal(r.status, 200, r.status === 200 ? '' : await r.text());
  let schemaTokens = 0;
  let schemaDone = false;
  const schemaRd = r.body.getReader();
  const reader = readFrames(schemaRd, (f) => {
    if (/"content":"/.test(f)) schemaTokens++;
    return false;
  }).finally(() => (schemaDone = true));
  while (schemaTokens < 3 && !schemaDone) await new Promise((res) => setTimeout(res, 10));
  assert.ok(!schemaDone, 'the schema request generates while the others are measured');
  const before = schemaTokens;
  const during = [];
  for (let i = 0; i < 9; i++) during.push(await ttft());
  const stillGenerating = !schemaDone;
  const duringSchema = schemaTokens - before;
  console.log(`idle TTFT ms ${idle.map((x) => x.toFixed(1)).join(' ')}; beside the deep schema ${during.map((x) => x.toFixed(1)).join(' ')}; the schema request made ${duringSchema} tokens meanwhile${stillGenerating ? ' and was still generating' : ''}`);
  assert.ok(stillGenerating, 'the schema request was still generating at the end of the measurement');
  // 2x idle + 15 ms: idle is ~9 ms here, and a CI run saw 21 ms beside the schema (four of nine
  // at ~47 ms); the stall this guards against put it at ~6x idle.
  assert.ok(median(during) <= 2 * median(idle) + 15, `median TTFT beside the deep schema ${median(during).toFixed(1)} ms, idle ${median(idle).toFixed(1)} ms`);
  await schemaRd.cancel().catch(() => {});
  await reader.catch(() => {});
});
