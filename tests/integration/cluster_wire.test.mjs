// Cluster mode on the wire (issue #17, "What must be shown"): a head (`serve --cluster`, on a
// bridge in the test's namespace, its local worker with 2 slots) and guests (`superfluid join`,
// each in a network namespace of its own, 4 slots) so that sessions go to the guests first.
// * a capture on the bridge while a guest joins and 4 canary streams run on guests: no canary,
//   no token secret, TLS records; a join with a wrong CA pin: the capture holds no secret;
// * 30 % packet loss on a guest's link (nftables `numgen random` drops both ways): every stream
//   completes with the reference text, and no session moves (no spurious move);
// * a json_schema stream whose guest is SIGKILLed mid-object: it moves, ends as valid JSON that
//   matches the schema, and equals the reference;
// * a guest whose model has another tokenizer: refused, and it exits saying why.
// The reference for every stream is the same seeded request on one plain server.
// Needs root, iproute2, tcpdump and nftables; prints SKIP (the runner counts skipped tests).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model, until, freePort, runSuperfluid, sessionRef, SUPERFLUID } from '../lib/server.mjs';
import { canMakeNamespaces, makeNetwork, hasNft, hasTcpdump } from '../lib/netns.mjs';
import { sseFrames } from '../lib/sse.mjs';

const hasNs = canMakeNamespaces();
if (!hasNs) console.log('SKIP: cluster wire tests need root and network namespaces (ip netns, veth, bridge)');
const dump = hasNs && hasTcpdump();
if (hasNs && !dump) console.log('SKIP: the capture tests need tcpdump');
const nft = hasNs && hasNft();
if (hasNs && !nft) console.log('SKIP: the packet-loss test needs nftables (nft)');
const hasSqlite = (() => {
  try {
    return !!execFileSync('sqlite3', ['-version']);
  } catch {}
})();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const modelPath = () => model({ seed: 3 });
const scratch = mkdtempSync(join(tmpdir(), 'sf-cluster-wire-'));
let net = null;
let head = null;
let guestPort = 0;
const running = new Set(); // our guest and tcpdump processes still alive, killed at the end
const guests = {};

// ---- requests and their one-node reference --------------------------------------------------
const CANARY = `CANARY-${randomBytes(12).toString('hex')}`;
const canary = (i) => ({
  messages: [{ role: 'user', content: `Keep this to yourself: ${CANARY}. Now write line ${i} of a poem.` }],
  max_tokens: 48, ignore_eos: true, temperature: 1.0, seed: 700 + i, stream: true,
});
// ~3-6 s of streaming here; with the 4 s soak before, the guest's link is lossy for ~7-10 s. (A
// 45 s soak with 1200-token streams saw spurious moves while the head gave up on a link after
// 2-3 s: TCP's retransmission backoff under 30 % loss stalled it for up to 6.3 s. The limit is
// now 10 s, remote_worker::k_silence.)
const LOSS_TOKENS = 300;
const story = (i) => ({
  messages: [{ role: 'user', content: `Tell story ${i} about a lighthouse.` }],
  max_tokens: LOSS_TOKENS, ignore_eos: true, temperature: 1.0, seed: 900 + i, stream: true,
});
const str = (maxLength) => ({ type: 'string', maxLength });
const BOOK = {
  type: 'object',
  properties: {
    title: str(60), author: str(40), year: { type: 'integer', minimum: 0, maximum: 9999 }, genre: str(30),
    summary: str(120), pages: { type: 'integer', minimum: 1, maximum: 5000 }, isbn: str(20),
  },
  required: ['title', 'author', 'year', 'genre', 'summary', 'pages', 'isbn'],
  additionalProperties: false,
};
const bookRequest = {
  messages: [{ role: 'user', content: 'Describe a book as JSON.' }],
  max_tokens: 2000, temperature: 1.0, seed: 5, stream: true,
  response_format: { type: 'json_schema', json_schema: { name: 'book', schema: BOOK } },
};
const ref = { canary: [], story: [], book: null };

