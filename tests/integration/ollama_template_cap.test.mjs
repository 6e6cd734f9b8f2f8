// Issue #38 item 6: each {{ .Prompt }} in an Ollama `template` copies the whole prompt; on the
// code before, a 111 KB body took the worker to 4.56 GB. The rendered template is now bounded
// (32 MiB, the default body limit: no larger than a prompt the client could send itself) and a
// body that would render to ~2 GB is a 400 in Ollama's shape, answered at once, with the head's
// memory high-water mark far below the amplified size; the server keeps serving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startServer } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';

let server;
const MODEL = 'tiny-qwen3-1';

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

const hwmBytes = (pid) => Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmHWM:\s+(\d+) kB/)[1]) * 1024;

test('a template that would copy a 100 KB prompt 20,000 times (~2 GB) is a 400, the head stays small', async () => {
  const prompt = 'p'.repeat(100 * 1024);
  const template = '{{ .Prompt }}'.repeat(20000);
  const body = { model: MODEL, prompt, template, stream: false, options: { num_predict: 2 } };
  assert.ok(JSON.stringify(body).length < 400 * 1024, 'a body well under the 32 MiB limit');
  const t0 = Date.now();
  const r = await postJson(server.url, '/api/generate', body);
  const text = await r.text();
  assert.equal(r.status, 400, text.slice(0, 300));
  assert.match(JSON.parse(text).error, /rendered template would be larger than 33554432 bytes/);
  assert.ok(Date.now() - t0 < 5000, `answered in ${Date.now() - t0} ms`);
  const hwm = hwmBytes(server.proc.pid);
  assert.ok(hwm < 600 * 1024 * 1024, `the head's peak memory is ${(hwm / 1048576).toFixed(0)} MiB`);
  // The server still serves, and a template within the bound renders as before.
  const ok = await postJson(server.url, '/api/generate', { model: MODEL, prompt: 'hi', template: '[U] {{ .Prompt }} [A] {{ .Response }}', stream: false, options: { num_predict: 2 } });
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal((await ok.json()).done, true);
});
