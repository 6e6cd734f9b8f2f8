// Cluster mode (issue #17): a head (`serve --cluster`, in the test's namespace, on a bridge)
// and guests (`superfluid join`, each in a network namespace of its own, joined to the bridge
// by a veth pair). Join with tokens, refusals (reused one-time token, wrong secret, wrong CA
// pin, expired token), streams spread over the nodes, and a guest lost mid-stream under eight
// concurrent streams in each way a node dies (issue #37): every process of it SIGKILLed, its
// join process SIGKILLed (the worker stops on the parent-death signal), its join process
// SIGTERMed (it leaves: the head moves its sessions first), its worker alone SIGKILLed, all of
// it SIGSTOPped (hung), its link cut, a half-open link, and the node revoked; a guest whose
// worker forges events for sessions it no longer holds (test only). Every stream
// completes with the model's own finish and the reference text and SSE ids, journal indices
// contiguous; a re-join by certificate after the guest restarts.
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
import { createHash } from 'node:crypto';

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
const FORGE = { SUPERFLUID_TEST_FORGE_EVENTS: '1' };
const modelPath = () => model({ seed: 3 });
let net = null;
let head = null;
let guestPort = 0;
const running = new Set(); // guest handles still alive, killed at the end

function startGuest(i, { token, stateDir, name, workerPort, env }) {
  // 4 slots a guest: the tests count on four nodes of 4 (16 streams fill every slot).
  const args = ['join', `${net.hostIp}:${guestPort}`, '--state-dir', stateDir, '--model', modelPath(), '--parallel', '4',
    '--threads', '1', '--cache-dir', 'off'];
  if (token) args.push('--token', token);
  if (name) args.push('--name', name);
  if (workerPort) args.push('--worker-port', String(workerPort)); // a second guest in one namespace
  const [cmd, argv] = net.exec(net.guests[i].ns, SUPERFLUID, args);
  // Its own process group: a kill reaches the join process and its worker, nothing else.
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } });
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

async function stream(server, body, onFrame, onStart) {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const out = { session: res.headers.get('x-superfluid-session'), text: '', ids: [], pieces: [], error: null, done: false, stall: 0 };
  onStart?.(out.session);
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
    const piece = (j.choices?.[0]?.delta?.reasoning_content ?? '') + (j.choices?.[0]?.delta?.content ?? '');
    out.text += piece;
    // Only frames that carry a token count (they have an SSE id): the first chunk (the role)
    // has none, and counting it let the kill fire before the victim had any token (seen once).
    if (id) {
      out.ids.push(id);
      out.pieces.push(piece);
      onFrame?.();
    }
  }
  return out;
}

let reference = null; // the one-node run of story(0..7), set by the kill test

/**
 * Every stream ended normally with the reference text and the reference's SSE ids (a moved stream:
 * up to its resume point, then possibly another token at a near-tie), and the journal holds
 * indices 0..MAX_TOKENS-1 exactly once for its session.
 */