/** Problems of `v` against BOOK, checked by hand (required, no other keys, types, bounds). */
function bookProblems(v) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['not an object'];
  const out = [];
  for (const k of Object.keys(v)) if (!(k in BOOK.properties)) out.push(`${k}: not in the schema`);
  for (const k of BOOK.required) if (!(k in v)) out.push(`${k}: missing`);
  for (const [k, s] of Object.entries(BOOK.properties)) {
    if (!(k in v)) continue;
    if (s.type === 'string' && typeof v[k] !== 'string') out.push(`${k}: not a string`);
    if (s.type === 'string' && [...String(v[k])].length > s.maxLength) out.push(`${k}: longer than ${s.maxLength}`);
    if (s.type === 'integer' && !(Number.isInteger(v[k]) && v[k] >= s.minimum && v[k] <= s.maximum)) out.push(`${k}: not an integer in range`);
  }
  return out;
}

/** Streams a chat completion: text (reasoning + content), content alone, SSE ids, longest gap. */
async function stream(server, body, onFrame) {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  const out = { session: res.headers.get('x-superfluid-session'), text: '', content: '', deltas: 0, ids: [], error: null,
    done: false, finish: null, stall: 0 };
  let last = Date.now();
  for await (const { id, data } of sseFrames(res)) {
    out.stall = Math.max(out.stall, Date.now() - last);
    last = Date.now();
    if (data === '[DONE]') {
      out.done = true;
      continue;
    }
    const j = JSON.parse(data);
    if (j.error) out.error = j.error;
    const d = j.choices?.[0]?.delta ?? {};
    out.text += (d.reasoning_content ?? '') + (d.content ?? '');
    if (d.content) (out.content += d.content), out.deltas++;
    if (j.choices?.[0]?.finish_reason) out.finish = j.choices[0].finish_reason;
    if (id) out.ids.push(id);
    onFrame?.(out);
  }
  return out;
}

/** Ended normally with the reference text; SSE ids strictly increasing; journal holds 0..n-1 once. */
function checkStream(o, r, what) {
  assert.equal(o.error, null, `${what}: no error`);
  assert.equal(o.done, true, `${what}: [DONE]`);
  assert.equal(o.text, r.text, `${what}: the reference text`);
  const idx = o.ids.map((id) => Number(id.split(':')[1]));
  assert.ok(idx.length > 0, `${what}: SSE ids`);
  for (let k = 1; k < idx.length; k++) assert.ok(idx[k] > idx[k - 1], `${what}: ids increase (${idx[k - 1]}, ${idx[k]})`);
  if (hasSqlite) {
    const q = `SELECT count(*), count(DISTINCT idx), min(idx), max(idx) FROM tokens WHERE session = '${o.session}'`;
    const got = execFileSync('sqlite3', [join(head.stateDir, 'journal.db'), q]).toString().trim().split('|').map(Number);
    assert.equal(got[0], got[1], `${what}: each journal index once`);
    assert.equal(got[3] - got[2] + 1, got[0], `${what}: journal indices contiguous`);
  }
}

// ---- processes -------------------------------------------------------------------------------
function own(proc) {
  const h = {
    proc,
    exited: new Promise((r) => proc.once('exit', (code, signal) => r({ code, signal }))),
    kill(sig = 'SIGKILL') {
      try {
        process.kill(-proc.pid, sig); // its own process group: the join process and its worker
      } catch {}
    },
  };
  running.add(h);
  h.exited.then(() => running.delete(h));
  return h;
}

function startGuest(i, { token, stateDir, name, modelFile = modelPath() }) {
  // 4 slots a guest, more than the head's 2: sessions go to the guests first (see the top).
  const args = ['join', `${net.hostIp}:${guestPort}`, '--state-dir', stateDir, '--model', modelFile, '--parallel', '4',
    '--threads', '1', '--cache-dir', 'off', '--name', name];
  if (token) args.push('--token', token);
  const [cmd, argv] = net.exec(net.guests[i].ns, SUPERFLUID, args);
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  return Object.assign(own(proc), { log: () => log });
}

