// Issue #38 item 1: no web page the user opens can drive the API. On the server before the origin
// policy every one of these was served: any Origin got `Access-Control-Allow-Origin: *`, a
// text/plain POST from http://evil.example got its completion, a cross-origin /api/pull pulled
// and DELETE /api/delete deleted, and `Host: evil.example` (DNS rebinding) was answered.
// The first server runs with default flags (what a user gets); the second names the two flags
// under test (--cors-origin, --allowed-host).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startServer } from '../lib/server.mjs';

let server;

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

const EVIL = 'http://evil.example';
const chat = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });

// A raw request (fetch cannot set Host): status, headers, body text.
function raw(srv, method, path, headers = {}, body = '') {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: srv.port, method, path, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a page of another origin gets 403 on generation, pull, delete and preflight, with no CORS header', async () => {
  const cases = [
    ['POST', '/v1/chat/completions', { origin: EVIL, 'content-type': 'text/plain' }, chat],
    ['POST', '/v1/chat/completions', { origin: EVIL, 'content-type': 'application/json' }, chat],
    ['POST', '/api/pull', { origin: EVIL, 'content-type': 'text/plain' }, JSON.stringify({ model: 'unsloth/x-GGUF:Q4_K_M', stream: false })],
    ['DELETE', '/api/delete', { origin: EVIL }, JSON.stringify({ model: 'anything' })],
    ['OPTIONS', '/v1/chat/completions', { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' }, ''],
    ['GET', '/api/ps', { origin: EVIL }, ''],
  ];
  for (const [method, path, headers, body] of cases) {
    const r = await raw(server, method, path, headers, body);
    assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    assert.equal(r.headers['access-control-allow-origin'], undefined, `${method} ${path}: no CORS header`);
    assert.match(r.text, /--cors-origin http:\/\/evil\.example/, 'the message names the flag');
    assert.ok(!r.text.includes('chat.completion'), 'nothing was generated');
  }
  // Each API's own error shape.
  const o = await raw(server, 'POST', '/api/chat', { origin: EVIL, 'content-type': 'application/json' }, '{}');
  assert.equal(typeof JSON.parse(o.text).error, 'string');
  const a = await raw(server, 'POST', '/v1/messages', { origin: EVIL, 'content-type': 'application/json' }, '{}');
  assert.equal(JSON.parse(a.text).type, 'error');
});

test('a DNS-rebound Host is refused while the server listens on loopback; loopback names are served', async () => {
  for (const host of ['evil.example', 'evil.example:8453', '10.0.0.5']) {
    const r = await raw(server, 'POST', '/v1/chat/completions', { host, 'content-type': 'application/json' }, chat);
    assert.equal(r.status, 403, `${host}: ${r.text}`);
    assert.match(r.text, /--allowed-host/);
  }
  for (const host of [`127.0.0.1:${server.port}`, `localhost:${server.port}`, 'app.localhost', `[::1]:${server.port}`]) {
    const r = await raw(server, 'GET', '/health', { host });
    assert.equal(r.status, 200, `${host}: ${r.text}`);
  }
});

test('allowed pages: the server\'s own origin and loopback origins, echoed with Vary; a browser\'s text/plain body is 415', async () => {
  for (const origin of [`http://127.0.0.1:${server.port}`, 'http://localhost:5173']) {
    const r = await raw(server, 'POST', '/v1/chat/completions', { origin, 'content-type': 'application/json' }, chat);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers['access-control-allow-origin'], origin);
    assert.match(r.headers.vary ?? '', /Origin/);
  }
  const t = await raw(server, 'POST', '/v1/chat/completions', { origin: 'http://localhost:5173', 'content-type': 'text/plain' }, chat);
  assert.equal(t.status, 415, t.text);
  assert.match(JSON.parse(t.text).error.message, /Content-Type: application\/json/);
  // Clients that are not browsers send no Origin: curl -d's form type still works (as Ollama's docs use it).
  const c = await raw(server, 'POST', '/v1/chat/completions', { 'content-type': 'application/x-www-form-urlencoded' }, chat);
  assert.equal(c.status, 200, c.text);
  assert.equal(c.headers['access-control-allow-origin'], undefined);
});

test('--cors-origin and --allowed-host allow what they name, and nothing else', async () => {
  const s = await startServer(['--cors-origin', 'https://app.example', '--allowed-host', 'box.lan']);
  try {
    const ok = await raw(s, 'POST', '/v1/chat/completions', { origin: 'https://app.example', 'content-type': 'application/json' }, chat);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers['access-control-allow-origin'], 'https://app.example');
    const pre = await raw(s, 'OPTIONS', '/v1/chat/completions', { origin: 'https://app.example', 'access-control-request-method': 'POST' });
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
    assert.equal((await raw(s, 'POST', '/v1/chat/completions', { origin: EVIL, 'content-type': 'application/json' }, chat)).status, 403);
    assert.equal((await raw(s, 'GET', '/health', { host: 'box.lan:8453' })).status, 200);
    assert.equal((await raw(s, 'GET', '/health', { host: 'other.lan' })).status, 403);
  } finally {
    await s.stop();
  }
});
