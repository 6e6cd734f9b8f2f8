// Ollama's native API over raw HTTP: NDJSON bytes, final-line counters, errors before and
// after the stream, load/unload, raw/template prompts, CORS, disconnects. The `ollama` SDK
// checks are in tests/clients/ollama.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until, model } from '../lib/server.mjs';
import { readNdjson, postJson, answerTokens } from '../lib/ndjson.mjs';

let server;
const MODEL = 'tiny-qwen3-1';
const DURATIONS = ['total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration'];

before(async () => {
  // A 256-token context: B22's prompt goes over it and /api/ps must report it (context_length).
  server = await startServer(['--ctx-size', '256']);
});
after(async () => server && (await server.stop()));

function assertDoneLine(last, { context = false } = {}) {
  assert.equal(last.done, true);
  assert.ok(['stop', 'length'].includes(last.done_reason), `done_reason ${last.done_reason}`);
  for (const k of DURATIONS) assert.ok(Number.isInteger(last[k]) && last[k] >= 0, `${k} is integer ns`);
  assert.ok(last.total_duration >= last.eval_duration);
  assert.ok(last.prompt_eval_count > 0);
  assert.ok(last.eval_count >= 1);
  if (context) assert.ok(Array.isArray(last.context) && last.context.every(Number.isInteger));
}

test('/api/chat streams NDJSON at high temperature: every line valid UTF-8 JSON, one final done line with ns counters (B19)', async () => {
  for (const seed of [1, 2, 3]) {
    const res = await postJson(server.url, '/api/chat', {
      model: `${MODEL}:latest`,
      messages: [{ role: 'user', content: 'Repeat exactly: 赋予 🚀 歪' }],
      options: { num_predict: 24, temperature: 1.5, top_k: 100, seed },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /application\/x-ndjson/);
    const lines = await readNdjson(res);
    const last = lines.at(-1);
    assert.equal(lines.filter((l) => l.done).length, 1, 'exactly one done line, the last');
    assertDoneLine(last);
    let text = '';
    for (const l of lines) {
      assert.equal(l.model, `${MODEL}:latest`);
      assert.match(l.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/);
      assert.equal(l.message.role, 'assistant');
      text += l.message.content;
    }
    assert.ok(last.eval_count <= 24);
    assert.ok(text.length > 0);
  }
});

test('/api/chat streamed text joins to the non-streamed text with no split code point (B18)', async () => {
  const req = { model: MODEL, messages: [{ role: 'user', content: 'Repeat exactly: 赋予 🚀 歪' }], options: { num_predict: 24, temperature: 0 } };
  const lines = await readNdjson(await postJson(server.url, '/api/chat', req));
  const streamed = lines.map((l) => l.message.content).join('');
  const one = await (await postJson(server.url, '/api/chat', { ...req, stream: false })).json();
  assert.ok(!streamed.includes('\uFFFD'), 'no replacement character from a split code point');
  assert.equal(streamed, one.message.content);
  assert.equal(lines.at(-1).eval_count, one.eval_count);
});

test('/api/generate streamed and not give the same text; context continues a conversation', async () => {
  const req = { model: MODEL, prompt: 'Tell me a story.', options: { num_predict: 12, temperature: 0 } };
  const lines = await readNdjson(await postJson(server.url, '/api/generate', req));
  const last = lines.at(-1);
  assertDoneLine(last, { context: true });
  // `context` is the whole exchange; prompt_eval_count only what the prefix cache did not have.
  assert.ok(last.context.length >= last.prompt_eval_count + answerTokens(last));
  const streamed = lines.map((l) => l.response).join('');
  const one = await (await postJson(server.url, '/api/generate', { ...req, stream: false })).json();
  assert.equal(one.done, true);
  assert.equal(one.response, streamed);
  assert.deepEqual(one.context, last.context);
  assert.equal(one.prompt_eval_count, 1, 'the repeated prompt comes from the cache but its last token');
  const next = await (
    await postJson(server.url, '/api/generate', { ...req, prompt: 'And then?', context: one.context, stream: false })
  ).json();
  assert.deepEqual(next.context.slice(0, one.context.length), one.context, 'the earlier exchange is part of the prompt');
  assert.ok(next.context.length > one.context.length + answerTokens(next));
  const whole = next.context.length - answerTokens(next);
  assert.ok(whole - next.prompt_eval_count >= one.context.length - 1, 'the earlier exchange came from the cache');
});

test('/api/generate prompt_eval_count counts only the prompt tokens evaluated; context stays the whole exchange', async () => {
  // Raw, with a first word no other test uses: nothing of it can be cached yet.
  const req = { model: MODEL, prompt: 'Zanzibar quokkas wrote a long saga about the sea.', raw: true, stream: false, options: { num_predict: 6, temperature: 0 } };
  const cold = await (await postJson(server.url, '/api/generate', req)).json();
  assertDoneLine(cold, { context: true });
  assert.equal(cold.context.length, cold.prompt_eval_count + answerTokens(cold), 'a cold prompt is evaluated whole');
  const warm = await (await postJson(server.url, '/api/generate', req)).json();
  assert.deepEqual(warm.context, cold.context);
  assert.ok(warm.prompt_eval_count < cold.prompt_eval_count, `${warm.prompt_eval_count} < ${cold.prompt_eval_count}`);
  assert.equal(warm.prompt_eval_count, 1, 'all but the last prompt token from the cache');
  assert.equal(warm.context.length - answerTokens(warm), cold.prompt_eval_count, 'the same whole prompt');
});

test('/api/generate raw sends the prompt as is; a template is rendered; an unsupported one is a 400', async () => {
  const raw = await (
    await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'hello', raw: true, stream: false, options: { num_predict: 2, temperature: 0 } })
  ).json();
  assert.equal(raw.context.length - raw.eval_count, 1, '"hello" is one token, no template around it');
  const t = await (
    await postJson(server.url, '/api/generate', {
      model: MODEL, prompt: 'hello', system: 'sys', stream: false, options: { num_predict: 2, temperature: 0 },
      template: '{{ if .System }}{{ .System }} {{ end }}{{ .Prompt }}{{ .Response }}',
    })
  ).json();
  const same = await (
    await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'sys hello', raw: true, stream: false, options: { num_predict: 2, temperature: 0 } })
  ).json();
  // `context` holds the whole prompt (prompt_eval_count only what the prefix cache lacked).
  const promptOf = (r) => r.context.slice(0, r.context.length - r.eval_count);
  assert.deepEqual(promptOf(t), promptOf(same), 'the template rendered "sys hello"');
  assert.equal(same.prompt_eval_count, 1, 'the same prompt again: all but its last token from the cache');
  assert.equal(t.response, same.response);
  const bad = await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'x', template: '{{ range .Messages }}{{ end }}' });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error, /unsupported template action/);
});