/** tcpdump on the bridge into `file`; resolves once it listens. stop() → the capture's bytes. */
async function capture(file) {
  const proc = spawn('tcpdump', ['-i', net.bridge, '-w', file, '-U', '--immediate-mode', '-n', '-s', '0'], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  const h = own(proc);
  await until(() => /listening on/.test(err) || proc.exitCode !== null, 10000, 20);
  assert.match(err, /listening on/, `tcpdump started: ${err}`);
  return {
    async stop() {
      h.kill('SIGINT');
      const t = setTimeout(() => h.kill('SIGKILL'), 5000);
      const r = await h.exited;
      clearTimeout(t);
      assert.equal(r.code, 0, `tcpdump ended: ${err}`);
      return { bytes: readFileSync(file), summary: (err.match(/\d+ packets captured/) || [''])[0] };
    },
  };
}

const count = (buf, needle) => {
  let n = 0;
  for (let i = buf.indexOf(needle); i >= 0; i = buf.indexOf(needle, i + 1)) n++;
  return n;
};

/** Asserts the capture holds `secret` (hex text of a token's 4th part) neither as text nor as raw bytes. */
function assertNoSecret(bytes, secret, what) {
  assert.equal(count(bytes, Buffer.from(secret)), 0, `${what}: the secret as hex text`);
  assert.equal(count(bytes, Buffer.from(secret.toUpperCase())), 0, `${what}: the secret as upper-case hex`);
  assert.equal(count(bytes, Buffer.from(secret, 'hex')), 0, `${what}: the secret as raw bytes`);
}

/**
 * A copy of the GGUF model `src` with two same-length tokens' texts swapped (ids 1000+): the same
 * weights and size, another vocabulary, so another tokenizer fingerprint.
 */
function otherVocabulary(src, dst) {
  const b = readFileSync(src);
  let o = 24; // magic, version, tensor count, then the KV count at 16
  const nkv = Number(b.readBigUInt64LE(16));
  const string = () => {
    const n = Number(b.readBigUInt64LE(o));
    o += 8 + n;
    return b.toString('utf8', o - n, o);
  };
  const size = [1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8]; // by GGUF value type; 8 string, 9 array
  const skip = (t) => {
    if (t === 8) return void string();
    if (t !== 9) return void (o += size[t]);
    const et = b.readUInt32LE(o);
    const n = Number(b.readBigUInt64LE(o + 4));
    o += 12;
    for (let i = 0; i < n; i++) skip(et);
  };
  for (let k = 0; k < nkv; k++) {
    const key = string();
    const t = b.readUInt32LE(o);
    o += 4;
    if (key !== 'tokenizer.ggml.tokens') {
      skip(t);
      continue;
    }
    o += 12; // element type and count
    const at = [];
    for (let i = 0; i < 4000; i++) {
      const n = Number(b.readBigUInt64LE(o));
      at.push([o + 8, n]);
      o += 8 + n;
    }
    for (let i = 1000; i + 1 < at.length; i++) {
      if (at[i][1] !== at[i + 1][1] || at[i][1] < 2) continue;
      const [[p, n], [q]] = [at[i], at[i + 1]];
      const tmp = Buffer.from(b.subarray(p, p + n));
      b.copy(b, p, q, q + n);
      tmp.copy(b, q);
      writeFileSync(dst, b);
      return dst;
    }
  }
  throw new Error(`${src}: no tokens to swap`);
}

const nodes = async () => (await (await fetch(`${head.url}/api/nodes`)).json()).nodes;
const placed = async () => Object.fromEntries((await nodes()).map((n) => [n.name, n.placed_total]));
/** Guests a and b join with a two-use token (the capture test does it while capturing). */
async function joinGuests(token) {
  if (!token) {
    const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--uses', '2']);
    assert.equal(made.code, 0, made.stderr);
    token = made.stdout.trim();
  }
  guests.a = startGuest(0, { token, stateDir: join(scratch, 'guest-a'), name: 'guest-a' });
  guests.b = startGuest(1, { token, stateDir: join(scratch, 'guest-b'), name: 'guest-b' });
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b']), `guests active; head log:\n${head.log()}\n${guests.a.log()}`);
}
const waitActive = (names, ms = 60000) =>
  until(async () => {
    const ns = await nodes();
    return names.every((n) => ns.some((x) => x.name === n && x.state === 'active')) && ns;
  }, ms, 100);

before(async () => {
  if (!hasNs) return;
  // The reference: every request of this file on one plain server (same model and build).
  const single = await startServer(['--threads', '1'], { modelPath: modelPath() });
  try {
    [ref.canary, ref.story, [ref.book]] = await Promise.all([
      Promise.all([0, 1, 2, 3].map((i) => stream(single, canary(i)))),
      Promise.all(Array.from({ length: 8 }, (_, i) => stream(single, story(i)))),
      Promise.all([stream(single, bookRequest)]),
    ]);
  } finally {
    await single.stop();
  }
  net = makeNetwork(3);
  guestPort = await freePort();
  // Its local worker has 2 slots, fewer than a guest's 4: sessions go to the guests first.
  head = await startServer(['--cluster', '--guest-port', String(guestPort), '--guest-host', net.hostIp, '--parallel', '2',
    '--threads', '1'], { modelPath: modelPath() });
});

after(async () => {
  for (const h of [...running]) h.kill();
  await Promise.all([...running].map((h) => h.exited));
  if (head) await head.stop();
  if (net) net.teardown();
  rmSync(scratch, { recursive: true, force: true });
});

test('cluster wire: a capture of a join and 4 canary streams on guests holds no canary, no secret, and TLS records', { skip: !dump }, async () => {
  const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--uses', '2']);
  assert.equal(made.code, 0, made.stderr);
  const token = made.stdout.trim();
  const secret = token.split('.')[3];
  assert.match(secret, /^[0-9a-f]{32}$/);
  const cap = await capture(join(scratch, 'join-and-streams.pcap'));
  let got;
  try {
    await joinGuests(token);
    // A control: a datagram that crosses the bridge in clear is in the capture.
    const control = Buffer.from(`CONTROL-${randomBytes(8).toString('hex')}`);
    const udp = createSocket('udp4');
    await new Promise((r) => udp.send(control, 9, net.guests[0].ip, r));
    udp.close();
    const before = await placed();
    const out = await Promise.all([0, 1, 2, 3].map((i) => stream(head, canary(i))));
    out.forEach((o, i) => checkStream(o, ref.canary[i], `canary stream ${i}`));
    const now = await placed();
    const onGuests = ['guest-a', 'guest-b'].map((g) => now[g] - (before[g] ?? 0));
    console.log(`canary streams placed on guest-a/guest-b: ${onGuests.join('/')} of 4`);
    assert.ok(onGuests.every((n) => n >= 1), 'each guest ran canary streams');
    await sleep(300); // the last frames reach the capture
    got = await cap.stop();
    // (twice: the datagram, and the ICMP port-unreachable that quotes it)
    assert.ok(count(got.bytes, control) >= 1, 'the capture holds what crossed the bridge in clear');
  } finally {
    got ??= await cap.stop().catch(() => null);
  }
  const { bytes, summary } = got;
  const tls = count(bytes, Buffer.from([0x17, 0x03, 0x03]));
  console.log(`capture: ${bytes.length} bytes, ${summary}, ${tls} TLS application-data record headers`);
  assert.equal(count(bytes, Buffer.from(CANARY)), 0, 'the canary never crosses the bridge in clear');
  assert.equal(count(bytes, Buffer.from(CANARY.slice(7))), 0, 'nor its random part');
  assertNoSecret(bytes, secret, 'join capture');
  assert.ok(bytes.length > 20000, `a non-trivial capture (${bytes.length} bytes)`);
  assert.ok(tls >= 20, `TLS application-data records (${tls})`);
});

test('cluster wire: a join with a wrong CA pin stops before anything secret: the capture holds no secret', { skip: !dump }, async () => {
  const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir]);
  assert.equal(made.code, 0, made.stderr);
  const [, pin, id, secret] = made.stdout.trim().split('.');
  const flip = (hex) => hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
  const cap = await capture(join(scratch, 'wrong-pin.pcap'));
  let got = null;
  try {
    const g = startGuest(2, { token: `sf1.${flip(pin)}.${id}.${secret}`, stateDir: join(scratch, 'wrong-pin'), name: 'wp' });
    const r = await Promise.race([g.exited, sleep(30000).then(() => null)]);
    assert.ok(r, 'the guest stopped');
    assert.ok(r.code !== 0 && r.code !== null, `exit code ${r.code}`);
    assert.match(g.log(), /does not match the token .*nothing secret was sent/, g.log());
    await sleep(300);
    got = await cap.stop();
  } finally {
    got ??= await cap.stop().catch(() => null);
  }
  console.log(`wrong-pin capture: ${got.bytes.length} bytes, ${got.summary}`);
  assert.ok(count(got.bytes, Buffer.from([0x16, 0x03, 0x01])) >= 1, 'the guest\'s TLS handshake (GetCA) is in the capture');
  assertNoSecret(got.bytes, secret, 'wrong-pin capture');
  assert.doesNotMatch(head.log(), new RegExp(id), 'the head never heard of the token');
});

