// The hot standby worker (issue #21, `serve --standby`): a second worker process, loaded and
// idle, takes over when the worker is SIGKILLed mid-stream; the streams equal the uninterrupted
// ones, the promoted process is the former standby (no cold start), and a new standby follows.
// Real `superfluid serve`, tiny model, raw HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until } from '../lib/server.mjs';
import { chatStream, sseFrames } from '../lib/sse.mjs';

const pids = (server, re) => [...server.log().matchAll(re)].map((m) => Number(m[1]));
const standbyPids = (server) => pids(server, /standby worker spawned, pid (\d+)/g);
const workerPid = (server) => pids(server, /worker started, pid (\d+)/g).at(-1);
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function stream(server, body, onToken = () => {}) {
  const { status, text, done, error } = await chatStream(server, body, onToken);
  assert.equal(status, 200);
  return { text, done, error };
}

const bodies = [0, 1, 2, 3].map((i) => ({
  messages: [{ role: 'user', content: `Tell story ${i} about a lighthouse.` }],
  max_tokens: 48,
  ignore_eos: true,
  temperature: i % 2 ? 0.9 : 0,
  seed: i % 2 ? 70 + i : undefined,
}));

test('--standby on: a worker SIGKILLed mid-stream is replaced by the loaded standby; streams equal the uninterrupted ones; a new standby follows', async () => {
  const server = await startServer(['--standby', 'on']);
  try {
    // The standby is spawned once the worker is ready, and waits loaded without listening.
    // It says so once loaded: then the gauge is 1.
    await until(async () => (await server.metrics()).worker_standby === 1, 30000);
    assert.match(server.log(), /standby: loaded, waiting to be promoted/);
    const standby = standbyPids(server)[0];
    assert.equal(standbyPids(server).length, 1);
    const first = workerPid(server);
    assert.notEqual(standby, first);
    const m0 = await server.metrics();
    assert.equal(m0.worker_standby, 1);
    assert.ok(m0.worker_standby_private_bytes > 0, 'the standby reports what it costs');
    assert.equal(m0.worker_standby_promotions_total, 0);

    const reference = await Promise.all(bodies.map((b) => stream(server, b)));
    for (const r of reference) assert.equal(r.error, null);

    let seen = 0;
    let killed = false;
    const crashed = await Promise.all(
      bodies.map((b) =>
        stream(server, b, () => {
          if (++seen === 30 && !killed) {
            killed = true;
            process.kill(first, 'SIGKILL');
          }
        }),
      ),
    );
    assert.ok(killed, 'the worker was killed mid-stream');
    for (let i = 0; i < bodies.length; i++) {
      assert.equal(crashed[i].error, null, `stream ${i}: no error`);
      assert.equal(crashed[i].done, true, `stream ${i}: [DONE]`);
      assert.equal(crashed[i].text, reference[i].text, `stream ${i} equals the uninterrupted text`);
    }
    // The worker now serving is the former standby: promoted, not a fresh process.
    assert.match(server.log(), new RegExp(`worker started, pid ${standby} \\(the standby, promoted\\)`));
    assert.equal(workerPid(server), standby);
    const m1 = await server.metrics();
    assert.equal(m1.worker_standby_promotions_total, 1);
    assert.equal(m1.worker_starts_total, 2);
    // A new standby is spawned in the background and loads.
    await until(() => standbyPids(server).length === 2, 30000);
    const next = standbyPids(server)[1];
    assert.ok(![first, standby].includes(next));
    await until(async () => (await server.metrics()).worker_standby === 1, 10000);

    // A standby killed while idle is replaced without touching the worker.
    process.kill(next, 'SIGKILL');
    await until(() => standbyPids(server).length === 3, 30000);
    assert.equal(workerPid(server), standby, 'the worker kept serving');
    const after = await stream(server, bodies[0]);
    assert.equal(after.text, reference[0].text);
  } finally {
    await server.stop();
  }
  // Stopping the head stops both processes; the idle standby did not remove the socket first.
  for (const pid of [...standbyPids(server), workerPid(server)]) assert.equal(alive(pid), false, `pid ${pid} exited`);
});

test('--standby on: no standby loads beside running sessions; it spawns and loads once the worker is idle', async () => {
  const server = await startServer(['--standby', 'on']);
  try {
    // A long stream from the start: the standby is due 2 s after the worker's start, and waits.
    const t0 = Date.now();
    const ctl = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: ctl.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
    });
    assert.equal(res.status, 200);
    const frames = sseFrames(res);
    await frames.next();
    const spawnedEarly = standbyPids(server).length;
    assert.equal(spawnedEarly, 0, `a standby was spawned before the stream began (${Date.now() - t0} ms after the server was up)`);
    await new Promise((r) => setTimeout(r, 5000));
    assert.equal(standbyPids(server).length, 0, 'no standby spawned while the stream ran');
    assert.equal((await server.metrics()).worker_standby, 0);
    ctl.abort();
    assert.ok(await until(async () => (await server.metrics()).worker_standby === 1, 30000), 'the standby loaded once the worker was idle');
    assert.equal(standbyPids(server).length, 1);
    assert.match(server.log(), /standby: loaded, waiting to be promoted/);
    const log = server.log();
    const at = (re) => log.match(re)?.[1];
    console.log(`worker started ${at(/(\S+) INFO head: worker started/)}, stream ${at(/(\S+) INFO http: POST/)}, standby spawned ${at(/(\S+) INFO head: standby worker spawned/)}`);
  } finally {
    await server.stop();
  }
});

test('--standby off: no standby process; a killed worker is restarted cold and the stream still completes', async () => {
  const server = await startServer(['--standby', 'off']);
  try {
    const reference = await stream(server, bodies[1]);
    let seen = 0;
    const first = workerPid(server);
    const crashed = await stream(server, bodies[1], () => {
      if (++seen === 10) process.kill(first, 'SIGKILL');
    });
    assert.equal(crashed.text, reference.text);
    assert.equal(standbyPids(server).length, 0);
    assert.doesNotMatch(server.log(), /the standby, promoted/);
    const m = await server.metrics();
    assert.equal(m.worker_standby, 0);
    assert.equal(m.worker_standby_promotions_total, 0);
    assert.equal(m.worker_starts_total, 2);
  } finally {
    await server.stop();
  }
});