test('load and unload requests are answered like Ollama, nothing generated', async () => {
  const load = await (await postJson(server.url, '/api/generate', { model: MODEL })).json();
  assert.deepEqual([load.done, load.done_reason, load.response], [true, 'load', '']);
  const unload = await (await postJson(server.url, '/api/chat', { model: MODEL, messages: [], keep_alive: 0 })).json();
  assert.deepEqual([unload.done, unload.done_reason, unload.message.content], [true, 'unload', '']);
  const bad = await postJson(server.url, '/api/chat', { model: MODEL, messages: [], keep_alive: 'soon' });
  assert.equal(bad.status, 400);
});

test('errors are {"error": …} with Ollama statuses; an unknown model is answered by the served one', async () => {
  const nf = await postJson(server.url, '/api/chat', { model: 'nope:7b', messages: [{ role: 'user', content: 'hi' }], stream: false, options: { num_predict: 2 } });
  assert.equal(nf.status, 200);
  assert.equal(nf.headers.get('x-superfluid-model-substituted'), 'nope:7b');
  assert.equal((await nf.json()).model, MODEL);
  const other = await postJson(server.url, '/api/chat', { model: `${MODEL}:other`, messages: [] });
  assert.equal(other.headers.get('x-superfluid-model-substituted'), `${MODEL}:other`, 'a tag other than latest is another model');
  await other.text();
  for (const [body, re] of [
    [{ messages: [] }, /model is required/],
    [{ model: MODEL, messages: [{ role: 'wizard', content: 'x' }] }, /unknown role/],
    [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], options: { temperature: 'hot' } }, /options.temperature/],
    [{ model: MODEL, messages: [{ role: 'user', content: 'x', images: ['aGk='] }] }, /images/],
    [{ model: MODEL, messages: [{ role: 'user', content: 'x' }], format: 'yaml' }, /format/],
  ]) {
    const r = await postJson(server.url, '/api/chat', body);
    assert.equal(r.status, 400);
    assert.match((await r.json()).error, re);
  }
  const notJson = await fetch(`${server.url}/api/generate`, { method: 'POST', body: '{' });
  assert.equal(notJson.status, 400);
  assert.ok((await notJson.json()).error);
});