test('cluster wire: 30% packet loss on a guest\'s link: streams complete with the reference text, no spurious move', { skip: !nft }, async () => {
  if (!guests.a) await joinGuests(); // the capture test was skipped
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b']), 'three active nodes');
  const mark = head.log().length;
  const before = await placed();
  const states = [];
  const onB = new Set();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        states.push((await nodes()).find((n) => n.name === 'guest-b')?.state);
        for (const s of (await (await fetch(`${head.url}/api/ps`)).json()).sessions ?? []) if (s.node === 'guest-b') onB.add(s.ref);
      } catch {}
      await sleep(100);
    }
  })();
  const t0 = Date.now();
  net.lossy(1, 30);
  let out;
  let drops = null;
  try {
    await sleep(4000); // the idle link under loss first: Register, health polls, keepalive pings
    out = await Promise.all(Array.from({ length: 8 }, (_, i) => stream(head, story(i))));
    drops = net.lossCounts(1);
  } finally {
    net.clearLoss(1);
    sampling = false;
    await sampler;
  }
  const now = await placed();
  const log = head.log().slice(mark);
  const lossy = out.filter((o) => onB.has(sessionRef(o.session)));
  console.log(`8 streams in ${Date.now() - t0} ms; guest-b ran ${now['guest-b'] - (before['guest-b'] ?? 0)} ` +
    `(${lossy.length} seen in ps); longest gap between frames: lossy ${Math.max(0, ...lossy.map((o) => o.stall))} ms, ` +
    `others ${Math.max(0, ...out.filter((o) => !onB.has(sessionRef(o.session))).map((o) => o.stall))} ms; guest-b states sampled: ` +
    Object.entries(states.reduce((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {})).map(([s, n]) => `${s} ${n}`).join(', '));
  const moves = log.split('\n').filter((l) => /worker lost at token|events stream lost|health checks missed/.test(l));
  if (moves.length) console.log(`head log lines of moves / lost links:\n${moves.join('\n')}`);
  console.log(`guest-b's link: ${drops.dropped} of ${drops.seen} packets dropped`);
  assert.ok(drops.dropped >= 0.2 * drops.seen && drops.dropped <= 0.4 * drops.seen && drops.seen >= 100, 'about 30 % of its packets dropped');
  out.forEach((o, i) => checkStream(o, ref.story[i], `stream ${i}`));
  assert.ok(now['guest-b'] - (before['guest-b'] ?? 0) >= 1, 'the lossy guest ran streams');
  for (const o of out) assert.doesNotMatch(log, new RegExp(`session ${o.session}: worker lost at token`), `${o.session} did not move`);
  assert.doesNotMatch(log, /node guest-b: events stream lost/, 'the lossy guest\'s event stream stayed open');
  assert.doesNotMatch(log, /node guest-b \(.*\): \d+ health checks missed/, 'the lossy guest\'s link was not marked failing');
  assert.ok(states.length > 0 && states.every((s) => s === 'active'), `guest-b stayed active (${states.join(' ')})`);
});

