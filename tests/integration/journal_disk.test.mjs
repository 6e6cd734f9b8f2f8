// The journal's disk failing under a running server (issue #20): the state directory on a small
// ext4 file system (a loop device) that (1) fills up, and (2) turns read-only mid-stream the way
// ext4 does on a disk error (errors=remount-ro; the error is raised through the kernel's
// /sys/fs/ext4/<dev>/trigger_fs_error). Both are the real path: SQLite gets ENOSPC / EROFS.
// Affected streams end with an in-band error in their API's shape, no token reaches a client
// unjournaled, new requests are refused in their API's shape, the server keeps answering what
// needs no journal, and once the disk has room again new requests complete.
// Needs root, a loop device and mkfs.ext4; says SKIP and skips otherwise (CI runs as root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, openSync, closeSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startServer, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

const sh = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString().trim();

// Whether this machine can mount a loop device at all (root, loop devices, mkfs.ext4).
let canMount = process.getuid?.() === 0;
if (canMount) {
  try {
    smallDisk().unmount();
  } catch (e) {
    canMount = false;
    console.log(`SKIP: cannot mount a loop device here: ${String(e.stderr || e.message).trim()}`);
  }
} else {
  console.log('SKIP: the disk tests need root (a loop device and mount)');
}

/** A fresh 48 MiB ext4 file system mounted on a new folder: { dir, dev, unmount() }. */
function smallDisk() {
  const root = mkdtempSync(join(tmpdir(), 'sf-disk-'));
  const img = join(root, 'disk.img');
  const dir = join(root, 'mnt');
  mkdirSync(dir);
  sh('truncate', ['-s', '48M', img]);
  sh('mkfs.ext4', ['-q', '-F', '-m', '0', img]);
  sh('mount', ['-o', 'loop,errors=remount-ro', img, dir]);
  const dev = basename(sh('findmnt', ['-n', '-o', 'SOURCE', dir]));
  return {
    dir,
    dev,
    unmount() {
      try {
        sh('umount', ['-l', dir]);
      } catch {}
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Writes a file that takes all the free space left on the file system of `dir`. */
function fill(dir) {
  const f = join(dir, 'filler');
  const fd = openSync(f, 'w');
  const chunk = Buffer.alloc(1 << 20, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if (e.code !== 'ENOSPC') throw e;
  }
  for (const size of [65536, 4096, 512]) {
    try {
      for (;;) writeSync(fd, chunk.subarray(0, size));
    } catch {}
  }
  closeSync(fd);
  return f;
}

const post = (server, path, body, headers = {}) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({ model: 'default', ...body }),
  });

const story = (i, n) => ({ messages: [{ role: 'user', content: `Story number ${i}, please.` }], max_tokens: n, ignore_eos: true, stream: true });

/** Reads an OpenAI chat stream: { content, reasoning, error, done, chunks }; onChunk(count) per delta. */
async function readChat(res, onChunk) {
  const out = { content: '', reasoning: '', error: null, done: false, chunks: 0 };
  for await (const { data } of sseFrames(res)) {
    if (data === '[DONE]') {
      out.done = true;
      continue;
    }
    const j = JSON.parse(data);
    if (j.error) out.error = j.error;
    const d = j.choices?.[0]?.delta ?? {};
    out.content += d.content ?? '';
    out.reasoning += d.reasoning_content ?? '';
    if (d.content || d.reasoning_content) out.chunks++;
    if (onChunk) onChunk(out.chunks);
  }
  return out;
}

/** The state the head holds of a session equals what its client received. */
async function assertJournaledAsDelivered(server, session, got) {
  const st = await (await fetch(`${server.url}/v1/sessions/${session}`)).json();
  assert.equal(st.text ?? '', got.content, 'the client received exactly the journaled text');
  assert.equal(st.reasoning ?? '', got.reasoning);
}

/** Requests that need no journal still answer: health, the model list. */
async function assertStillServing(server) {
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  const models = await fetch(`${server.url}/v1/models`);
  assert.equal(models.status, 200);
  assert.ok((await models.json()).data.length >= 1);
}

/** A new request on each API is refused (or its stream ends) with a journal error in that API's shape. */
async function assertRefusedInEachApisShape(server) {
  const chat = await post(server, '/v1/chat/completions', { ...story(7, 20), stream: false });
  assert.ok(chat.status >= 500 && chat.status < 600, `openai status ${chat.status}`);
  const cj = await chat.json();
  assert.match(cj.error?.message ?? '', /journal/, JSON.stringify(cj));

  const anth = await post(server, '/v1/messages', { messages: [{ role: 'user', content: 'Hi' }], max_tokens: 20 });
  assert.ok(anth.status >= 500 && anth.status < 600, `anthropic status ${anth.status}`);
  const aj = await anth.json();
  assert.equal(aj.type, 'error', JSON.stringify(aj));
  assert.match(aj.error?.message ?? '', /journal/);

  const oll = await post(server, '/api/chat', { messages: [{ role: 'user', content: 'Hi' }], stream: false, options: { num_predict: 20 } });
  assert.ok(oll.status >= 500 && oll.status < 600, `ollama status ${oll.status}`);
  const oj = await oll.json();
  assert.equal(typeof oj.error, 'string', JSON.stringify(oj));
  assert.match(oj.error, /journal/);
}

/**
 * After the journal's disk failed mid-stream: the stream ended with an in-band journal error,
 * the client got exactly what was journaled, the server still answers what needs no journal and
 * refuses new requests in each API's shape, and the head is still running.
 */
async function assertFailedCleanly(server, session, got) {
  assert.equal(got.done, true);
  assert.ok(got.error, 'an in-band error ends the stream');
  assert.match(got.error.message, /journal cannot be written/);
  await assertJournaledAsDelivered(server, session, got);
  await assertStillServing(server);
  await assertRefusedInEachApisShape(server);
  assert.equal(server.proc.exitCode, null, 'the head is still running');
}

test('disk full: the running stream ends with a journal error, nothing unjournaled is delivered, new requests are refused in their API shape, and after space is freed requests complete', { skip: !canMount }, async () => {
  const disk = smallDisk();
  const server = await startServer([], { stateDir: join(disk.dir, 'state') });
  try {
    // Warm: one request completes on the healthy disk.
    const warm = await readChat(await post(server, '/v1/chat/completions', story(0, 8)));
    assert.equal(warm.done, true);
    assert.equal(warm.error, null);

    let filler = null;
    const res = await post(server, '/v1/chat/completions', story(1, 100000));
    assert.equal(res.status, 200);
    const session = res.headers.get('x-superfluid-session');
    const got = await readChat(res, (n) => {
      if (n === 20 && !filler) filler = fill(disk.dir); // the disk fills mid-stream
    });
    assert.ok(filler, 'the disk was filled mid-stream');
    await assertFailedCleanly(server, session, got);

    // Room again: the server serves new requests without a restart.
    rmSync(filler);
    await until(async () => {
      const r = await post(server, '/v1/chat/completions', { ...story(2, 8), stream: false });
      return r.status === 200;
    }, 30000, 500);
    const after = await readChat(await post(server, '/v1/chat/completions', story(3, 16)));
    assert.equal(after.done, true);
    assert.equal(after.error, null);
    assert.ok(after.content.length + after.reasoning.length > 0);
  } finally {
    await server.stop();
    disk.unmount();
  }
});

test('the journal turns read-only mid-stream (ext4 remount-ro on a disk error): streams end with an error in their API shape and the server keeps answering what needs no journal', { skip: !canMount }, async () => {
  const disk = smallDisk();
  const stateDir = join(disk.dir, 'state');
  const server = await startServer([], { stateDir });
  try {
    let broken = false;
    const res = await post(server, '/v1/chat/completions', story(4, 100000));
    assert.equal(res.status, 200);
    const session = res.headers.get('x-superfluid-session');
    const got = await readChat(res, (n) => {
      if (n === 20 && !broken) {
        writeFileSync(`/sys/fs/ext4/${disk.dev}/trigger_fs_error`, 'test');
        broken = true;
      }
    });
    assert.ok(broken);
    assert.match(sh('findmnt', ['-n', '-o', 'OPTIONS', disk.dir]), /\bro\b|emergency_ro/);
    await assertFailedCleanly(server, session, got);
  } finally {
    await server.stop();
    disk.unmount();
  }
});
