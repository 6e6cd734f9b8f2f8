// Idle and stalled connections do not decide who is served (issue #39): the head's HTTP server
// is event-driven, so a connection that sends nothing, or half a request and then nothing,
// holds a socket, not a thread. Default flags: --http-threads and --header-timeout are what a
// new user gets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, until } from '../lib/server.mjs';

const STALLED = 300;
const IDLE = 2000;

/**
 * Opens `n` connections, 100 at a time, each sending `first` (maybe nothing); with `answered`,
 * each batch waits for its answers (a keep-alive connection that served one request and waits
 * for the next; 100 at a time stays below --http-threads). Resolves the sockets.
 */
async function openMany(port, n, first, answered = false) {
  const socks = [];
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, () => new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => {
        if (first) s.write(first);
        if (!answered) resolve(s);
      });
      let got = '';
      const onData = (d) => {
        got += d;
        if (!/\r\n\r\n[\s\S]*\}/.test(got)) return;
        s.off('data', onData);
        if (!/^HTTP\/1\.1 200 /.test(got)) reject(new Error(`not served: ${got}`));
        resolve(s);
      };
      if (answered) s.on('data', onData);
      s.on('error', reject);
    }));
    socks.push(...(await Promise.all(batch)));
  }
  return socks;
}

/**
 * A streamed chat: resolves { status, ttftMs, itlMs, text }; itlMs is the mean time between
 * content chunks from the first to the last (chunks that arrive in one read share a time, so a
 * per-gap median would read 0 on the tiny model).
 */
async function streamChat(url, maxTokens) {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // Seeded: the stream beside the connections is the same stream as the one alone (the tiny
    // model's greedy answer is held back whole by the chat parser: it would not stream).
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Tell a story.' }], max_tokens: maxTokens, ignore_eos: true, seed: 7, stream: true }),
  });
  const times = [];
  let text = '';
  const dec = new TextDecoder();
  for await (const part of res.body) {
    const s = dec.decode(part);
    text += s;
    const n = (s.match(/"(content|reasoning_content)":"/g) || []).length;
    for (let i = 0; i < n; ++i) times.push(performance.now());
  }
  const itlMs = (times.at(-1) - times[0]) / Math.max(1, times.length - 1);
  return { status: res.status, ttftMs: times[0] - t0, itlMs, chunks: times.length, text };
}

test(`${STALLED} stalled and ${IDLE} idle keep-alive connections: a chat is answered at once, a stream keeps its ITL, slow clients still get 408`, async () => {
  const server = await startServer();
  const socks = [];
  try {
    // The reference: a stream's inter-token latency with no other connection open.
    const before = await streamChat(server.url, 64);
    assert.equal(before.status, 200);

    // Stalled: a request line and one header, then nothing (each holds a thread under a
    // thread-per-connection server). Idle: a keep-alive connection that answered one request
    // and waits for the next.
    socks.push(...(await openMany(server.port, STALLED, 'POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n')));
    const idle = await openMany(server.port, IDLE, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', true);
    socks.push(...idle);
    // Every connection accepted and every /health answered (the idle ones now wait for their
    // next request).
    let metrics = '';
    const settled = await until(async () => {
      metrics = await (await fetch(`${server.url}/metrics`)).text();
      const open = Number(/superfluid:http_connections_open (\d+)/.exec(metrics)?.[1]);
      const active = Number(/superfluid:http_requests_active (\d+)/.exec(metrics)?.[1]);
      return open >= STALLED + IDLE && active <= 1;
    }, 20000, 200);
    assert.ok(settled, `the server holds every connection open, idle\n${metrics}`);

    // A well-formed chat request is answered 200 within 1 s (the tiny model answers 4 tokens
    // in a few ms; a thread-per-connection server answered it 408 after 30 s).
    const t0 = performance.now();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    });
    const ms = performance.now() - t0;
    assert.equal(res.status, 200, await res.text());
    assert.ok(ms < 1000, `answered after ${ms.toFixed(0)} ms`);

    // A stream beside them keeps its inter-token latency (within noise: 3x its mean alone + 20 ms).
    const during = await streamChat(server.url, 64);
    assert.equal(during.status, 200);
    assert.match(during.text, /data: \[DONE\]\n\n$/);
    assert.equal(during.chunks, before.chunks, 'the same greedy stream');
    const [b, d] = [before.itlMs, during.itlMs];
    console.log(`mean ITL: ${b.toFixed(2)} ms alone, ${d.toFixed(2)} ms beside ${STALLED + IDLE} connections`);
    assert.ok(d <= 3 * b + 20, `ITL ${d.toFixed(2)} ms beside the connections vs ${b.toFixed(2)} ms alone`);

    // The stalled ones get 408 at the header timeout (30 s by default), the idle ones are not
    // answered anything they did not ask for.
    const answers = await Promise.all(socks.slice(0, STALLED).map((s) => new Promise((resolve) => {
      let data = '';
      s.on('data', (x) => (data += x));
      s.on('close', () => resolve(data));
    })));
    for (const a of answers) assert.match(a, /^HTTP\/1\.1 408 /);
    const m2 = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(m2, new RegExp(`superfluid:http_header_timeouts_total ${STALLED}\\b`));
    // An idle keep-alive connection still serves its next request.
    const again = await new Promise((resolve) => {
      let data = '';
      idle[0].on('data', (x) => {
        data += x;
        if (/\r\n\r\n[\s\S]*\}/.test(data)) resolve(data);
      });
      idle[0].write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    });
    assert.match(again, /^HTTP\/1\.1 200 /);
  } finally {
    for (const s of socks) s.destroy();
    await server.stop();
  }
});