async function checkStreams(out, ref, max = MAX_TOKENS) {
  for (let i = 0; i < out.length; i++) {
    const o = out[i];
    assert.equal(o.error, null, `stream ${i}: no error`);
    assert.equal(o.done, true, `stream ${i}: [DONE]`);
    const st = await (await fetch(`${head.url}/v1/sessions/${o.session}`)).json();
    assert.equal(st.usage.completion_tokens, max);
    // The journal's record of where it ran: increasing epochs, each from a later token.
    o.placements = st.placements;
    assert.ok(st.placements.length >= 1, `stream ${i}: its placement is journaled`);
    assert.equal(st.placements[0].from_index, 0);
    st.placements.forEach((p, k) => {
      if (k === 0) return;
      assert.ok(p.epoch > st.placements[k - 1].epoch, `stream ${i}: placement epochs increase`);
      assert.ok(p.from_index >= st.placements[k - 1].from_index, `stream ${i}: resume points advance`);
    });
    const refIds = ref[i].ids.map((id) => id.replace(ref[i].session, o.session));
    // A moved stream is prefilled again on its new node in other batch shapes than its tokens
    // were first computed in, and a later token whose top scores nearly tie can come out the
    // other way (README, "Kill soak": `diverged`). Allowed only there: every frame before the
    // first resume point is the reference's, and the count of tokens is (above and below).
    const index = (id) => Number(id.split(':')[1]);
    if (o.text !== ref[i].text && st.placements.length > 1) {
      const from = st.placements[1].from_index;
      const before = (ids) => ids.filter((id) => index(id) < from).length;
      const n = before(o.ids);
      assert.equal(n, before(refIds), `stream ${i}: the frames before the resume point (token ${from})`);
      assert.deepEqual(o.ids.slice(0, n), refIds.slice(0, n), `stream ${i}: the reference's ids before the resume point`);
      assert.equal(o.pieces.slice(0, n).join(''), ref[i].pieces.slice(0, n).join(''), `stream ${i}: the reference's text before the resume point`);
      let k = 0;
      while (k < o.text.length && o.text[k] === ref[i].text[k]) k++;
      console.log(`stream ${i}: moved at token ${from}, diverged from the reference after ${k} of ${ref[i].text.length} characters (a near-tie after the resume)`);
    } else {
      assert.equal(o.text, ref[i].text, `stream ${i}: the reference text`);
      // The frames an uninterrupted run sends, id for id (a token whose text is held back — part
      // of a UTF-8 character, a possible stop string — sends no frame of its own there either).
      assert.deepEqual(o.ids, refIds, `stream ${i}: the reference's ids`);
    }
    const idx = o.ids.map(index);
    for (let k = 1; k < idx.length; k++) assert.ok(idx[k] > idx[k - 1], `stream ${i}: ids increase`);
    if (hasSqlite) {
      const db = join(head.stateDir, 'journal.db');
      const q = `SELECT count(*), count(DISTINCT idx), min(idx), max(idx) FROM tokens WHERE session = '${o.session}'`;
      const got = execFileSync('sqlite3', [db, q]).toString().trim().split('|').map(Number);
      assert.deepEqual(got, [max, max, 0, max - 1], `${o.session}: indices 0..n-1 once each`);
    }
  }
}

/** A session's `ref` in listings (a hash of its id: listings carry no ids without keys). */
const refOf = (id) => createHash('sha256').update(id).digest('hex').slice(0, 16);

/**
 * Starts N streams; once node `name` runs some of them, all of which have delivered at least
 * one token among them and each less than 60% of its tokens (so they must move, whatever the
 * machine's speed: the tiny model streams 160 tokens in under a second, and on a loaded machine
 * a stream was seen going from 0 to 83 tokens between two polls), calls act().
 */
async function runAndDisrupt(name, act, { body = story, n = reference.length, max = MAX_TOKENS, early = false } = {}) {
  // The disruption must land while `name` runs some of the streams, each not too far along. On a
  // loaded machine (CI runs the bench beside this test) the polls can be starved for seconds and
  // miss that window: the run is then let finish and started again, up to 3 times.
  for (let attempt = 1; ; attempt++) {
    const got = await tryRunAndDisrupt(name, act, { body, n, max, early });
    if (got || attempt === 3) {
      assert.ok(got, `${name} ran sessions mid-run (3 tries)`);
      return got;
    }
    console.log(`${name}: the polls missed the window (try ${attempt}); running again`);
  }
}

