// Issue #38 item 2 (the part after unguessable ids): sessions belong to who made them. Listings
// (/api/ps, /ui/events, superfluid ps) show a session's id only to the key that made it and to
// an admin key; without keys they show none (a caller without a key cannot prove it made one).
// Every row keeps a ref (16 hex digits of SHA-256(id)) that grants nothing. With keys, reading,
// replaying and cancelling a session (and a stored Responses response) needs its id and the key
// that made it, or an admin key: another key gets the 404 an unknown id gets, and the session
// runs on. On the code before, /api/ps and /ui/events listed every running session's id to any
// caller and any key holder could read, replay and cancel any session by id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, runSuperfluid, sessionRef, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

const auth = (key) => (key ? { authorization: `Bearer ${key}` } : {});

// A long detached stream started with `key`: resolves { id, reader, abort }.
async function longSession(server, key, extra = {}) {
  const ac = new AbortController();
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...auth(key) },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true, ...extra }),
    signal: ac.signal,
  });
  assert.equal(res.status, 200);
  const id = res.headers.get('x-superfluid-session');
  assert.match(id, /^sess_/);
  const reader = res.body.getReader();
  await reader.read();
  return { id, reader, abort: () => ac.abort() };
}

const ps = async (server, key) => (await (await fetch(`${server.url}/api/ps`, { headers: auth(key) })).json()).sessions;

// The first /ui/events snapshot that lists `ref`.
async function uiRow(server, key, ref) {
  const ac = new AbortController();
  const res = await fetch(`${server.url}/ui/events`, { headers: auth(key), signal: ac.signal });
  try {
    for await (const f of sseFrames(res)) {
      const row = JSON.parse(f.data).sessions.find((x) => x.ref === ref);
      if (row) return row;
    }
  } finally {
    ac.abort();
  }
  return null;
}

test('without keys: listings carry refs and no ids; the id alone reads the session', async () => {
  const server = await startServer();
  const s = await longSession(server, null);
  try {
    const ref = sessionRef(s.id);
    const row = (await ps(server)).find((x) => x.ref === ref);
    assert.ok(row, 'the session is listed by its ref');
    assert.equal(row.id, undefined);
    assert.ok(!JSON.stringify(await ps(server)).includes(s.id), '/api/ps holds no id');
    const ui = await uiRow(server, null, ref);
    assert.ok(ui && ui.id === undefined && ui.owner === undefined, JSON.stringify(ui));
    const cli = await runSuperfluid(['ps', '--port', String(server.port)]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`^ref_${ref} `, 'm'), cli.stdout);
    assert.ok(!cli.stdout.includes(s.id));
    // Without keys the id is the capability (README, Security).
    assert.equal((await (await fetch(`${server.url}/v1/sessions/${s.id}`)).json()).status, 'running');
  } finally {
    s.abort();
    await server.stop();
  }
});

test('with keys: only the maker\'s key and an admin key see the id and may read, replay or cancel', async () => {
  const server = await startServer(['--api-key', 'key-a', '--api-key', 'key-b', '--admin-key', 'key-admin']);
  const s = await longSession(server, 'key-a');
  try {
    const ref = sessionRef(s.id);
    // Listings: A and the admin see the id, B only the ref.
    const rowOf = async (key) => (await ps(server, key)).find((x) => x.ref === ref);
    assert.equal((await rowOf('key-a')).id, s.id);
    assert.equal((await rowOf('key-admin')).id, s.id);
    const b = await rowOf('key-b');
    assert.ok(b, 'B sees the row');
    assert.equal(b.id, undefined, 'B sees no id');
    assert.equal((await uiRow(server, 'key-b', ref)).id, undefined);
    assert.equal((await uiRow(server, 'key-a', ref)).id, s.id);
    assert.equal((await uiRow(server, 'key-admin', ref)).id, s.id);
    for (const [env, shows] of [[{ SUPERFLUID_API_KEY: 'key-b' }, false], [{ SUPERFLUID_ADMIN_KEY: 'key-admin' }, true]]) {
      const cli = await runSuperfluid(['ps', '--port', String(server.port)], { ...process.env, ...env });
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(cli.stdout.includes(s.id), shows, cli.stdout);
    }

    // B, holding the id: the 404 of an unknown session for the state, the replay and cancel.
    const get = (path, key, init = {}) => fetch(`${server.url}${path}`, { ...init, headers: auth(key) });
    for (const [path, init] of [[`/v1/sessions/${s.id}`, {}], [`/v1/sessions/${s.id}/events`, {}], [`/v1/sessions/${s.id}/cancel`, { method: 'POST' }]]) {
      const r = await get(path, 'key-b', init);
      assert.equal(r.status, 404, `${init.method ?? 'GET'} ${path} as B`);
      assert.equal((await r.json()).error.code, 'session_not_found');
    }
    assert.equal((await (await get(`/v1/sessions/${s.id}`, 'key-a')).json()).status, 'running', 'B\'s cancel did nothing');
    assert.equal((await (await get(`/v1/sessions/${s.id}`, 'key-admin')).json()).status, 'running');
    // The maker cancels it.
    const c = await get(`/v1/sessions/${s.id}/cancel`, 'key-a', { method: 'POST' });
    assert.equal(c.status, 200);
    assert.equal((await c.json()).status, 'cancelled');
  } finally {
    s.abort();
    await server.stop();
  }
});

test('with keys: a stored Responses response is another key\'s 404', async () => {
  const server = await startServer(['--api-key', 'key-a', '--api-key', 'key-b']);
  try {
    const r = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth('key-a') },
      body: JSON.stringify({ input: 'hi', max_output_tokens: 4, store: true }),
    });
    assert.equal(r.status, 200, await r.clone().text());
    const id = (await r.json()).id;
    const as = async (key) => (await fetch(`${server.url}/v1/responses/${id}`, { headers: auth(key) })).status;
    assert.ok(await until(async () => (await as('key-a')) === 200, 5000), 'the maker reads it');
    assert.equal(await as('key-b'), 404);
  } finally {
    await server.stop();
  }
});
