// `superfluid run` (issue #22): one-shot answers from arguments or stdin, exit status and the
// API's message on an error, and the terminal chat through a real pseudo-terminal (script(1)):
// commands, a multi-line message, Ctrl-C stopping an answer (the server cancels it) while the
// chat goes on, the input history. Requests go out as the interactive class.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPERFLUID, freePort, runSuperfluid, startServer, until } from '../lib/server.mjs';

const interactiveTtftCount = async (srv) => {
  const text = await (await fetch(`${srv.url}/metrics`)).text();
  const m = text.match(/time_to_first_token_seconds_count\{priority="interactive"\} (\d+)/);
  return m ? Number(m[1]) : 0;
};

// Feeds `steps` ([delayMs, bytes]) to `superfluid run ARGS` on a pseudo-terminal.
function onTerminal(args, steps) {
  return new Promise((resolve) => {
    // exec: no shell between script(1) and run, so Ctrl-C reaches run alone (a shell that
    // waited through it may kill itself with SIGINT after run exits: exit 130).
    const cmd = 'exec ' + [SUPERFLUID, 'run', ...args].map((a) => `'${a}'`).join(' ');
    const p = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    let t = 0;
    for (const [delay, bytes] of steps) {
      t += delay;
      setTimeout(() => p.stdin.write(bytes), t);
    }
    const kill = setTimeout(() => p.kill('SIGKILL'), t + 60000);
    p.on('exit', (code) => {
      clearTimeout(kill);
      resolve({ code, out: out.replace(/\r/g, '').replace(/\x1b\[[0-9;]*m/g, '') });
    });
  });
}

test('run answers a prompt once, as the interactive class, from arguments or stdin', async () => {
  const srv = await startServer();
  try {
    const before = await interactiveTtftCount(srv);
    const common = ['--port', String(srv.port), '--state-dir', srv.stateDir, '--max-tokens', '8'];
    const r = await runSuperfluid(['run', 'default', 'Say', 'hello', ...common]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.trim().length > 0, 'the answer is printed');
    assert.equal(await interactiveTtftCount(srv), before + 1, 'one interactive request');

    const piped = await new Promise((resolve) => {
      const p = spawn(SUPERFLUID, ['run', ...common], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stdin.end('a question from a pipe\n');
      p.on('exit', (code) => resolve({ code, stdout }));
    });
    assert.equal(piped.code, 0);
    assert.ok(piped.stdout.trim().length > 0);
    assert.equal(await interactiveTtftCount(srv), before + 2);
  } finally {
    await srv.stop();
  }
});

test('run exits 1 with the API\'s message when the request is refused', async () => {
  const srv = await startServer(['--ctx-size', '64']); // a context the prompt overflows
  try {
    const r = await runSuperfluid(['run', 'default', 'word '.repeat(200), '--port', String(srv.port), '--state-dir', srv.stateDir]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error: .*too long/);
  } finally {
    await srv.stop();
  }
});

test('run with a bad model name and no server exits non-zero with the store\'s message', async () => {
  // No server on the port, so run must get the model first: a hub name it cannot pull
  // (offline, nothing in the test's empty hub cache) and a file that does not exist.
  const stateDir = mkdtempSync(join(tmpdir(), 'sf-run-bad-'));
  const env = { ...process.env, HF_HUB_OFFLINE: '1', XDG_CACHE_HOME: join(stateDir, 'cache'), HF_HOME: join(stateDir, 'hf') };
  const common = ['hi', '--port', String(await freePort()), '--state-dir', stateDir];
  const hub = await runSuperfluid(['run', 'no-such-org/no-such-model:Q4_K_M', ...common], env);
  assert.notEqual(hub.code, 0);
  assert.match(hub.stderr, /no-such-org\/no-such-model/);
  assert.match(hub.stderr, /no copy of no-such-org\/no-such-model/, hub.stderr);
  for (const name of ['first', 'second']) {
    const file = await runSuperfluid(['run', `/nonexistent/${name}.gguf`, ...common], env);
    assert.notEqual(file.code, 0);
    assert.match(file.stderr, new RegExp(`model not found: /nonexistent/${name}\\.gguf`), file.stderr);
    // Only this start's lines: the earlier failure in the same log file is not repeated.
    if (name === 'second') assert.doesNotMatch(file.stderr, /first\.gguf/, file.stderr);
  }
});

test('the terminal chat: commands, a multi-line message, Ctrl-C stops an answer, history kept', async () => {
  const srv = await startServer();
  try {
    const args = ['--port', String(srv.port), '--state-dir', srv.stateDir];
    const session = () => onTerminal(args, [
      [500, '/set think off\n'],
      [300, '"""\nfirst line\nsecond line"""\n'],  // an unbounded answer on the random model...
      [2500, '\x03'],                              // ... stopped by Ctrl-C
      [1500, '/clear\n'],
      [300, '/bye\n'],
    ]);
    // The random model may still end its answer by itself before the Ctrl-C (once in CI, after
    // ~150 tokens): the Ctrl-C then meets the prompt ('>>> ^C'), and there was nothing to stop.
    // Such a terminal session is run again, up to 3 times.
    let r = await session();
    for (let i = 1; i < 3 && !/\(stopped\)/.test(r.out) && />>> \^C/.test(r.out); i++) {
      console.log(`the answer ended before the Ctrl-C (try ${i}); again`);
      r = await session();
    }
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /Thinking off\./);
    assert.match(r.out, /\(stopped\)/);
    assert.match(r.out, /Cleared the conversation\./);
    // The stopped answer's session was cancelled on the server, not left generating.
    const idle = await until(async () => (await (await fetch(`${srv.url}/api/ps`)).json()).sessions.length === 0, 10000);
    assert.ok(idle, 'no session left running after Ctrl-C');
    const history = readFileSync(join(srv.stateDir, 'run_history'), 'utf8');
    assert.match(history, /first line\nsecond line\n/);
    assert.match(history, /\/bye\n/);
  } finally {
    await srv.stop();
  }
});
