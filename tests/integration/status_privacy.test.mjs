// Issue #38 item 10: without --api-key any local user may ask the listings, so /api/ps (and
// /api/show's modelfile, /ui/events) give the model's file name, not its absolute path, and no
// worker pid. With --api-key every caller holds a key and sees both. `superfluid ps` still
// prints its table. On the code before, /api/ps without keys gave models[0].path absolute and
// models[0].worker.pid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basename, isAbsolute } from 'node:path';
import { startServer, runSuperfluid, model } from '../lib/server.mjs';
import { postJson } from '../lib/ndjson.mjs';
import { sseFrames } from '../lib/sse.mjs';

test('without --api-key: /api/ps, /api/show and /ui/events give the file name and no pid; superfluid ps works', async () => {
  const server = await startServer();
  try {
    const file = basename(model());
    const ps = await (await fetch(`${server.url}/api/ps`)).json();
    const m = ps.models[0];
    assert.equal(m.path, file, 'the file name only');
    assert.equal(m.worker.ready, true);
    assert.equal('pid' in m.worker, false, JSON.stringify(m.worker));

    const show = await (await postJson(server.url, '/api/show', { model: m.name })).json();
    assert.match(show.modelfile, new RegExp(`^FROM ${file.replace(/\./g, '\\.')}$`, 'm'));
    assert.doesNotMatch(show.modelfile, /FROM \//);

    const ac = new AbortController();
    const res = await fetch(`${server.url}/ui/events`, { signal: ac.signal });
    let snap;
    for await (const f of sseFrames(res)) {
      snap = JSON.parse(f.data);
      break;
    }
    ac.abort();
    assert.equal(snap.worker.up, true);
    assert.equal('pid' in snap.worker, false);

    const cli = await runSuperfluid(['ps', '--port', String(server.port)]);
    assert.equal(cli.code, 0, cli.stderr);
    const row = cli.stdout.split('\n')[1];
    assert.match(row, /\bready\b/, cli.stdout);
    assert.ok(row.trim().endsWith(file), cli.stdout);
    assert.doesNotMatch(cli.stdout, /\/tmp\//, 'no absolute path printed');
  } finally {
    await server.stop();
  }
});

test('with --api-key: a key holder sees the absolute path and the worker pid', async () => {
  const server = await startServer(['--api-key', 'k1']);
  try {
    const auth = { headers: { authorization: 'Bearer k1' } };
    assert.equal((await fetch(`${server.url}/api/ps`)).status, 401);
    const m = (await (await fetch(`${server.url}/api/ps`, auth)).json()).models[0];
    assert.ok(isAbsolute(m.path), m.path);
    assert.equal(m.path, model());
    assert.ok(m.worker.pid > 0, JSON.stringify(m.worker));
  } finally {
    await server.stop();
  }
});
