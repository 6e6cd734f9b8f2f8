// Limits of a server open to many clients (issue #20): the connection limit (--http-threads)
// answered with 503 + Retry-After in each API's shape, not a silent wait; --api-key; the warning
// for a non-loopback bind without a key; oversized headers, a long unknown path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, until } from '../lib/server.mjs';

/** One HTTP/1.1 request on a fresh connection: resolves { status, headers, body } (raw). */
function rawRequest(port, head, body = '') {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    let data = '';
    s.on('data', (d) => (data += d));
    s.on('error', reject);
    s.on('close', () => {
      const [h, ...rest] = data.split('\r\n\r\n');
      const lines = h.split('\r\n');
      const headers = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number((lines[0] || '').split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
    s.write(head + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` + body);
  });
}

const chat = JSON.stringify({ model: 'm', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
const post = (port, path, body, extra = '') =>
  rawRequest(port, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}`, body);

test('over --http-threads connections: 503 with Retry-After in each API\'s shape, served again once they close', async () => {
  const server = await startServer(['--http-threads', '4']);
  const streams = new AbortController();
  try {
    // Four long streams hold the four connections.
    const long = JSON.stringify({ model: 'm', stream: true, max_tokens: 100000, ignore_eos: true, messages: [{ role: 'user', content: 'go' }] });
    const held = [];
    for (let i = 0; i < 4; ++i) {
      const res = await fetch(`${server.baseURL}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: long, signal: streams.signal });
      assert.equal(res.status, 200);
      const reader = res.body.getReader();
      await reader.read();
      held.push(reader);
    }
    const openai = await post(server.port, '/v1/chat/completions', chat);
    assert.equal(openai.status, 503, openai.body);
    assert.equal(openai.headers['retry-after'], '1');
    assert.equal(JSON.parse(openai.body).error.code, 'too_many_connections');
    const anthropic = await post(server.port, '/v1/messages', chat);
    assert.equal(anthropic.status, 529, anthropic.body);
    assert.equal(JSON.parse(anthropic.body).error.type, 'overloaded_error');
    const ollama = await post(server.port, '/api/chat', chat);
    assert.equal(ollama.status, 503, ollama.body);
    assert.equal(typeof JSON.parse(ollama.body).error, 'string');
    const m = await rawRequest(server.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    assert.equal(m.status, 503, 'even /metrics waits for a free connection');
    // The streams end: new connections are served again, and /metrics counts the refusals.
    streams.abort();
    const served = await until(async () => (await post(server.port, '/v1/chat/completions', chat)).status === 200, 20000);
    assert.ok(served, 'served after the streams closed');
    // (/metrics may itself be refused while the aborted streams' threads notice their clients left.)
    const metrics = await until(async () => {
      const m = await server.metrics().catch(() => ({}));
      return m.http_connections_refused_total !== undefined && m;
    }, 20000);
    assert.ok(metrics.http_connections_refused_total >= 4, JSON.stringify(metrics));
    assert.ok(metrics.http_connections_accepted_total >= 5);
  } finally {
    streams.abort();
    await server.stop();
  }
});

test('--api-key: every API route asks for one of the keys, in its own shape; /health does not', async () => {
  const server = await startServer(['--api-key', 'k1', '--api-key', 'k2']);
  try {
    const none = await post(server.port, '/v1/chat/completions', chat);
    assert.equal(none.status, 401);
    assert.equal(JSON.parse(none.body).error.code, 'invalid_api_key');
    const wrong = await post(server.port, '/v1/chat/completions', chat, 'Authorization: Bearer nope\r\n');
    assert.equal(wrong.status, 401);
    const ok = await post(server.port, '/v1/chat/completions', chat, 'Authorization: Bearer k1\r\n');
    assert.equal(ok.status, 200, ok.body);
    const ant = await post(server.port, '/v1/messages', chat);
    assert.equal(ant.status, 401);
    assert.equal(JSON.parse(ant.body).error.type, 'authentication_error');
    const antOk = await post(server.port, '/v1/messages', chat, 'x-api-key: k2\r\n');
    assert.equal(antOk.status, 200, antOk.body);
    const oll = await post(server.port, '/api/chat', chat);
    assert.equal(oll.status, 401);
    assert.equal(typeof JSON.parse(oll.body).error, 'string');
    const models = await rawRequest(server.port, 'GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    assert.equal(models.status, 401);
    assert.equal((await rawRequest(server.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')).status, 200);
  } finally {
    await server.stop();
  }
});

test('a bind beyond loopback without --api-key is warned about; with a key it is not', async () => {
  const open = await startServer(['--host', '0.0.0.0']);
  try {
    assert.match(open.log(), /WARN serve: listening on 0\.0\.0\.0, beyond this machine, with no --api-key/);
  } finally {
    await open.stop();
  }
  const keyed = await startServer(['--host', '0.0.0.0', '--api-key', 'k']);
  try {
    assert.doesNotMatch(keyed.log(), /with no --api-key/);
  } finally {
    await keyed.stop();
  }
});

test('oversized headers get a clear 400 in OpenAI\'s shape; a long unknown path is not echoed whole', async () => {
  const server = await startServer();
  try {
    const big = await rawRequest(server.port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(10000)}\r\n`);
    assert.equal(big.status, 400);
    assert.match(JSON.parse(big.body).error.message, /headers cannot be read/);
    const many = await rawRequest(server.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n' + Array.from({ length: 150 }, (_, i) => `X-H${i}: v\r\n`).join(''));
    assert.equal(many.status, 400);
    const long404 = await rawRequest(server.port, `GET /${'b'.repeat(5000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    assert.equal(long404.status, 404);
    assert.ok(long404.body.length < 600, 'a long unknown path is not echoed whole');
    assert.equal((await rawRequest(server.port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')).status, 200, 'still serving');
  } finally {
    await server.stop();
  }
});

test('clients that send their headers or their body one byte a second get 408 and are closed at --header-timeout, freeing their threads; a keep-alive client is unaffected', async () => {
  // --http-threads 4: four slow clients would hold every connection slot without the deadline.
  const server = await startServer(['--http-threads', '4', '--header-timeout', '3']);
  try {
    const head = 'POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n';
    // Slow headers: the request line and headers a byte a second. Slow body: the headers at
    // once (Content-Length 100: an allowance of the timeout plus ~2 ms), then the body so.
    const slowBody = `${head}Content-Length: 100\r\n\r\n`;
    const slow = (prefix = '', text = head) =>
      new Promise((resolve) => {
        const s = net.connect(server.port, '127.0.0.1');
        const t0 = Date.now();
        let data = '';
        let i = 0;
        // The first byte at once (a connection that sends nothing is closed by keep-alive).
        s.write(prefix + text[i++]);
        const timer = setInterval(() => i < text.length && s.write(text[i++]), 1000);
        s.on('data', (d) => (data += d));
        s.on('error', () => {});
        s.on('close', () => {
          clearInterval(timer);
          resolve({ data, ms: Date.now() - t0, sent: i });
        });
      });
    // The harness's /health polls left a keep-alive connection: it closes after 1 s idle
    // (keep-alive is half the header timeout), then the four slow clients take every slot.
    await new Promise((r) => setTimeout(r, 1500));
    const slows = await Promise.all([slow(), slow(), slow(slowBody, chat), slow(slowBody, chat)]);
    for (const r of slows) {
      assert.ok(r.sent < 20, `closed after ${r.sent} slow bytes; server:\n${server.log().split('\n').filter((l) => / http: /.test(l)).slice(-10).join('\n')}`);
      assert.ok(r.ms >= 2500 && r.ms < 15000, `closed after ${r.ms} ms: ${r.data}`);
      assert.match(r.data, /^HTTP\/1\.1 408 /);
      const body = JSON.parse(r.data.split('\r\n\r\n')[1]);
      assert.equal(body.error.code, 'request_timeout');
    }
    // Their threads are free: a request is served, not refused for want of a connection slot
    // (a thread counts as free once httplib has closed its socket, just after the client saw
    // the close: a client that honours Retry-After gets in).
    let ok;
    await until(async () => {
      ok = await rawRequest(server.port, 'POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n', chat);
      return ok.status !== 503;
    }, 5000, 100);
    assert.equal(ok.status, 200, ok.body);
    // A keep-alive client that waits between requests is closed quietly by keep-alive, never
    // answered a 408 it did not ask for; its next request on a new connection works.
    const r1 = await fetch(`${server.url}/health`);
    assert.equal(r1.status, 200);
    await new Promise((r) => setTimeout(r, 4000));
    const r2 = await fetch(`${server.url}/health`);
    assert.equal(r2.status, 200);
    const m = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(m, /superfluid:http_header_timeouts_total 4\b/);
  } finally {
    await server.stop();
  }
});

test('a stream that lasts longer than --header-timeout is not cut: the deadline waits for the next request, after the streamed body', async () => {
  // httplib logs a response (where the deadline was re-armed) before it writes a streamed body,
  // so an SSE stream longer than the header timeout used to end in an injected 408.
  const server = await startServer(['--header-timeout', '2']);
  try {
    const body = { messages: [{ role: 'user', content: 'Tell a long story.' }], max_tokens: 3000, ignore_eos: true, stream: true };
    const t0 = Date.now();
    const res = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(res.status, 200);
    const text = await res.text();
    const ms = Date.now() - t0;
    assert.ok(ms > 2500, `the stream outlasted the 2 s header timeout (${ms} ms)`);
    assert.doesNotMatch(text, /request_timeout|HTTP\/1\.1 408/);
    assert.match(text, /data: \[DONE\]\n\n$/);
    const usage = text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6))).filter((j) => j.usage).at(-1);
    assert.equal(usage?.usage?.completion_tokens ?? 3000, 3000);
    // The same keep-alive connection (undici reuses it) serves the next request at once.
    const again = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat });
    assert.equal(again.status, 200);
    assert.match(await (await fetch(`${server.url}/metrics`)).text(), /superfluid:http_header_timeouts_total 0\b/);
  } finally {
    await server.stop();
  }
});
