// Issue #38 item 7 (the part after file modes): API keys and join tokens need not be command-line
// arguments (every local user reads those in ps): `serve --api-key-file` and SUPERFLUID_API_KEY,
// `join --token-file` and SUPERFLUID_JOIN_TOKEN; the journal keeps a key only as HMAC-SHA256
// under the state dir's secret (STATE/client-id.key, 0600), never the key or the unsalted FNV-1a
// hash it kept before (which anyone could recompute from a guessed key).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model, until, freePort, runSuperfluid, SUPERFLUID } from '../lib/server.mjs';

const scratch = mkdtempSync(join(tmpdir(), 'sf-secrets-'));
const procs = [];
after(() => {
  for (const p of procs) {
    try {
      process.kill(-p.pid, 'SIGKILL');
    } catch {}
  }
  rmSync(scratch, { recursive: true, force: true });
});

const cmdline = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
const chat = (url, key) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }),
  });

// The 16-hex-digit FNV-1a of `s`, the id the journal kept for a key before.
function fnv1a(s) {
  let h = 0xcbf29ce484222325n;
  for (const c of Buffer.from(s)) h = BigInt.asUintN(64, (h ^ BigInt(c)) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

test('serve: keys from --api-key-file and SUPERFLUID_API_KEY, none on the command line; the journal keeps only a keyed hash', async () => {
  const file = join(scratch, 'keys');
  writeFileSync(file, '# keys of the team\nsk-file-one\n\nsk-file-two\n', { mode: 0o600 });
  const env = { ...process.env, SUPERFLUID_API_KEY: 'sk-env-three' };
  const server = await startServer(['--api-key-file', file], { env });
  try {
    for (const key of ['sk-file-one', 'sk-file-two', 'sk-env-three']) {
      const r = await chat(server.url, key);
      assert.equal(r.status, 200, `${key}: ${await r.text()}`);
    }
    for (const key of [null, 'sk-file-on', 'sk-file-one2', 'x'.repeat(300)]) {
      const r = await chat(server.url, key);
      assert.equal(r.status, 401, `${key}: ${await r.text()}`);
    }
    const line = cmdline(server.proc.pid);
    assert.doesNotMatch(line, /sk-(file|env)/, line);
    assert.doesNotMatch(server.log(), /may be read by other users/);

    // The secret that keys client ids: made once, 32 bytes, 0600.
    const secret = join(server.stateDir, 'client-id.key');
    assert.equal(statSync(secret).mode & 0o777, 0o600);
    assert.equal(statSync(secret).size, 32);
  } finally {
    await server.stop();
  }
  // Everything the journal holds (the main file and any WAL left): the key's id is a 32-digit
  // keyed hash; neither the key nor its FNV-1a id is there.
  const bytes = ['journal.db', 'journal.db-wal']
    .map((f) => join(server.stateDir, f))
    .filter(existsSync)
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');
  assert.match(bytes, /key:[0-9a-f]{32}/, 'a keyed client id is journaled');
  for (const key of ['sk-file-one', 'sk-file-two', 'sk-env-three']) {
    assert.ok(!bytes.includes(key), `the key ${key} is not in the journal`);
    assert.ok(!bytes.includes(fnv1a(key)), `the FNV-1a id of ${key} is not in the journal`);
  }
});

test('serve: an unreadable --api-key-file stops the start with a clear error; a readable one is warned about', async () => {
  const r = await runSuperfluid(['serve', model(), '--state-dir', join(scratch, 'nokey'), '--api-key-file', join(scratch, 'missing')]);
  assert.equal(r.code, 1);
  assert.match(r.stderr + r.stdout, /--api-key-file: cannot read .*missing/);
  const open = join(scratch, 'open-keys');
  writeFileSync(open, 'sk-open\n', { mode: 0o644 });
  const server = await startServer(['--api-key-file', open]);
  try {
    assert.equal((await chat(server.url, 'sk-open')).status, 200);
    assert.match(server.log(), /WARN serve: --api-key-file: .*may be read by other users \(mode 644\)/);
  } finally {
    await server.stop();
  }
});

test('join: the token from --token-file or SUPERFLUID_JOIN_TOKEN, not the command line', async () => {
  const guestPort = await freePort();
  const head = await startServer(['--cluster', '--no-local-worker', '--guest-port', String(guestPort), '--guest-host', '127.0.0.1',
    '--threads', '1'], { waitHealthy: false });
  try {
    const made = await runSuperfluid(['token', 'create', '--state-dir', head.stateDir, '--uses', '2']);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    const tokenFile = join(scratch, 'token');
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const start = (name, args, env = process.env) => {
      const proc = spawn(SUPERFLUID, ['join', `127.0.0.1:${guestPort}`, '--state-dir', join(scratch, name), '--name', name,
        '--model', model(), '--threads', '1', '--cache-dir', 'off', '--listen-host', '127.0.0.1',
        '--worker-port', String(args.port), ...args.extra], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
      procs.push(proc);
      let log = '';
      proc.stdout.on('data', (d) => (log += d));
      proc.stderr.on('data', (d) => (log += d));
      return { proc, log: () => log };
    };
    const byFile = start('by-file', { port: await freePort(), extra: ['--token-file', tokenFile] });
    const byEnv = start('by-env', { port: await freePort(), extra: [] }, { ...process.env, SUPERFLUID_JOIN_TOKEN: token });
    const secret = token.split('.').at(-1);
    for (const g of [byFile, byEnv]) assert.doesNotMatch(cmdline(g.proc.pid), new RegExp(secret));
    const nodes = async () => (await (await fetch(`${head.url}/api/nodes`)).json()).nodes;
    const both = await until(async () => {
      const n = await nodes();
      return ['by-file', 'by-env'].every((name) => n.find((x) => x.name === name && x.state === 'active'));
    }, 90000, 200);
    assert.ok(both, `guests not active:\n--- by-file\n${byFile.log()}\n--- by-env\n${byEnv.log()}`);
  } finally {
    await head.stop();
  }
});
