// Models from the hub (issue #8): `superfluid pull/list/rm` and `serve org/repo:TAG` against a
// stand-in hub on loopback (tests/lib/hub.mjs) serving tiny mkmodel GGUFs. Every test has its
// own HF_HOME and state directory.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, statSync, lstatSync, readlinkSync, mkdirSync, writeFileSync, symlinkSync, copyFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, model, startServer, until, runSuperfluid } from '../lib/server.mjs';
import { startHub } from '../lib/hub.mjs';

let hub;
let q4, q8, xl;
const REPO = 'test/Tiny-GGUF';

before(async () => {
  hub = await startHub();
  q4 = readFileSync(model({ seed: 1 }));
  q8 = readFileSync(model({ seed: 2 }));
  xl = readFileSync(model({ seed: 3 }));
  hub.addRepo(REPO, { 'Tiny-Q4_K_M.gguf': q4, 'Tiny-Q8_0.gguf': q8, 'Tiny-UD-Q4_K_XL.gguf': xl, 'README.md': Buffer.from('# tiny\n') }, { plain: ['README.md'] });
});
after(async () => hub?.close());

/** A fresh HF_HOME + state dir, and the environment that points superfluid at the stand-in. */
function sandbox(extra = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sf-hub-'));
  const env = { ...process.env, HF_ENDPOINT: hub.url, HF_HOME: join(dir, 'hf'), HF_TOKEN: 'hf_test_token', ...extra };
  delete env.HF_HUB_OFFLINE;
  return { dir, env, state: join(dir, 'state'), hubDir: join(dir, 'hf', 'hub') };
}

/** Runs superfluid asynchronously (the stand-in hub lives in this process's event loop). */
const sf = runSuperfluid;

const pull = (name, box) => sf(['pull', name, '--state-dir', box.state], box.env);
const sha = (b) => hub.sha256(b);
const repoDir = (box, repo = REPO) => join(box.hubDir, 'models--' + repo.replace('/', '--'));

test('a tag picks the quantization (case-insensitive) into the HF cache layout, with the index and list', async () => {
  const box = sandbox();
  hub.resetCounts();
  const r = await pull(`${REPO}:q8_0`, box);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pulled test\/Tiny-GGUF:Q8_0/);
  // blobs/<sha256>, snapshots/<commit>/<file> → ../../blobs/<sha256>, refs/main = commit
  const dir = repoDir(box);
  const commit = readFileSync(join(dir, 'refs', 'main'), 'utf8');
  assert.match(commit, /^[0-9a-f]{40}$/);
  const link = join(dir, 'snapshots', commit, 'Tiny-Q8_0.gguf');
  assert.ok(lstatSync(link).isSymbolicLink());
  assert.equal(readlinkSync(link), `../../blobs/${sha(q8)}`);
  assert.equal(statSync(join(dir, 'blobs', sha(q8))).size, q8.length);
  // Only that file was fetched; the bearer token went along.
  assert.equal(hub.served('Tiny-Q8_0.gguf'), q8.length);
  assert.equal(hub.served('Tiny-Q4_K_M.gguf'), 0);
  assert.ok(hub.requests.every((q) => q.authorization === 'Bearer hf_test_token'));
  const list = await sf(['list', '--state-dir', box.state], box.env);
  assert.match(list.stdout, /test\/Tiny-GGUF:Q8_0\s+[0-9a-f]{12}\s+15\.7 MiB/);
});

test('no tag picks the default order: Q4_K_M first, then UD-Q4_K_XL', async () => {
  const box = sandbox();
  const r = await pull(REPO, box);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pulled test\/Tiny-GGUF:Q4_K_M/);
  hub.addRepo('test/NoQ4KM-GGUF', { 'm-Q8_0.gguf': q8, 'm-UD-Q4_K_XL.gguf': xl });
  const r2 = await pull('test/NoQ4KM-GGUF', box);
  assert.equal(r2.code, 0, r2.stderr);
  assert.match(r2.stdout, /pulled test\/NoQ4KM-GGUF:UD-Q4_K_XL/);
});

