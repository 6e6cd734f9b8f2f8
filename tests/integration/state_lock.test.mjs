// One server per state directory (issue #20): a second `serve` on the same --state-dir is
// refused naming the running one's PID; a head killed with SIGKILL leaves no stale lock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, model, runSuperfluid, startServer } from '../lib/server.mjs';

test('a second serve on the same state directory is refused with the first one\'s pid', async () => {
  const a = await startServer();
  try {
    const port = await freePort();
    const r = await runSuperfluid(['serve', model(), '--port', String(port), '--state-dir', a.stateDir]);
    assert.notEqual(r.code, 0, 'the second server must not start');
    assert.match(r.stderr + r.stdout, new RegExp(`another superfluid serve \\(pid ${a.proc.pid}\\)`));
    // The first server still answers: the refusal touched nothing of it.
    assert.equal((await fetch(`${a.url}/health`)).status, 200);
  } finally {
    await a.stop();
  }
});

test('a SIGKILLed head releases its state directory: the next serve starts on it', async () => {
  const a = await startServer();
  const exited = new Promise((r) => a.proc.once('exit', r));
  a.proc.kill('SIGKILL');
  await exited;
  const b = await startServer([], { stateDir: a.stateDir });
  try {
    assert.equal((await fetch(`${b.url}/health`)).status, 200);
  } finally {
    await b.stop();
  }
});
