// Issue #38 item 9: a request body must keep a minimum rate (64 KiB/s on average, with one
// --header-timeout of slack), not a deadline stretched by the length it claims. On the code
// before, a body that claimed 32 MiB got the header timeout plus one second per 64 KiB (~9 min)
// however slowly it came, so a byte every few seconds held a connection thread that long; now it
// is answered 408 and closed one timeout after its headers, and others are served meanwhile.
// A large body sent steadily above the minimum rate is served even when it takes longer than
// the timeout.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startServer, until } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';

const TIMEOUT_S = 3;
let server;

before(async () => {
  server = await startServer(['--header-timeout', String(TIMEOUT_S)]);
});
after(async () => server && (await server.stop()));

const head = (length) =>
  `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

// Opens a connection, sends `head`, then calls `next(socket, i)` every `everyMs` until the
// socket closes (or `next` returns false). Resolves { data, ms } at the close.
function drip(headText, everyMs, next, limitMs = 60000) {
  return new Promise((resolve) => {
    const s = net.connect(server.port, '127.0.0.1');
    const t0 = Date.now();
    let data = '';
    let i = 0;
    s.write(headText);
    const timer = setInterval(() => {
      if (Date.now() - t0 > limitMs) return s.destroy();
      if (next(s, i++) === false) clearInterval(timer);
    }, everyMs);
    s.on('data', (d) => (data += d));
    s.on('error', () => {});
    s.on('close', () => {
      clearInterval(timer);
      resolve({ data, ms: Date.now() - t0 });
    });
  });
}

test('a body that claims 32 MiB and sends a byte every 2 s is closed with 408 within the window; others are served meanwhile', async () => {
  const claimed = 32 * 1024 * 1024 - 1024; // under --max-body-bytes: not a 413
  const slow = drip(head(claimed), 2000, (s) => s.write('{'), 60000);
  // While it trickles, another client is served.
  await new Promise((r) => setTimeout(r, 500));
  const t = Date.now();
  const ok = await postJson(server.url, '/v1/chat/completions', { max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(ok.status, 200, await ok.text());
  assert.ok(Date.now() - t < TIMEOUT_S * 1000, 'served while the slow body trickled');
  const r = await slow;
  assert.match(r.data, /^HTTP\/1\.1 408 /, r.data);
  assert.equal(JSON.parse(r.data.split('\r\n\r\n')[1]).error.code, 'request_timeout');
  // One timeout after the headers (the reaper looks every 200 ms), not ~9 minutes.
  assert.ok(r.ms >= TIMEOUT_S * 1000 - 200 && r.ms < TIMEOUT_S * 1000 + 3000, `closed after ${r.ms} ms`);
  assert.ok(await until(() => /its body at 65536 bytes\/s or faster/.test(server.log()), 5000), 'the 408 is logged');
});

test('a body sent steadily above the minimum rate is served though it takes longer than the timeout', async () => {
  // 64 KiB every 250 ms (256 KiB/s) for ~5 s: longer than --header-timeout 3, above 64 KiB/s.
  const pad = 'a'.repeat(64 * 1024);
  const parts = 20;
  const prefix = '{"max_tokens":2,"messages":[{"role":"user","content":"hi"}],"x_pad":"';
  const suffix = '"}';
  const length = prefix.length + parts * pad.length + suffix.length;
  let sent = 0;
  const r = await drip(head(length) + prefix, 250, (s) => {
    if (sent < parts) {
      s.write(pad);
      sent++;
      return true;
    }
    s.write(suffix);
    return false;
  });
  assert.ok(r.ms > TIMEOUT_S * 1000, `the body took ${r.ms} ms`);
  assert.match(r.data, /^HTTP\/1\.1 200 /, r.data.slice(0, 300));
});