test('a sharded GGUF is fetched whole, every shard verified and linked', async () => {
  const box = sandbox();
  const half = q4.length >> 1;
  const s1 = q4.subarray(0, half);
  const s2 = q4.subarray(half);
  hub.addRepo('test/Sharded-GGUF', {
    'Q4_K_M/Big-Q4_K_M-00001-of-00002.gguf': s1,
    'Q4_K_M/Big-Q4_K_M-00002-of-00002.gguf': s2,
    'Big-Q8_0.gguf': q8,
  });
  hub.resetCounts();
  const r = await pull('test/Sharded-GGUF:Q4_K_M', box);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /2 files/);
  assert.equal(hub.served('Q4_K_M/Big-Q4_K_M-00001-of-00002.gguf'), s1.length);
  assert.equal(hub.served('Q4_K_M/Big-Q4_K_M-00002-of-00002.gguf'), s2.length);
  assert.equal(hub.served('Big-Q8_0.gguf'), 0);
  const dir = repoDir(box, 'test/Sharded-GGUF');
  const commit = readFileSync(join(dir, 'refs', 'main'), 'utf8');
  // A file in a subdirectory links one level further up.
  assert.equal(readlinkSync(join(dir, 'snapshots', commit, 'Q4_K_M/Big-Q4_K_M-00002-of-00002.gguf')), `../../../blobs/${sha(s2)}`);
  // The engine loads the first shard (llama.cpp finds the others next to it).
  assert.match(r.stdout, /Big-Q4_K_M-00001-of-00002\.gguf\n$/);
});

test('a connection killed midway is resumed with a Range request: no byte is fetched twice', async () => {
  const box = sandbox();
  hub.addRepo('test/Flaky-GGUF', { 'f-Q4_K_M.gguf': q4 });
  hub.behave('f-Q4_K_M.gguf', { killAfter: 1_000_000, times: 1 });
  hub.resetCounts();
  const r = await pull('test/Flaky-GGUF', box);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /ended at byte 1000000 .*resuming/);
  const gets = hub.requests.filter((q) => q.url.includes('/resolve/'));
  assert.deepEqual(gets.map((q) => q.range), [undefined, 'bytes=1000000-']);
  assert.equal(hub.served('f-Q4_K_M.gguf'), q4.length);
  assert.equal(statSync(join(repoDir(box, 'test/Flaky-GGUF'), 'blobs', sha(q4))).size, q4.length);
});

test('Ctrl-C leaves a resumable partial file; the next pull fetches only the rest', async () => {
  const box = sandbox();
  hub.addRepo('test/Stall-GGUF', { 's-Q4_K_M.gguf': q4 });
  hub.behave('s-Q4_K_M.gguf', { stallAfter: 3_000_000, times: 1 });
  hub.resetCounts();
  const partial = join(repoDir(box, 'test/Stall-GGUF'), 'blobs', sha(q4) + '.incomplete');
  const r = await sf(['pull', 'test/Stall-GGUF', '--state-dir', box.state], box.env, {
    onSpawn: async (p) => {
      await until(() => existsSync(partial) && statSync(partial).size === 3_000_000, 30000, 20);
      p.kill('SIGINT');
    },
  });
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /interrupted; the partial download is kept/);
  assert.equal(statSync(partial).size, 3_000_000);
  const again = await pull('test/Stall-GGUF', box);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /resuming s-Q4_K_M\.gguf at byte 3000000/);
  assert.equal(hub.served('s-Q4_K_M.gguf'), q4.length);
  assert.equal(existsSync(partial), false);
});

test('a corrupt download is rejected by its SHA-256 and discarded', async () => {
  const box = sandbox();
  hub.addRepo('test/Corrupt-GGUF', { 'c-Q4_K_M.gguf': q4 });
  hub.behave('c-Q4_K_M.gguf', { corrupt: true });
  const r = await pull('test/Corrupt-GGUF', box);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`checksum mismatch for c-Q4_K_M\\.gguf: expected sha256 ${sha(q4)}`));
  const blobs = join(repoDir(box, 'test/Corrupt-GGUF'), 'blobs');
  assert.deepEqual(readdirSync(blobs), []); // neither the blob nor a partial file stays
  const list = await sf(['list', '--state-dir', box.state], box.env);
  assert.doesNotMatch(list.stdout, /Corrupt/);
});