// One run of `n` streams; `act` once `name` runs some of them mid-way. Null when the window was
// missed (the streams are then read to their end first).
async function tryRunAndDisrupt(name, act, { body, n, max, early }) {
  const N = n;
  const count = Array(N).fill(0);
  const ids = Array(N).fill(null);
  const total = N * max;
  const runs = Array.from({ length: N }, (_, i) => stream(head, body(i), () => count[i]++, (id) => (ids[i] = id)));
  const samples = [];
  let missed = false;
  const victim = await until(async () => {
    const ps = await (await fetch(`${head.url}/api/ps`)).json();
    const here = new Map(ps.sessions.filter((x) => x.node === name).map((x) => [x.ref, x.generated_tokens ?? 0]));
    const mine = ids.map((id, i) => (id && here.has(refOf(id)) ? i : -1)).filter((i) => i >= 0);
    // How far each is as the head has it (what the node generated and sent), not only as the
    // client read it: under load the clients lag the head by many tokens, and a session the
    // client saw at 40% had once been generated to its end on the node before the disruption
    // (CI: the worker-kill case found nothing to move).
    const got = mine.map((i) => Math.max(count[i], here.get(refOf(ids[i]))));
    samples.push(`${got.join('/')}`);
    // `early`: as soon as the node runs any of them, each under a tenth done (resumes from few
    // tokens: a long resumed tail may differ from the reference at a near-tie, README).
    const limit = early ? max * 0.1 : max * 0.6;
    if (mine.length > 0 && got.some((c) => c >= limit)) missed = true;
    if (missed || count.every((c) => c >= max)) return 'missed';
    if (early) return mine.length > 0 && { running: mine.length };
    return mine.length > 0 && got.some((c) => c > 0) && { running: mine.length };
  }, 60000, 5);
  if (!victim || victim === 'missed') {
    console.log(`counts ${count}; samples ${samples.slice(0, 60).join(' ')}; nodes ${JSON.stringify(await nodes())}`);
    await Promise.all(runs);
    return null;
  }
  console.log(`disrupting ${name} (${victim.running} sessions) after ${count.reduce((a, b) => a + b)} of ~${total} events`);
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
  // The local node has 4 slots like each guest: 16 streams fill the four nodes (the forging test).
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
  // guest-b's worker forges events for sessions it no longer holds whenever the head opens a
  // new Events call to it (test only, worker/event_forger.h): every test that cuts its link
  // checks that the head refuses them.
  guests.b = startGuest(1, { token: twoUses, stateDir: dirs.b, name: 'guest-b', env: FORGE });
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
  // A second join on the same host without --worker-port: the port is taken (gRPC would share
  // it by SO_REUSEPORT), so it stops before using its token, naming the port and the flag.
  const twinToken = (await runSuperfluid(['token', 'create', '--state-dir', head.stateDir])).stdout.trim();
  const twin = startGuest(2, { token: twinToken, stateDir: join(scratch, 'twin'), name: 'twin' });
  assert.notEqual((await twin.exited).code, 0);
  assert.match(twin.log(), /port 8455 on 0\.0\.0\.0 is in use .*--worker-port/);
  assert.doesNotMatch(head.log(), new RegExp(twinToken.split('.')[2]), 'the head never saw it: its token is unused');
  const again = startGuest(2, { token: firstToken, stateDir: join(scratch, 'reuse'), name: 'reuse', workerPort: 8465 });
  assert.notEqual((await again.exited).code, 0);
  assert.match(again.log(), /refused/);
  assert.match(head.log(), new RegExp(`join refused from .*token ${firstToken.split('.')[2]}: already used`));

  const [, pin, id, secret] = twoUses.split('.');
  const flip = (hex) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  const wrongSecret = startGuest(2, { token: `sf1.${pin}.${id}.${flip(secret)}`, stateDir: join(scratch, 'ws'), name: 'ws', workerPort: 8465 });
  assert.notEqual((await wrongSecret.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${id}: wrong secret`));

  // A token that pins another CA: the guest stops after fetching the CA; the head never sees a
  // Join for it (no log line names the token), so nothing secret was sent.
  const fake = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir]);
  const [, fpin, fid, fsecret] = fake.stdout.trim().split('.');
  const wrongPin = startGuest(2, { token: `sf1.${flip(fpin)}.${fid}.${fsecret}`, stateDir: join(scratch, 'wp'), name: 'wp', workerPort: 8465 });
  assert.notEqual((await wrongPin.exited).code, 0);
  assert.match(wrongPin.log(), /does not match the token .*nothing secret was sent/);
  assert.doesNotMatch(head.log(), new RegExp(fid));

  const short = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--ttl', '1s']);
  const sid = short.stdout.trim().split('.')[2];
  await new Promise((r) => setTimeout(r, 2100));
  const expired = startGuest(2, { token: short.stdout.trim(), stateDir: join(scratch, 'ex'), name: 'ex', workerPort: 8465 });
  assert.notEqual((await expired.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${sid}: expired`));
});

