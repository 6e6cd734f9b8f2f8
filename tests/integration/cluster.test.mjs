// Cluster mode (issue #17): a head (`serve --cluster`, in the test's namespace, on a bridge)
// and guests (`superfluid join`, each in a network namespace of its own, joined to the bridge
// by a veth pair). Join with tokens, refusals (reused one-time token, wrong secret, wrong CA
// pin, expired token), streams spread over the nodes, a guest SIGKILLed mid-stream under
// concurrent streams (every stream completes with the reference text, journal indices
// contiguous), and a re-join by certificate after the guest restarts.
// Needs root and iproute2; prints SKIP (and the runner counts a skipped test) otherwise.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model, until, freePort, runSuperfluid, SUPERFLUID } from '../lib/server.mjs';
import { canMakeNamespaces, makeNetwork, hasNft } from '../lib/netns.mjs';
import { sseFrames } from '../lib/sse.mjs';

const hasNs = canMakeNamespaces();
if (!hasNs) console.log('SKIP: cluster tests need root and network namespaces (ip netns, veth, bridge)');
const nft = hasNs && hasNft();
if (hasNs && !nft) console.log('SKIP: the half-open link test needs nftables (nft)');
let hasSqlite = false;
try {
  execFileSync('sqlite3', ['-version']);
  hasSqlite = true;
} catch {}

const MAX_TOKENS = 160;
const modelPath = () => model({ seed: 3 });
let net = null;
let head = null;
let guestPort = 0;
const running = new Set(); // guest handles still alive, killed at the end

function startGuest(i, { token, stateDir, name }) {
  const args = ['join', `${net.hostIp}:${guestPort}`, '--state-dir', stateDir, '--model', modelPath(), '--parallel', '4',
    '--threads', '1', '--cache-dir', 'off'];
  if (token) args.push('--token', token);
  if (name) args.push('--name', name);
  const [cmd, argv] = net.exec(net.guests[i].ns, SUPERFLUID, args);
  // Its own process group: a kill reaches the join process and its worker, nothing else.
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const g = {
    proc,
    log: () => log,
    exited: new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal }))),
    kill() {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {}
    },
  };
  running.add(g);
  g.exited.then(() => running.delete(g));
  return g;
}

async function nodes() {
  return (await (await fetch(`${head.url}/api/nodes`)).json()).nodes;
}

const waitActive = (names, ms = 90000) =>
  until(async () => {
    const ns = await nodes();
    return names.every((n) => ns.some((x) => x.name === n && x.state === 'active')) && ns;
  }, ms, 200);

const story = (i) => ({
  messages: [{ role: 'user', content: `Tell story ${i} about the sea.` }],
  max_tokens: MAX_TOKENS,
  ignore_eos: true,
  temperature: 1.0,
  seed: 900 + i,
  stream: true,
});

async function stream(server, body, onFrame) {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const out = { session: res.headers.get('x-superfluid-session'), text: '', ids: [], error: null, done: false, stall: 0 };
  let last = Date.now();
  for await (const { id, data } of sseFrames(res)) {
    out.stall = Math.max(out.stall, Date.now() - last); // the longest wait between two frames
    last = Date.now();
    if (data === '[DONE]') {
      out.done = true;
      continue;
    }
    const j = JSON.parse(data);
    if (j.error) out.error = j.error;
    out.text += (j.choices?.[0]?.delta?.reasoning_content ?? '') + (j.choices?.[0]?.delta?.content ?? '');
    if (id) out.ids.push(id);
    onFrame?.();
  }
  return out;
}

let reference = null; // the one-node run of story(0..7), set by the kill test

/**
 * Every stream ended normally with the reference text and the reference's SSE ids, and the journal
 * holds indices 0..MAX_TOKENS-1 exactly once for its session.
 */