test('options are honoured: num_predict, stop, unknown options ignored', async () => {
  const r = await (
    await postJson(server.url, '/api/generate', {
      model: MODEL, prompt: 'Count.', stream: false, options: { num_predict: 3, mirostat: 2, numa: true },
    })
  ).json();
  assert.equal(r.eval_count, 3);
  assert.equal(r.done_reason, 'length');
  // num_ctx below the server's context caps prompt + answer.
  const capped = await (
    await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'Count.', stream: false, options: { num_ctx: 14 } })
  ).json();
  assert.equal(capped.done_reason, 'length');
  assert.equal(capped.context.length, 14, 'the whole prompt and the answer fill num_ctx');
});

test('an answer the model ends itself counts its end token in eval_count, as Ollama does; one that ends at once reports 1', async () => {
  // A model whose answers end after a few tokens (mkmodel --eog-scale), so the end is the
  // model's own, not num_predict's.
  const ends = await startServer([], { modelPath: model({ eogScale: 64 }) });
  try {
    const req = { model: MODEL, prompt: 'Zebras in a row.', options: { seed: 7, num_predict: 64 } };
    const one = await (await postJson(ends.url, '/api/generate', { ...req, stream: false })).json();
    assert.equal(one.done_reason, 'stop', JSON.stringify(one));
    // The first prompt of a fresh server: context is the prompt (all evaluated) and the answer.
    const own = one.context.length - one.prompt_eval_count;
    assert.equal(one.eval_count, own + 1, JSON.stringify(one));
    const lines = await readNdjson(await postJson(ends.url, '/api/generate', req));
    assert.equal(lines.at(-1).eval_count, one.eval_count, 'the streamed done line counts the same');
    // A stop string ends it instead: no end token was sampled, so none is counted.
    assert.ok(one.response.length > 0, 'this prompt gets an answer with text');
    const stop = { ...req, stream: false, options: { ...req.options, stop: [one.response.slice(0, 1)] } };
    const cut = await (await postJson(ends.url, '/api/generate', stop)).json();
    const promptTokens = one.context.length - own;
    assert.equal(cut.done_reason, 'stop');
    assert.equal(cut.eval_count, cut.context.length - promptTokens, JSON.stringify(cut));
  } finally {
    await ends.stop();
  }
});

test('a prompt over the context is a 400 error before any NDJSON line, streamed or not (B22)', async () => {
  const long = 'word '.repeat(400);
  for (const stream of [true, false]) {
    const r = await postJson(server.url, '/api/chat', { model: MODEL, stream, messages: [{ role: 'user', content: long }] });
    assert.equal(r.status, 400);
    assert.match(r.headers.get('content-type'), /application\/json/);
    const body = await r.json();
    assert.match(body.error, /too long: \d+ tokens > \d+/);
  }
  const g = await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'x', options: { num_ctx: 3 } });
  assert.equal(g.status, 400);
});

test('OPTIONS /api/chat is a CORS preflight answered without authentication (B24)', async () => {
  const r = await fetch(`${server.url}/api/chat`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'http://localhost:5173',
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type',
    },
  });
  assert.ok([200, 204].includes(r.status));
  // A loopback origin (a local web UI) is allowed by default and echoed, never '*' (issue #38).
  assert.equal(r.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  assert.match(r.headers.get('access-control-allow-methods'), /POST/);
  assert.match(r.headers.get('access-control-allow-headers'), /authorization/);
});

test('HEAD / and GET / say the server is running; /api/version answers', async () => {
  const head = await fetch(`${server.url}/`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await (await fetch(`${server.url}/`)).text(), 'Ollama is running');
  const v = await (await fetch(`${server.url}/api/version`)).json();
  assert.match(v.version, /^\d+\.\d+\.\d+$/);
});

test('a client that disconnects mid-stream cancels its session (B21)', async () => {
  const ac = new AbortController();
  const res = await postJson(
    server.url, '/api/chat',
    { model: MODEL, messages: [{ role: 'user', content: 'write a long essay' }], options: { num_predict: 100000 } },
    { signal: ac.signal },
  );
  const reader = res.body.getReader();
  await reader.read();
  ac.abort();
  const gone = await until(async () => (await (await fetch(`${server.url}/api/ps`)).json()).sessions.length === 0, 20000);
  assert.ok(gone, 'the session ended after the client left');
});

test('/api/ps keeps Superfluid sessions and worker beside the Ollama fields', async () => {
  const ps = await (await fetch(`${server.url}/api/ps`)).json();
  const m = ps.models[0];
  assert.equal(m.name, `${MODEL}:latest`);
  for (const k of ['model', 'size', 'digest', 'details', 'expires_at', 'size_vram', 'context_length', 'path', 'parallel', 'worker'])
    assert.ok(k in m, `models[0].${k}`);
  assert.equal(m.context_length, 256);
  assert.ok(Array.isArray(ps.sessions));
});