test('cluster wire: a json_schema stream whose guest is SIGKILLed mid-object ends as valid JSON, equal to the reference', { skip: !hasNs }, async () => {
  if (!guests.a) await joinGuests(); // the capture test was skipped
  assert.ok(await waitActive(['local', 'guest-a', 'guest-b']), 'three active nodes');
  assert.equal(ref.book.finish, 'stop', 'the reference object is complete');
  assert.deepEqual(bookProblems(JSON.parse(ref.book.content)), [], `the reference matches the schema: ${ref.book.content}`);
  assert.ok(ref.book.deltas >= 40, `the reference object is long enough to be cut (${ref.book.deltas} deltas)`);
  const mark = head.log().length;
  let node = null;
  let killed = null;
  let ended = false;
  let cur = null;
  const watch = (async () => {
    while (!ended && !node) {
      try {
        const s = cur && (await (await fetch(`${head.url}/api/ps`)).json()).sessions?.find((x) => x.ref === sessionRef(cur.session));
        if (s?.node) node = s.node;
      } catch {}
      await sleep(10);
    }
  })();
  const out = await stream(head, bookRequest, (o) => {
    cur = o;
    if (killed || !node || o.deltas < 8) return;
    killed = { node, content: o.content, deltas: o.deltas, at: Date.now() };
    guests[node.replace('guest-', '')]?.kill();
  });
  ended = true;
  await watch;
  assert.ok(killed, `the stream's node was found and killed mid-stream (node ${node})`);
  assert.match(killed.node, /^guest-[ab]$/, 'it ran on a guest');
  console.log(`killed ${killed.node} after ${killed.deltas} of ${out.deltas} content deltas; longest gap ${out.stall} ms`);
  assert.throws(() => JSON.parse(killed.content), 'killed mid-object');
  assert.equal(out.error, null, 'no error');
  assert.equal(out.done, true, '[DONE]');
  assert.equal(out.finish, 'stop');
  assert.match(head.log().slice(mark), new RegExp(`session ${out.session}: worker lost at token \\d+; resuming`), 'it moved');
  assert.deepEqual(bookProblems(JSON.parse(out.content)), [], `valid JSON matching the schema: ${out.content}`);
  assert.equal(out.content, ref.book.content, 'the reference object');
  checkStream(out, ref.book, 'the json stream');
});

test('cluster wire: a guest whose model has another tokenizer is refused and exits saying why', { skip: !hasNs }, async () => {
  const other = otherVocabulary(modelPath(), join(scratch, 'other-vocab.gguf'));
  const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir]);
  assert.equal(made.code, 0, made.stderr);
  const g = startGuest(2, { token: made.stdout.trim(), stateDir: join(scratch, 'other'), name: 'other-vocab', modelFile: other });
  const n = await until(async () => (await nodes()).find((x) => x.name === 'other-vocab' && x.state === 'refused'), 60000, 100);
  assert.ok(n, `refused in /api/nodes: ${JSON.stringify(await nodes())}\n${g.log()}`);
  assert.match(n.message, /tokenizer/);
  assert.equal(n.placed_total, 0, 'no session was placed on it');
  const r = await Promise.race([g.exited, sleep(20000).then(() => null)]);
  assert.ok(r, `the refused guest stopped:\n${g.log()}`);
  assert.ok(r.code !== 0 && r.code !== null, `exit code ${r.code}`);
  assert.match(g.log(), /refused this node: .*tokenizer/);
  assert.match(head.log(), /node other-vocab refused: .*tokenizer/);
});