async function checkStreams(out, ref) {
  for (let i = 0; i < out.length; i++) {
    const o = out[i];
    assert.equal(o.error, null, `stream ${i}: no error`);
    assert.equal(o.done, true, `stream ${i}: [DONE]`);
    assert.equal(o.text, ref[i].text, `stream ${i}: the reference text`);
    const idx = o.ids.map((id) => Number(id.split(':')[1]));
    // The frames an uninterrupted run sends, id for id (a token whose text is held back — part
    // of a UTF-8 character, a possible stop string — sends no frame of its own there either).
    for (let k = 1; k < idx.length; k++) assert.ok(idx[k] > idx[k - 1], `stream ${i}: ids increase`);
    assert.deepEqual(o.ids, ref[i].ids.map((id) => id.replace(ref[i].session, o.session)), `stream ${i}: the reference's ids`);
    const st = await (await fetch(`${head.url}/v1/sessions/${o.session}`)).json();
    assert.equal(st.usage.completion_tokens, MAX_TOKENS);
    // The journal's record of where it ran: increasing epochs, each from a later token.
    o.placements = st.placements;
    assert.ok(st.placements.length >= 1, `stream ${i}: its placement is journaled`);
    assert.equal(st.placements[0].from_index, 0);
    st.placements.forEach((p, k) => {
      if (k === 0) return;
      assert.ok(p.epoch > st.placements[k - 1].epoch, `stream ${i}: placement epochs increase`);
      assert.ok(p.from_index >= st.placements[k - 1].from_index, `stream ${i}: resume points advance`);
    });
    if (hasSqlite) {
      const db = join(head.stateDir, 'journal.db');
      const q = `SELECT count(*), count(DISTINCT idx), min(idx), max(idx) FROM tokens WHERE session = '${o.session}'`;
      const got = execFileSync('sqlite3', [db, q]).toString().trim().split('|').map(Number);
      assert.deepEqual(got, [MAX_TOKENS, MAX_TOKENS, 0, MAX_TOKENS - 1], `${o.session}: indices 0..n-1 once each`);
    }
  }
}

/**
 * Starts N streams; once node `name` runs sessions and a share `from` (a fifth by default) of
 * all tokens is delivered, calls act().
 */
async function runAndDisrupt(name, act, from = 1 / 5) {
  const N = reference.length;
  let delivered = 0;
  const total = N * MAX_TOKENS;
  const runs = Array.from({ length: N }, (_, i) => stream(head, story(i), () => delivered++));
  const samples = [];
  const victim = await until(async () => {
    const t = Date.now();
    const v = (await nodes()).find((n) => n.name === name);
    samples.push(`${delivered}:${v?.running}:${Date.now() - t}ms`);
    return v && v.running > 0 && delivered >= total * from && delivered < total / 2 && v;
  }, 60000, 20);
  if (!victim) console.log(`delivered ${delivered}; samples ${samples.slice(0, 60).join(' ')}; nodes ${JSON.stringify(await nodes())}`);
  assert.ok(victim, `${name} ran sessions mid-run`);
  console.log(`disrupting ${name} (${victim.running} sessions) after ${delivered} of ~${total} events`);
  act();
  const out = await Promise.all(runs);
  // Reported, not asserted: how long the moved streams waited for their next token.
  console.log(`${name}: longest wait between two frames of a stream: ${Math.max(...out.map((o) => o.stall))} ms`);
  return out;
}

const scratch = mkdtempSync(join(tmpdir(), 'sf-cluster-'));
const dirs = { a: join(scratch, 'guest-a'), b: join(scratch, 'guest-b'), c: join(scratch, 'guest-c') };
let firstToken = '';
let twoUses = '';
const guests = {};

before(async () => {
  if (!hasNs) return;
  net = makeNetwork(3);
  guestPort = await freePort();
  head = await startServer(['--cluster', '--guest-port', String(guestPort), '--guest-host', net.hostIp, '--parallel', '4',
    '--threads', '1'], { modelPath: modelPath() });
  firstToken = (head.log().match(/--token (sf1\.[0-9a-f.]+)/) || [])[1] || '';
});

after(async () => {
  for (const g of [...running]) g.kill();
  await Promise.all([...running].map((g) => g.exited));
  if (head) await head.stop();
  if (net) net.teardown();
  rmSync(scratch, { recursive: true, force: true });
});