test('cluster: streams spread over the nodes; a guest SIGKILLed mid-stream loses no token', { skip: !hasNs }, async () => {
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
  const N = 8;
  // Reference: the same seeded requests on one node (a plain server, same model and build).
  const single = await startServer(['--threads', '1'], { modelPath: modelPath() });
  try {
    reference = await Promise.all(Array.from({ length: N }, (_, i) => stream(single, story(i))));
  } finally {
    await single.stop();
  }
  for (const r of reference) assert.equal(r.done, true);

  const before = Object.fromEntries((await nodes()).map((n) => [n.name, n.placed_total]));
  // A tenth of all tokens in (not a fifth): guest-a's two streams may run ahead of the other
  // nodes' and end before a fifth of the total is delivered (seen on a loaded 2-core machine).
  const out = await runAndDisrupt('guest-a', () => guests.a.kill());
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

/** The guest's worker process (the join process's child; guests keep no standby). */
function workerPid(g) {
  const out = execFileSync('pgrep', ['-P', String(g.proc.pid)]).toString().trim().split('\n');
  assert.equal(out.length, 1, `one child of join: ${out}`);
  return Number(out[0]);
}

/**
 * Streams with guest-a disrupted mid-run by `act(g)`: every stream completes with the model's own
 * finish and the reference text, ids and journal rows (checkStreams), and a session placed on
 * guest-a moved to another node. Returns the guest handle that was disrupted.
 */
async function disruptGuestA(act) {
  assert.ok(reference, 'the reference run exists');
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
  const g = guests.a;
  const out = await runAndDisrupt('guest-a', () => act(g));
  await checkStreams(out, reference);
  const moved = out.filter((o) => o.placements.some((p) => p.node === 'guest-a') && o.placements.at(-1).node !== 'guest-a');
  assert.ok(moved.length > 0, `a session moved off guest-a (${JSON.stringify(out.map((o) => o.placements))})`);
  return g;
}

/** guest-a started again from its state dir (its certificate) and active. */
async function restartGuestA() {
  guests.a = startGuest(0, { stateDir: dirs.a });
  assert.ok(await waitActive(['guest-a']), guests.a.log());
}

// Its worker gets the parent-death signal (SIGTERM) and stops gracefully, cancelling its
// sequences: the head must take those cancels, which it did not ask for, as a loss (issue #37).
test('cluster: the join process SIGKILLed (its worker stops on the parent-death signal): sessions move, none ends early', { skip: !hasNs }, async () => {
  const g = await disruptGuestA((g) => process.kill(g.proc.pid, 'SIGKILL'));
  await g.exited;
  assert.match(head.log(), /ended it unasked at token \d+; moving it|events stream lost/);
  await restartGuestA();
});

test('cluster: the join process SIGTERMed: it tells the head, which moves its sessions, then exits 0', { skip: !hasNs }, async () => {
  const g = await disruptGuestA((g) => process.kill(g.proc.pid, 'SIGTERM'));
  const { code } = await g.exited;
  assert.equal(code, 0, g.log());
  assert.match(g.log(), /left .*: its sessions moved to other nodes/);
  assert.match(head.log(), /node guest-a is leaving: its \d+ sessions move to other nodes/);
  assert.ok(!(await nodes()).some((n) => n.name === 'guest-a'), 'a node that left is not listed');
  await restartGuestA();
});

test('cluster: the guest\'s worker alone SIGKILLed: sessions move; join restarts it and the node is active again', { skip: !hasNs }, async () => {
  const pid = workerPid(guests.a);
  await disruptGuestA(() => process.kill(pid, 'SIGKILL'));
  const back = await waitActive(['guest-a']);
  if (!back) {
    // Failed once in CI (every later case then found guest-a missing): say why.
    console.log(`guest-a's log:\n${guests.a.log().slice(-6000)}\nthe head's, on guest-a:\n${head.log().split('\n').filter((l) => /guest-a|10\.\d+\.\d+\.11\b/.test(l)).slice(-40).join('\n')}\nnodes: ${JSON.stringify(await nodes())}`);
  }
  assert.ok(back, 'active again with a restarted worker');
  assert.notEqual(workerPid(guests.a), pid);
});

test('cluster: every process of a guest SIGSTOPped (a hung node): its sessions move; SIGCONT and it is active again', { skip: !hasNs }, async () => {
  let pid = 0;
  await disruptAndHeal('guest-a', () => {
    pid = guests.a.proc.pid;
    process.kill(-pid, 'SIGSTOP');
  }, () => process.kill(-pid, 'SIGCONT'));
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

// Issue #37: a guest cannot write into sessions it does not hold. guest-b runs a worker that
// misbehaves on purpose (FORGE, worker/event_forger.h): when the head opens a new Events call to
// it after its link came back, it first sends, for every session it ran, three "FORGED" tokens
// and a finish under each of the 64 epochs after its own. The head refuses an epoch it never
// gave the session (whether the moved session runs, still waits for a slot, or has already
// ended: the head is slow to call the link failing (~11 s), and in CI the moved streams once
// all finished within the second before guest-b came back; its retries take new epochs, so
// the moved placement's may lie beyond the 64) and its current epoch on another node's stream.
// Sixteen streams fill every slot of the four nodes, so guest-b surely runs some. New
// prompts (prefix affinity would send the story prompts where they ran before). The kill comes early (each of guest-b's
// streams under a tenth done): a long tail resumed by batched prefill may differ from the
// reference at a near-tie (README), which one 400-token run showed once.
test('cluster: a guest sending events for sessions it no longer holds (a forging worker): refused and counted; every client gets the reference', { skip: !hasNs }, async () => {
  const LONG = 200;
  const N = 16;
  const long = (i) => ({ ...story(i), messages: [{ role: 'user', content: `Tell tale ${i} of the mountains.` }], max_tokens: LONG });
  const single = await startServer(['--threads', '1'], { modelPath: modelPath() });
  let ref;
  try {
    ref = await Promise.all(Array.from({ length: N }, (_, i) => stream(single, long(i))));
  } finally {
    await single.stop();
  }
  try {
    assert.ok(await waitActive(['local', 'guest-a', 'guest-b', 'guest-c']), 'four active nodes');
    const refused = async () => Number((await (await fetch(`${head.url}/metrics`)).text()).match(/^superfluid:worker_events_refused_total (\d+)/m)?.[1]);
    const before = await refused();
    const forges = () => guests.b.log().match(/test: forging \d+ events for \d+ sessions/g)?.length ?? 0;
    const forgedBefore = forges();
    let healed = null;
    const out = await runAndDisrupt('guest-b', () => {
      net.linkDown(1);
      healed = (async () => {
        const f = await until(async () => (await nodes()).find((x) => x.name === 'guest-b' && x.state === 'failing'), 30000, 100);
        net.linkUp(1);
        return f;
      })();
    }, { body: long, n: N, max: LONG, early: true });
    assert.ok(await healed, 'guest-b was seen failing, then its link came back');
    for (let i = 0; i < out.length; i++) {
      if (out[i].text === ref[i].text) continue;
      let k = 0;
      while (out[i].text[k] === ref[i].text[k]) k++;
      const st = await (await fetch(`${head.url}/v1/sessions/${out[i].session}`)).json();
      console.log(`stream ${i} differs at char ${k} of ${ref[i].text.length} (got ${out[i].text.length}, ${out[i].ids.length} vs ${ref[i].ids.length} frames); placements ${JSON.stringify(st.placements)}; got …${JSON.stringify(out[i].text.slice(k, k + 40))} want …${JSON.stringify(ref[i].text.slice(k, k + 40))}`);
    }
    await checkStreams(out, ref, LONG);
    for (const o of out) assert.doesNotMatch(o.text, /FORGED/);
    // The worker forges when the head opens a new Events call to it, once the link is back:
    // that can come after the moved streams have ended.
    assert.ok(await until(async () => forges() > forgedBefore, 30000, 100), 'the worker forged after the cut');
    const after = await until(async () => {
      const n = await refused();
      return n > before ? n : 0;
    }, 10000, 100) || (await refused());
    console.log(`worker_events_refused_total ${before} -> ${after}`);
    assert.ok(after > before, `the forged events were refused and counted (${before} -> ${after})`);
  } catch (e) {
    console.log(`guest-b's log:\n${guests.b.log().slice(-4000)}\nthe head's, on guest-b:\n${head.log().split('\n').filter((l) => /guest-b|10\.\d+\.\d+\.12/.test(l)).slice(-30).join('\n')}`);
    throw e;
  }
  assert.ok(await waitActive(['guest-b'], 60000), 'guest-b is active again');
});

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
  // --node-lost-after 3: the default (3 min) is too long to wait for in the last test.
  head = await startServer(['--cluster', '--no-local-worker', '--guest-port', String(guestPort), '--guest-host', net.hostIp,
    '--threads', '1', '--node-lost-after', '3'], { modelPath: modelPath(), stateDir });
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
    return cli.stdout.match(/^ref_/gm)?.length >= 4 && cli;
  }, 30000, 50);
  stop.abort();
  await Promise.all(long);
  assert.ok(ps, 'superfluid ps listed the running sessions');
  assert.match(ps.stdout, /^SESSION .* NODE$/m, ps.stdout);
  assert.match(ps.stdout, /^ref_[0-9a-f]{16} .* guest-[abc]$/m, ps.stdout); // no ids without keys

  let revoking = null;
  let revokedAt = 0;
  let refused = null;
  const out = await runAndDisrupt('guest-c', () => {
    revokedAt = Date.now();
    revoking = runSuperfluid(['nodes', 'revoke', 'guest-c', '--state-dir', head.stateDir]);
    refused = until(async () => (await nodes()).find((n) => n.name === 'guest-c' && n.state === 'refused'), 10000, 20)
      .then((n) => n && { ...n, after_ms: Date.now() - revokedAt });
  });
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
  const again = startGuest(2, { token: firstToken, stateDir: join(scratch, 'after-revoke'), name: 'again', workerPort: 8465 });
  assert.notEqual((await again.exited).code, 0);
  assert.match(head.log(), new RegExp(`token ${firstToken.split('.')[2]}: revoked`));
  const unknown = await runSuperfluid(['nodes', 'revoke', 'no-such-node', '--state-dir', head.stateDir]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no node named no-such-node has joined this head/);
});