test('a missing repository and a tag that matches nothing give clear errors', async () => {
  const box = sandbox();
  const r = await pull('test/Missing-GGUF:Q4_K_M', box);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /repository test\/Missing-GGUF not found on http:\/\/127\.0\.0\.1:\d+/);
  const t = await pull(`${REPO}:Q3_K_S`, box);
  assert.equal(t.code, 1);
  assert.match(t.stderr, /no GGUF file in test\/Tiny-GGUF matches the tag "Q3_K_S"; available quantizations: Q4_K_M, Q8_0, UD-Q4_K_XL/);
  const rev = await pull(`${REPO}:Q4_K_M@nope`, box);
  assert.match(rev.stderr, /revision "nope" not found in test\/Tiny-GGUF/);
});

test('files already in the HF cache (another tool downloaded them) are not fetched again; offline uses the cache', async () => {
  const box = sandbox();
  // Lay out the cache as huggingface_hub would, for the commit the hub serves.
  const commit = hub.addRepo('test/Cached-GGUF', { 'k-Q4_K_M.gguf': q4 });
  const dir = repoDir(box, 'test/Cached-GGUF');
  mkdirSync(join(dir, 'blobs'), { recursive: true });
  mkdirSync(join(dir, 'snapshots', commit), { recursive: true });
  mkdirSync(join(dir, 'refs'), { recursive: true });
  copyFileSync(model({ seed: 1 }), join(dir, 'blobs', sha(q4)));
  symlinkSync(`../../blobs/${sha(q4)}`, join(dir, 'snapshots', commit, 'k-Q4_K_M.gguf'));
  writeFileSync(join(dir, 'refs', 'main'), commit);
  hub.resetCounts();
  const r = await pull('test/Cached-GGUF:Q4_K_M', box);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(hub.served('k-Q4_K_M.gguf'), 0);
  // With the hub unreachable, the revision resolves from refs/main.
  const offline = { ...box, env: { ...box.env, HF_ENDPOINT: 'http://127.0.0.1:9' } };
  const o = await pull('test/Cached-GGUF', offline);
  assert.equal(o.code, 0, o.stderr);
  assert.match(o.stderr, /using the cached snapshot/);
});

test('two pulls of the same file at once download it once', async () => {
  const box = sandbox();
  hub.addRepo('test/Slow-GGUF', { 'w-Q4_K_M.gguf': q4 });
  hub.behave('w-Q4_K_M.gguf', { throttle: 1 << 20 }); // ~16 chunks, 50 ms apart
  hub.resetCounts();
  const [a, b] = await Promise.all([pull('test/Slow-GGUF', box), pull('test/Slow-GGUF', box)]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(b.code, 0, b.stderr);
  assert.match(a.stderr + b.stderr, /waiting for another download of w-Q4_K_M\.gguf/);
  assert.equal(hub.served('w-Q4_K_M.gguf'), q4.length);
});

test('rm removes the model, its snapshot entry and its blob', async () => {
  const box = sandbox();
  assert.equal((await pull(`${REPO}:Q8_0`, box)).code, 0);
  const r = await sf(['rm', `${REPO}:Q8_0`, '--state-dir', box.state], box.env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /deleted test\/Tiny-GGUF:Q8_0 \(15\.7 MiB freed\)/);
  assert.equal(existsSync(join(repoDir(box), 'blobs', sha(q8))), false);
  const again = await sf(['rm', `${REPO}:Q8_0`, '--state-dir', box.state], box.env);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /model 'test\/Tiny-GGUF:Q8_0' not found/);
});

test('formats without an engine here are refused, naming the engine', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-fmt-'));
  const mlx = join(dir, 'Qwen3-0.6B-4bit');
  mkdirSync(mlx);
  writeFileSync(join(mlx, 'config.json'), '{}');
  writeFileSync(join(mlx, 'model.safetensors'), 'x');
  const r = await sf(['serve', mlx, '--port', '1', '--state-dir', join(dir, 's')], process.env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is a model in the MLX \(config\.json \+ safetensors\) format: it needs the MLX engine, which this build does not include/);
  const base = join(dir, 'model.base');
  writeFileSync(base, 'x');
  const b = await sf(['serve', base, '--port', '1', '--state-dir', join(dir, 's')], process.env);
  assert.equal(b.code, 1);
  assert.match(b.stderr, /\.base package format: it needs the base engine/);
});