test('cluster: the head prints a join token on first start; two guests join with a two-use token', { skip: !hasNs }, async () => {
  assert.match(firstToken, /^sf1\.[0-9a-f]{64}\.[0-9a-f]{12}\.[0-9a-f]{32}$/, head.log());
  const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--uses', '2']);
  assert.equal(made.code, 0, made.stderr);
  twoUses = made.stdout.trim();
  assert.equal(twoUses.split('.')[1], firstToken.split('.')[1], 'same CA pin');
  guests.a = startGuest(0, { token: twoUses, stateDir: dirs.a, name: 'guest-a' });
  guests.b = startGuest(1, { token: twoUses, stateDir: dirs.b, name: 'guest-b' });
  const ns = await waitActive(['local', 'guest-a', 'guest-b']);
  assert.ok(ns, `three active nodes; head log:\n${head.log()}\nguest a:\n${guests.a.log()}`);
  const fps = new Set(ns.map((n) => n.model_fingerprint));
  for (const n of ns.filter((x) => x.name !== 'local')) assert.match(n.certificate_serial, /^[0-9A-F]+$/, `${n.name}: certificate serial`);
  assert.equal(fps.size, 1, 'every node serves the same model');
  // What each node reported: engine and build, its KV cache, its scheduler's classes.
  for (const n of ns) {
    assert.match(n.engine, /^llama\.cpp b\d+-[0-9a-f]+/, `${n.name}: engine`);
    assert.ok(n.kv_cells > 0, `${n.name}: KV cells`);
    assert.deepEqual(Object.keys(n.running_by_class).sort(), ['batch', 'interactive', 'normal']);
    assert.equal(typeof n.cache_hit_rate, 'number');
  }
  assert.match(head.log(), /node guest-a joined from/);
  assert.match(guests.a.log(), /joined .* as guest-a/);
  const metrics = await (await fetch(`${head.url}/metrics`)).text();
  for (const n of ['local', 'guest-a', 'guest-b']) assert.match(metrics, new RegExp(`^superfluid:node_up\\{node="${n}"\\} 1(\\.0)?$`, 'm'));
  const cli = await runSuperfluid(['nodes', '--port', String(head.port)]);
  assert.equal(cli.code, 0);
  for (const n of ['local', 'guest-a', 'guest-b']) assert.match(cli.stdout, new RegExp(`^${n} .* llama\\.cpp b`, 'm'));
});

test('cluster: refused joins — reused one-time token, wrong secret, wrong CA pin, expired token', { skip: !hasNs }, async () => {
  // The first-start token (one use) joins guest c; used again from a fresh state dir it is refused.
  guests.c = startGuest(2, { token: firstToken, stateDir: dirs.c, name: 'guest-c' });
  assert.ok(await waitActive(['guest-c']), guests.c.log());
  const again = startGuest(2, { token: firstToken, stateDir: join(scratch, 'reuse'), name: 'reuse' });
  assert.notEqual((await again.exited).code, 0);
  assert.match(again.log(), /refused/);
  assert.match(head.log(), new RegExp(`join refused from .*token ${firstToken.split('.')[2]}: already used`));

  const [, pin, id, secret] = twoUses.split('.');
  const flip = (hex) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  const wrongSecret = startGuest(2, { token: `sf1.${pin}.${id}.${flip(secret)}`, stateDir: join(scratch, 'ws'), name: 'ws' });
  assert.notEqual((await wrongSecret.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${id}: wrong secret`));

  // A token that pins another CA: the guest stops after fetching the CA; the head never sees a
  // Join for it (no log line names the token), so nothing secret was sent.
  const fake = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir]);
  const [, fpin, fid, fsecret] = fake.stdout.trim().split('.');
  const wrongPin = startGuest(2, { token: `sf1.${flip(fpin)}.${fid}.${fsecret}`, stateDir: join(scratch, 'wp'), name: 'wp' });
  assert.notEqual((await wrongPin.exited).code, 0);
  assert.match(wrongPin.log(), /does not match the token .*nothing secret was sent/);
  assert.doesNotMatch(head.log(), new RegExp(fid));

  const short = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--ttl', '1s']);
  const sid = short.stdout.trim().split('.')[2];
  await new Promise((r) => setTimeout(r, 2100));
  const expired = startGuest(2, { token: short.stdout.trim(), stateDir: join(scratch, 'ex'), name: 'ex' });
  assert.notEqual((await expired.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${sid}: expired`));
});