test('cluster: a node unreachable for --node-lost-after is shown lost with the reason, never placed on, and dropped once revoked', { skip: !hasNs }, async () => {
  assert.ok(await waitActive(['guest-a', 'guest-b']), 'two active guests');
  guests.a.kill();
  await guests.a.exited;
  const lost = await until(async () => (await nodes()).find((n) => n.name === 'guest-a' && n.state === 'lost'), 30000, 200);
  assert.ok(lost, `guest-a shows as lost (${JSON.stringify(await nodes())})`);
  assert.match(lost.message, /unreachable for \d+ s .*revoke it or let it re-join/);
  const cli = await runSuperfluid(['nodes', '--port', String(head.port)]);
  assert.match(cli.stdout, /^guest-a .*lost/m, cli.stdout);
  const placedBefore = lost.placed_total;
  const runs = await Promise.all([0, 1, 2].map((i) => stream(head, { ...story(70 + i), max_tokens: 8 })));
  for (const r of runs) assert.equal(r.done, true);
  assert.equal((await nodes()).find((n) => n.name === 'guest-a').placed_total, placedBefore, 'nothing placed on a lost node');
  const r = await runSuperfluid(['nodes', 'revoke', 'guest-a', '--state-dir', head.stateDir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(await until(async () => !(await nodes()).some((n) => n.name === 'guest-a'), 5000), 'a revoked lost node is dropped');
  const after = await runSuperfluid(['nodes', '--port', String(head.port)]);
  assert.doesNotMatch(after.stdout, /^guest-a /m, after.stdout);
});