test('serve org/repo:TAG pulls and serves; /api/pull streams progress; /api/delete removes', async () => {
  const box = sandbox();
  Object.assign(process.env, { HF_ENDPOINT: hub.url, HF_HOME: box.env.HF_HOME });
  const server = await startServer([], { modelPath: `${REPO}:Q4_K_M` });
  try {
    const models = await (await fetch(`${server.baseURL}/models`)).json();
    assert.equal(models.data[0].id, 'test/Tiny-GGUF:Q4_K_M');
    const chat = await fetch(`${server.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/Tiny-GGUF:Q4_K_M', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 8 }),
    });
    assert.equal(chat.status, 200);
    const answer = await chat.json();
    assert.equal(answer.usage.completion_tokens > 0, true);

    // Streamed pull of another quant: Ollama's progress objects, in order.
    const res = await fetch(`${server.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: `${REPO}:Q8_0` }) });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /application\/x-ndjson/);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].status, 'pulling manifest');
    const dl = lines.filter((l) => l.status?.startsWith('downloading'));
    assert.ok(dl.length >= 2, JSON.stringify(lines));
    assert.equal(dl[0].digest, `sha256:${sha(q8)}`);
    assert.equal(dl.at(-1).total, q8.length);
    assert.equal(dl.at(-1).completed, q8.length);
    assert.ok(dl.every((l, i) => i === 0 || l.completed >= dl[i - 1].completed));
    assert.deepEqual(lines.slice(-3).map((l) => l.status), ['verifying sha256 digest', 'writing manifest', 'success']);

    const once = await fetch(`${server.url}/api/pull`, { method: 'POST', body: JSON.stringify({ name: `${REPO}:Q8_0`, stream: false }) });
    assert.deepEqual(await once.json(), { status: 'success' });
    const bad = await fetch(`${server.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: `${REPO}:Q1_0`, stream: false }) });
    assert.equal(bad.status, 404);
    assert.match((await bad.json()).error, /available quantizations: Q4_K_M, Q8_0, UD-Q4_K_XL/);
    const notjson = await fetch(`${server.url}/api/pull`, { method: 'POST', body: '{' });
    assert.equal(notjson.status, 400);
    // Issue #38: a revision that climbs out of the cache ("../") is refused before anything is
    // fetched or written (it named the ref file hf_cache writes).
    const climb = await fetch(`${server.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: `${REPO}:Q8_0@../../../escape`, stream: false }) });
    assert.equal(climb.status, 400);
    assert.equal(typeof (await climb.json()).error, 'string');
    assert.ok(!existsSync(join(box.env.HF_HOME, '..', '..', 'escape')) && !existsSync(join(box.env.HF_HOME, '..', 'escape')));

    // /api/tags: the served model, then the pulled ones.
    const tags = (await (await fetch(`${server.url}/api/tags`)).json()).models;
    assert.deepEqual(tags.map((m) => m.name), ['test/Tiny-GGUF:Q4_K_M', 'test/Tiny-GGUF:Q8_0']);
    assert.equal(tags[1].digest, sha(q8));
    assert.equal(tags[1].size, q8.length);
    assert.equal(tags[1].details.quantization_level, 'Q8_0');

    const del = await fetch(`${server.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: `${REPO}:Q8_0` }) });
    assert.equal(del.status, 200);
    const del2 = await fetch(`${server.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: `${REPO}:Q8_0` }) });
    assert.equal(del2.status, 404);
    assert.match((await del2.json()).error, /not found/);
    const after = (await (await fetch(`${server.url}/api/tags`)).json()).models;
    assert.deepEqual(after.map((m) => m.name), ['test/Tiny-GGUF:Q4_K_M']);
  } finally {
    await server.stop();
  }
});