test('cluster: streams spread over the nodes; a guest SIGKILLed mid-stream loses no token', { skip: !hasNs }, async () => {
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
  const N = 8;
  // Reference: the same seeded requests on one node (a plain server, same model and build).
  const single = await startServer(['--parallel', '8', '--threads', '1'], { modelPath: modelPath() });
  try {
    reference = await Promise.all(Array.from({ length: N }, (_, i) => stream(single, story(i))));
  } finally {
    await single.stop();
  }
  for (const r of reference) assert.equal(r.done, true);

  const before = Object.fromEntries((await nodes()).map((n) => [n.name, n.placed_total]));
  // A tenth of all tokens in (not a fifth): guest-a's two streams may run ahead of the other
  // nodes' and end before a fifth of the total is delivered (seen on a loaded 2-core machine).
  const out = await runAndDisrupt('guest-a', () => guests.a.kill(), 1 / 10);
  const after = await nodes();
  for (const n of ['local', 'guest-b', 'guest-c'])
    assert.ok(after.find((x) => x.name === n).placed_total > (before[n] ?? 0), `node ${n} got sessions`);
  await checkStreams(out, reference);
  assert.match(head.log(), /worker lost at token \d+; resuming/, 'sessions of the killed guest moved');
  // The journal records each move: first on guest-a, then elsewhere from a later token.
  const moved = out.filter((o) => o.placements[0].node === 'guest-a' && o.placements.length > 1);
  assert.ok(moved.length > 0, `a session moved off guest-a (${JSON.stringify(out.map((o) => o.placements))})`);
  // A session placed on guest-a that had no token yet moves from index 0; at least one had
  // tokens (checkStreams above: none lost, none repeated).
  assert.ok(moved.some((o) => o.placements[1].from_index > 0), 'a session moved mid-stream');
  for (const o of moved) {
    assert.notEqual(o.placements[1].node, 'guest-a');
  }
  const a = await until(async () => (await nodes()).find((n) => n.name === 'guest-a' && n.state === 'failing'), 10000);
  assert.ok(a, 'the killed guest shows as failing');
});

test('cluster: a restarted guest re-joins with its certificate, not a token', { skip: !hasNs }, async () => {
  guests.a.kill(); // already dead unless the test before failed early
  await guests.a.exited;
  assert.ok(await until(async () => (await nodes()).find((n) => n.name === 'guest-a' && n.state !== 'active'), 15000),
    'the head noticed guest a is gone');
  guests.a = startGuest(0, { stateDir: dirs.a });
  assert.ok(await waitActive(['guest-a']), guests.a.log());
  assert.match(guests.a.log(), /joined before as guest-a: using the node certificate/);
  const r = await stream(head, { ...story(99), max_tokens: 8 });
  assert.equal(r.done, true);
});

/**
 * Streams with node `name` disrupted mid-run by `disrupt()`: every stream must equal the
 * reference and the node must show as failing; `heal()` then lets it back, and it must become
 * active again.
 */
async function disruptAndHeal(name, disrupt, heal) {
  assert.ok(reference, 'the reference run exists');
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
  let done = false;
  try {
    const out = await runAndDisrupt(name, () => {
      disrupt();
      done = true;
    });
    await checkStreams(out, reference);
    const n = await until(async () => (await nodes()).find((x) => x.name === name && x.state === 'failing'), 15000);
    assert.ok(n, `${name} shows as failing`);
  } finally {
    if (done) heal();
  }
  assert.ok(await waitActive([name], 60000), `${name} is active again once healed`);
}

test('cluster: a guest whose link is cut silently (veth down): its sessions move, no token lost; it comes back', { skip: !hasNs }, () =>
  disruptAndHeal('guest-b', () => net.linkDown(1), () => net.linkUp(1)));

test('cluster: a half-open link (the guest\'s packets to the head dropped): its sessions move, no token lost', { skip: !nft }, () =>
  disruptAndHeal('guest-c', () => net.dropToHead(2), () => net.healToHead(2)));

