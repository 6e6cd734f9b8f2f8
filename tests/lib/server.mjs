// Test harness: writes a tiny model with mkmodel (once per process) and starts a real
// `superfluid serve` on a free loopback port with its own state directory.
// Binaries come from SUPERFLUID_BIN / MKMODEL_BIN (set by CTest) or build/bin.
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SUPERFLUID = process.env.SUPERFLUID_BIN || join(root, 'build', 'bin', 'superfluid');
export const MKMODEL = process.env.MKMODEL_BIN || join(root, 'build', 'bin', 'mkmodel');

const scratch = mkdtempSync(join(tmpdir(), 'sf-test-'));
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }));

const models = new Map();
/**
 * Path of a model written by mkmodel (cached per options in this process). `eogScale`:
 * mkmodel --eog-scale (64: answers end after a few tokens, as an agent's plain turn needs).
 * `tokenizer`: mkmodel --tokenizer (qwen2.5: another vocabulary than the default qwen3).
 */
export function model({ preset = 'tiny', arch = 'qwen3', seed = 1, eogScale = 1, tokenizer = 'qwen3' } = {}) {
  const key = `${preset}-${arch}-${seed}` + (eogScale === 1 ? '' : `-e${eogScale}`) + (tokenizer === 'qwen3' ? '' : `-${tokenizer}`);
  if (!models.has(key)) {
    const out = join(scratch, `${key}.gguf`);
    execFileSync(MKMODEL, ['--preset', preset, '--arch', arch, '--seed', String(seed), '--eog-scale', String(eogScale), '--tokenizer', tokenizer, '--out', out]);
    models.set(key, out);
  }
  return models.get(key);
}

/**
 * Path of a tiny vision projector for `preset`'s model (mkmodel --mmproj: LLaVA-style, 96 px
 * images, 36 embeddings each), cached per options in this process.
 */
export function projector({ preset = 'tiny', seed = 1 } = {}) {
  const key = `mmproj-${preset}-${seed}`;
  if (!models.has(key)) {
    const out = join(scratch, `${key}.gguf`);
    execFileSync(MKMODEL, ['--preset', preset, '--seed', String(seed), '--mmproj', out]);
    models.set(key, out);
  }
  return models.get(key);
}

/**
 * The ref a listing (/api/ps, /ui/events) shows for session `id`: 16 hex digits of its SHA-256.
 * Listings give the id itself only to who may use the session (http/session_access.h).
 */
export const sessionRef = (id) => createHash('sha256').update(id).digest('hex').slice(0, 16);

export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a server; resolves once /health answers 200 (at most 60 s). `stateDir`: reuse one
 * (a restart on the same journal); default a fresh temporary directory; null: no --state-dir
 * and no --cache-dir (the server's XDG defaults under `env`'s HOME). `bin`: another superfluid
 * binary (an installed one); `env`: the server's environment (default this process's).
 * `waitHealthy` false: return once the server answers HTTP at all (a routing-only cluster head
 * is not healthy before a guest joins). `port`: listen there (a restart where a client
 * retries the same address); default a free port.
 * Returns { url, baseURL, port, stateDir, proc, log(), metrics(), stop() }.
 */
export async function startServer(args = [], { modelPath = model(), stateDir = mkdtempSync(join(scratch, 'state-')), cacheDir, bin = SUPERFLUID, env = process.env, waitHealthy = true, port: fixedPort = 0 } = {}) {
  const port = fixedPort || (await freePort());
  const logFile = [];
  // The prefix cache's disk tier stays inside the test's scratch space unless a test names one.
  const cache = args.includes('--cache-dir') || stateDir === null ? [] : ['--cache-dir', cacheDir || join(stateDir, 'prefix-cache')];
  const state = stateDir === null ? [] : ['--state-dir', stateDir];
  const proc = spawn(bin, ['serve', ...(modelPath ? [modelPath] : []), '--port', String(port), ...state, ...cache, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
  proc.stdout.on('data', (d) => logFile.push(d.toString()));
  proc.stderr.on('data', (d) => logFile.push(d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const server = {
    url,
    baseURL: `${url}/v1`,
    port,
    stateDir,
    proc,
    log: () => logFile.join(''),
    async metrics() {
      const text = await (await fetch(`${url}/metrics`)).text();
      const out = {};
      for (const line of text.split('\n')) {
        const m = line.match(/^superfluid:(\w+) ([0-9.eE+-]+)$/);
        if (m) out[m[1]] = Number(m[2]);
      }
      return out;
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return; // already exited (or killed)
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(t);
    },
  };
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`server exited (${proc.exitCode}):\n${server.log()}`);
    try {
      const status = (await fetch(`${url}/health`)).status;
      if (status === 200 || !waitHealthy) return server;
    } catch {}
    await sleep(100);
  }
  await server.stop();
  throw new Error(`server not healthy within 60 s:\n${server.log()}`);
}

/** Polls `fn` until it returns truthy (at most `ms`); returns the last value. */
/**
 * The most tokens one request may hold on `server` (its `/api/ps` context_length): on default
 * flags the model's training context, as far as the KV pool holds. Tests that need a prompt
 * past the context size it from this, not from a constant.
 */
export async function contextLength(server) {
  const ps = await (await fetch(`${server.url}/api/ps`)).json();
  const n = ps.models?.[0]?.context_length;
  if (!(n > 0)) throw new Error(`no context_length in /api/ps: ${JSON.stringify(ps)}`);
  return n;
}

export async function until(fn, ms = 20000, step = 100) {
  const deadline = Date.now() + ms;
  let v;
  while (Date.now() < deadline) {
    v = await fn();
    if (v) return v;
    await sleep(step);
  }
  return v;
}

/**
 * Runs `superfluid ARGS` to completion without blocking the event loop (a stand-in server in
 * the same process keeps answering). Resolves { code, signal, stdout, stderr }.
 */
export function runSuperfluid(args, env = process.env, { onSpawn } = {}) {
  return new Promise((resolve) => {
    const p = spawn(SUPERFLUID, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    onSpawn?.(p);
    p.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