test('serve with no model pulls the default model from the hub; unreachable, it serves the embedded test model and says so', async () => {
  const box = sandbox();
  hub.addRepo('unsloth/Qwen3-0.6B-GGUF', { 'Qwen3-0.6B-Q4_K_M.gguf': q4, 'Qwen3-0.6B-Q8_0.gguf': q8 });
  Object.assign(process.env, { HF_ENDPOINT: hub.url, HF_HOME: box.env.HF_HOME });
  // startServer passes its modelPath as the first argument; an empty string means "none".
  const server = await startServer([], { modelPath: '' });
  try {
    const models = await (await fetch(`${server.baseURL}/models`)).json();
    assert.equal(models.data[0].id, 'unsloth/Qwen3-0.6B-GGUF:Q4_K_M');
  } finally {
    await server.stop();
  }
  Object.assign(process.env, { HF_ENDPOINT: 'http://127.0.0.1:9', HF_HOME: join(box.dir, 'empty-hf') });
  const offline = await startServer([], { modelPath: '' });
  try {
    assert.match(offline.log(), /cannot pull the default model unsloth\/Qwen3-0\.6B-GGUF:Q4_K_M: cannot reach the hub/);
    assert.match(offline.log(), /embedded test model: it has random weights, so its answers are random text/);
    const models = await (await fetch(`${offline.baseURL}/models`)).json();
    assert.equal(models.data[0].id, 'superfluid-tiny');
  } finally {
    await offline.stop();
  }
});

test('run with a hub model not pulled yet pulls it first (progress here), starts the server, answers', async () => {
  const box = sandbox();
  const port = await freePort();
  const r = await sf(['run', `${REPO}:Q8_0`, 'hello', '--port', String(port), '--state-dir', box.state, '--max-tokens', '4'], box.env);
  const pid = Number(/pid (\d+)/.exec(r.stderr)?.[1]);
  try {
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pulled test\/Tiny-GGUF:Q8_0/, 'the pull reported in the terminal, before the server starts');
    assert.match(r.stderr, new RegExp(`starting \`superfluid serve \\S+ on 127\\.0\\.0\\.1:${port}`));
    assert.ok(r.stdout.split('\n').slice(2).join('\n').trim().length > 0, 'an answer follows');
    const models = await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json();
    assert.equal(models.data[0].id, 'test/Tiny-GGUF:Q8_0');
  } finally {
    if (pid) try { process.kill(pid, 'SIGTERM'); } catch {}
  }
});

test('a hostile listing: a digest or path that leaves the cache is skipped, a next page on another host is refused before the token goes there', async () => {
  // Entries whose blob name (the LFS digest or git oid) or path would write outside the cache.
  const repo = 'test/Hostile-GGUF';
  hub.addRepo(repo, { 'Ok-Q8_0.gguf': q8 });
  const outside = join(tmpdir(), `sf-hub-escape-${process.pid}`);
  hub.hostileListing(repo, {
    extra: [
      { type: 'file', path: 'Evil-Q4_K_M.gguf', size: 5, oid: 'b'.repeat(40), lfs: { oid: `../../../../../../..${outside}`, size: 5 } },
      { type: 'file', path: '../../Escape-Q4_K_M.gguf', size: 5, oid: 'c'.repeat(40) },
      { type: 'file', path: 42, size: 'big', oid: 'd'.repeat(40) },
    ],
  });
  const box = sandbox();
  const evil = await pull(`${repo}:Q4_K_M`, box);
  assert.notEqual(evil.code, 0, 'no such quantization among the safe files');
  assert.ok(!existsSync(outside), 'nothing written outside the cache');
  const ok = await pull(`${repo}:Q8_0`, box);
  assert.equal(ok.code, 0, ok.stderr);

  // A Link header that sends the next listing page (and the bearer token) to another host.
  let stolen = 0;
  const other = createServer((req, res) => {
    stolen++;
    res.end('[]');
  });
  await new Promise((r) => other.listen(0, '127.0.0.1', r));
  try {
    hub.hostileListing(repo, { link: `<http://127.0.0.1:${other.address().port}/api/models/${repo}/tree/x?cursor=2>; rel="next"` });
    const r = await pull(`${repo}:Q8_0`, sandbox());
    assert.notEqual(r.code, 0);
    assert.match(r.stderr + r.stdout, /next-page link to another host/);
    assert.equal(stolen, 0, 'the other host got no request');
  } finally {
    hub.hostileListing(repo, null);
    await new Promise((r) => other.close(r));
  }
});