test('cluster: second turns go back to the node holding their first turn (prefix cache hits)', { skip: !hasNs }, async () => {
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
  const words = 'harbor lantern tide rope gull anchor compass reef storm sail'.split(' ');
  // Eight conversations, each with its own ~2.5 KB system prompt (distinct from its first word).
  const system = (i) => `Conversation ${i}. ` + Array.from({ length: 400 }, (_, k) => words[(k * (i + 3)) % 10]).join(' ');
  const chat = async (messages) => {
    const res = await fetch(`${head.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages, max_tokens: 4, temperature: 0 }),
    });
    assert.equal(res.status, 200);
    return res.json();
  };
  const placed = async () => Object.fromEntries((await nodes()).map((n) => [n.name, n.placed_total]));
  const before = await placed();
  const first = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    chat([{ role: 'system', content: system(i) }, { role: 'user', content: `First question ${i}?` }])));
  const mid = await placed();
  const used = Object.keys(mid).filter((n) => mid[n] > (before[n] ?? 0));
  assert.ok(used.length >= 2, `first turns spread over the nodes (${used.join(', ')})`);
  // One at a time, last first: by load alone each would go to the same first idle node.
  const second = [];
  for (let i = 7; i >= 0; i--)
    second[i] = await chat([
      { role: 'system', content: system(i) },
      { role: 'user', content: `First question ${i}?` },
      { role: 'assistant', content: first[i].choices[0].message.content ?? '' },
      { role: 'user', content: `And a second question ${i}?` },
    ]);
  for (let i = 0; i < 8; i++) {
    const cached = second[i].usage.prompt_tokens_details?.cached_tokens ?? 0;
    const had = first[i].usage.prompt_tokens;
    console.log(`conversation ${i}: first turn ${had} prompt tokens, second turn ${cached} of ${second[i].usage.prompt_tokens} cached`);
    assert.ok(cached >= 0.8 * had, `conversation ${i}: its second turn reused its first turn's prefix (${cached} of ${had})`);
  }
});

test('cluster: after a head restart (now routing only: --no-local-worker) the guests register again with their certificates', { skip: !hasNs }, async () => {
  const stateDir = head.stateDir;
  await head.stop();
  // /health answers 200 only once a guest is active again: startServer waits for it.
  head = await startServer(['--cluster', '--no-local-worker', '--guest-port', String(guestPort), '--guest-host', net.hostIp,
    '--parallel', '4', '--threads', '1'], { modelPath: modelPath(), stateDir });
  assert.doesNotMatch(head.log(), /--token sf1/, 'no new CA, no first-start token');
  const ns = await waitActive(['guest-a', 'guest-b', 'guest-c']);
  assert.ok(ns, head.log());
  assert.ok(!ns.some((n) => n.name === 'local'), 'no local worker');
  const r = await stream(head, { ...story(98), max_tokens: 8 });
  assert.equal(r.done, true);
  assert.equal(r.error, null);
});

test('cluster: a revoked node is dropped at once: its sessions move with no token lost; its certificate and token are refused', { skip: !hasNs }, async () => {
  assert.ok(reference, 'the reference run exists');
  assert.ok(await waitActive(['guest-a', 'guest-b', 'guest-c']), 'three active guests');
  // superfluid ps names each session's node while they run (long streams, cancelled after).
  const stop = new AbortController();
  const long = Array.from({ length: 4 }, (_, i) =>
    fetch(`${head.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...story(50 + i), max_tokens: 4000 }),
      signal: stop.signal,
    }).then((r) => r.text()).catch(() => null));
  const ps = await until(async () => {
    const j = await (await fetch(`${head.url}/api/ps`)).json();
    if (j.sessions.filter((s) => s.node).length < 4) return null;
    const cli = await runSuperfluid(['ps', '--port', String(head.port)]);
    return cli.stdout.match(/^sess_/gm)?.length >= 4 && cli;
  }, 30000, 50);
  stop.abort();
  await Promise.all(long);
  assert.ok(ps, 'superfluid ps listed the running sessions');
  assert.match(ps.stdout, /^SESSION .* NODE$/m, ps.stdout);
  assert.match(ps.stdout, /^sess_\S+ .* guest-[abc]$/m, ps.stdout);

  let revoking = null;
  let revokedAt = 0;
  let refused = null;
  const out = await runAndDisrupt('guest-c', () => {
    revokedAt = Date.now();
    revoking = runSuperfluid(['nodes', 'revoke', 'guest-c', '--state-dir', head.stateDir]);
    refused = until(async () => (await nodes()).find((n) => n.name === 'guest-c' && n.state === 'refused'), 10000, 20)
      .then((n) => n && { ...n, after_ms: Date.now() - revokedAt });
  }, 1 / 50);
  const r = await revoking;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /revoked node guest-c \(certificate serial [0-9A-F]+, token [0-9a-f]{12}\)/);
  await checkStreams(out, reference);
  const gone = await refused;
  assert.ok(gone, 'guest-c shows as refused');
  console.log(`guest-c refused ${gone.after_ms} ms after the revoke command started (reported, not asserted)`);
  assert.match(gone.message, /revoked/);
  assert.match(head.log(), /node guest-c revoked/);
  // Its next Register is refused: the guest stops with the reason.
  const exited = await Promise.race([guests.c.exited, new Promise((res) => setTimeout(() => res(null), 15000))]);
  assert.ok(exited && exited.code !== 0, 'the revoked guest stopped');
  assert.match(guests.c.log(), /refused this node: .*revoked/);
  assert.match(head.log(), /register refused from guest-c .*revoked/);
  // The token it joined with (the first-start token) is refused too, as revoked.
  const again = startGuest(2, { token: firstToken, stateDir: join(scratch, 'after-revoke'), name: 'again' });
  assert.notEqual((await again.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${firstToken.split('.')[2]}: revoked`));
  const unknown = await runSuperfluid(['nodes', 'revoke', 'no-such-node', '--state-dir', head.stateDir]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no node named no-such-node has joined this head/);
});
