// Issue #38 item 5: one request must not end other clients' answers. Token ids a client gives
// (Ollama's generate `context`) are checked against the model's vocabulary: an id outside it is
// a 400 in the API's shape before anything is decoded, and a stream running at the same time
// completes untouched. On the code before, `"context":[2000000000]` was accepted, made
// llama_decode fail for the whole tick's batch, and the concurrent stream ended with "the engine
// failed to decode the batch". (That a failed batch is decoded again in halves, so only its
// culprit fails, is shown by the scheduler unit test AFailedDecodeFailsOnlyTheSequenceThatCausedIt.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';

let server;
const MODEL = 'tiny-qwen3-1';

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

// Reads an NDJSON stream line by line, calling `onLine(line, n)` for each parsed line.
async function eachLine(res, onLine) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let n = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (line.trim()) await onLine(JSON.parse(line), ++n);
    }
  }
  return n;
}

test('an out-of-vocabulary id in context: 400 in Ollama shape, a concurrent stream completes', async () => {
  const N = 400;
  const res = await postJson(server.url, '/api/generate', {
    model: MODEL,
    prompt: 'Count to a thousand',
    options: { num_predict: N, temperature: 0, seed: 3 },
  });
  assert.equal(res.status, 200);
  const lines = [];
  let refusedAt = -1;
  let refusals = [];
  await eachLine(res, async (line, n) => {
    lines.push(line);
    if (n !== 2) return;
    // The stream has produced its first tokens: bad ids now, while it decodes.
    refusals = await Promise.all(
      [[2000000000], [1, 2, 151936], [-1], [2147483647]].map(async (context) => {
        const r = await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'hi', context, stream: false });
        return { context, status: r.status, body: await r.text() };
      }),
    );
    refusedAt = lines.length;
  });
  for (const r of refusals) {
    assert.equal(r.status, 400, `${JSON.stringify(r.context)}: ${r.body}`);
    const e = JSON.parse(r.body);
    assert.equal(typeof e.error, 'string', r.body);
    if (r.context[0] >= 0) assert.match(e.error, /outside this model's vocabulary/);
  }
  assert.ok(refusedAt > 0 && refusedAt < lines.length, 'the stream was still running when the refusals came');
  for (const l of lines) assert.equal(l.error, undefined, `the stream carried an error: ${JSON.stringify(l)}`);
  const last = lines.at(-1);
  assert.equal(last.done, true);
  assert.ok(['stop', 'length'].includes(last.done_reason), last.done_reason);
  if (last.done_reason === 'length') assert.equal(last.eval_count, N);
  assert.equal(server.proc.exitCode, null, 'the head is alive');
});

test('a valid context still continues a conversation', async () => {
  const one = await (await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'Hello', stream: false, options: { num_predict: 4 } })).json();
  assert.ok(Array.isArray(one.context) && one.context.length > 0);
  const r = await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'And?', context: one.context, stream: false, options: { num_predict: 4 } });
  assert.equal(r.status, 200, await r.clone().text());
  const next = await r.json();
  assert.deepEqual(next.context.slice(0, one.context.length), one.context);
});

test('token ids elsewhere: an OpenAI prompt of ids is a 400 in OpenAI shape', async () => {
  const r = await postJson(server.url, '/v1/completions', { prompt: [2000000000], max_tokens: 2 });
  assert.equal(r.status, 400);
  assert.equal((await r.json()).error.type, 'invalid_request_error');
});
