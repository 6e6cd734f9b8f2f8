// The head supervises its worker and shuts down cleanly: a killed or hung worker never hangs a
// client, and SIGTERM ends running requests promptly (in-band error + [DONE] for streams).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until } from '../lib/server.mjs';

const workerPid = (server) => Number([...server.log().matchAll(/worker started, pid (\d+)/g)].at(-1)[1]);

// Reads the rest of an SSE stream; returns its data payloads.
async function restOfSSE(reader) {
  let text = '';
  const dec = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value);
  }
  return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
}

function chat(server, body) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long story.' }], ...body }),
  });
}

// Streams every request at once; returns each one's joined text and whether any error event came.
// onProgress(n, accepted): n text deltas received so far, accepted: every stream was answered 200.
async function runAll(server, bodies, onProgress) {
  let received = 0;
  let accepted = 0;
  return Promise.all(
    bodies.map(async (body) => {
      const res = await chat(server, { ...body, stream: true });
      assert.equal(res.status, 200);
      accepted++;
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      let text = '';
      let error = null;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n\n')) >= 0) {
          // A frame may carry an `id:` line (the journal's event id) before its data.
          const frame = buf.slice(0, nl).split('\n').find((l) => l.startsWith('data: ')) ?? '';
          buf = buf.slice(nl + 2);
          if (!frame.startsWith('data: ') || frame === 'data: [DONE]') continue;
          const j = JSON.parse(frame.slice(6));
          if (j.error) error = j.error;
          // The answer as the model wrote it: reasoning (Qwen3 may open a think block) + content.
          const d = (j.choices?.[0]?.delta?.reasoning_content ?? '') + (j.choices?.[0]?.delta?.content ?? '') || undefined;
          if (d) {
            text += d;
            if (onProgress) onProgress(++received, accepted === bodies.length);
          }
        }
      }
      return { text, error };
    }),
  );
}

test('a worker killed twice mid-stream: every stream continues and equals the uninterrupted run', async () => {
  const server = await startServer();
  try {
    const bodies = [];
    for (let i = 0; i < 8; i++) {
      const seeded = i % 2 === 1;
      bodies.push({
        messages: [{ role: 'user', content: `Story number ${i}, please.` }],
        // Long enough that the kill points come after every stream was accepted even when a
        // loaded CI machine accepts the last one late (48 tokens once ended first).
        max_tokens: 96,
        ignore_eos: true,
        temperature: seeded ? 1.0 : 0,
        seed: seeded ? 100 + i : undefined,
      });
    }
    const reference = await runAll(server, bodies);
    for (const r of reference) assert.equal(r.error, null);

    const startsBefore = (await server.metrics()).worker_starts_total;
    // After this many delivered text deltas, kill the worker (greedy streams here answer in
    // whitespace, which the chat parser holds back: fewer deltas than tokens).
    const kills = [40, 120];
    // Not before every stream was accepted: a request that arrives while the worker restarts is
    // answered 503 (retry), which is not what this test is about (a slow build, the sanitizers',
    // may accept the last ones late).
    const crashed = await runAll(server, bodies, (n, allAccepted) => {
      if (n >= kills[0] && allAccepted) {
        kills.shift();
        try {
          process.kill(workerPid(server), 'SIGKILL');
        } catch {}
      }
    });
    assert.equal(kills.length, 0, 'both kills happened mid-run');
    for (let i = 0; i < bodies.length; i++) {
      assert.equal(crashed[i].error, null, `stream ${i} saw no error`);
      assert.equal(crashed[i].text, reference[i].text, `stream ${i} equals the uninterrupted text`);
    }
    assert.equal((await server.metrics()).worker_starts_total - startsBefore, 2);
  } finally {
    await server.stop();
  }
});

test('a hung worker is killed by the watchdog: requests fail instead of hanging, then service resumes', async () => {
  const server = await startServer();
  try {
    const hung = workerPid(server);
    process.kill(hung, 'SIGSTOP');
    const res = await chat(server, { max_tokens: 3 });
    assert.ok(res.status >= 500, `status ${res.status}`);
    const body = await res.json();
    assert.equal(typeof body.error.message, 'string');
    assert.equal(await until(async () => (await fetch(`${server.url}/health`)).status === 200, 60000), true);
    assert.notEqual(workerPid(server), hung);
    assert.match(server.log(), /has not answered for \d+ s: killing it/);
    assert.equal((await chat(server, { max_tokens: 3 })).status, 200);
  } finally {
    await server.stop();
  }
});

test('SIGTERM ends running requests promptly: streams get an error and [DONE], others a 503', async () => {
  const server = await startServer();
  const streamed = chat(server, { stream: true, max_tokens: 100000 });
  const plain = chat(server, { max_tokens: 100000 });
  const res = await streamed;
  const reader = res.body.getReader();
  await reader.read();
  await until(async () => (await server.metrics()).num_requests_running === 2, 20000, 20);
  const t0 = Date.now();
  const exited = new Promise((r) => server.proc.once('exit', r));
  server.proc.kill('SIGTERM');
  const data = await restOfSSE(reader);
  assert.equal(data.at(-1), '[DONE]');
  assert.match(JSON.parse(data.at(-2)).error.message, /shutting down/);
  const p = await plain;
  assert.equal(p.status, 503);
  assert.match((await p.json()).error.message, /shutting down/);
  const code = await exited;
  assert.equal(code, 0);
  // It did not wait for the interrupted generations (each could run to its 32,768-token context):
  // a liveness bound, not a speed claim.
  assert.ok(Date.now() - t0 < 30000);
});

test('a form-encoded body over 1 MiB is read as JSON, not refused as a form (413)', async () => {
  const server = await startServer();
  try {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'x '.repeat(600000) }] });
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    // The JSON was parsed: the prompt (600,000 words) is then too long for the default context.
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, 'context_length_exceeded');
    // Errors httplib produces itself carry exactly one CORS origin header (an allowed page's).
    const nf = await fetch(`${server.url}/nope`, { headers: { Origin: 'http://localhost:5173' } });
    assert.equal(nf.headers.get('access-control-allow-origin'), 'http://localhost:5173');
  } finally {
    await server.stop();
  }
});
