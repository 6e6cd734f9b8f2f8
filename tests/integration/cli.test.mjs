// The command line as a new user meets it (issue #36, "The CLI a person meets"): --help
// without parser notation or internal subcommands, a second serve on a held port refused, a
// lone `run` argument that is no model taken as the prompt, a server started by run/launch
// named on exit with how to stop it, `ls`/`show` as Ollama users type them, `launch --print`
// naming the model that will be served, --ctx-size capped at the model's training context,
// a file that is not GGUF called that.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MKMODEL, freePort, model, runSuperfluid, startServer } from '../lib/server.mjs';
import { startHub } from '../lib/hub.mjs';

// `superfluid ARGS` killed after `ms` if it has not exited (a serve that wrongly starts).
const runBounded = (args, ms = 30000, env = process.env) =>
  runSuperfluid(args, env, { onSpawn: (p) => setTimeout(() => p.kill('SIGKILL'), ms).unref() });

const SUBCOMMANDS = ['serve', 'join', 'token', 'nodes', 'ps', 'pull', 'list', 'ls', 'show', 'rm', 'launch', 'run', 'stop', 'bench'];

test('--help: no parser notation, no internal worker subcommand', async () => {
  const top = await runSuperfluid(['--help']);
  assert.equal(top.code, 0, top.stderr);
  assert.doesNotMatch(top.stdout, /^\s+worker\s/m, top.stdout);
  assert.match(top.stdout, /^\s+serve\s/m);
  for (const sub of SUBCOMMANDS) {
    const r = await runSuperfluid([sub, '--help']);
    assert.equal(r.code, 0, `${sub} --help: ${r.stderr}`);
    // CLI11's own notation: a type name joined to a validator's, a unit placeholder, a
    // flag's default value.
    assert.doesNotMatch(r.stdout, /\b(INT|TEXT|FLOAT|UINT):/, `${sub} --help:\n${r.stdout}`);
    assert.doesNotMatch(r.stdout, /\[UNIT\]|\{false\}|\{true\}|kb\(=1024b\)/, `${sub} --help:\n${r.stdout}`);
  }
  const serve = (await runSuperfluid(['serve', '--help'])).stdout;
  assert.match(serve, /--port INT \(1-65535\)=8453/);
  assert.match(serve, /--journal-max-age DURATION=7d/);
  assert.match(serve, /--journal-max-size SIZE=256MiB/);
  assert.match(serve, /--flash-attn \{auto,on,off\}=auto/);
  assert.match(serve, /--no-local-worker\s/);
  // Hidden, yet it still runs: serve starts it.
  assert.equal((await runSuperfluid(['worker', '--help'])).code, 0);
});

test('a second serve on a port a serve holds exits non-zero naming the port; so does a foreign process\'s port', async () => {
  const first = await startServer();
  try {
    const second = await runBounded(['serve', model(), '--port', String(first.port), '--state-dir', mkdtempSync(join(tmpdir(), 'sf-cli-second-'))]);
    const out = second.stdout + second.stderr;
    assert.notEqual(second.code, 0, out);
    assert.match(out, new RegExp(`port ${first.port} is in use; another superfluid server answers there`), out);
    assert.doesNotMatch(out, /signal 15|shutting down/, out);
    // The first one still answers alone.
    assert.equal((await fetch(`${first.url}/health`)).status, 200);
  } finally {
    await first.stop();
  }
  const foreign = createServer();
  await new Promise((r) => foreign.listen(0, '127.0.0.1', r));
  const port = foreign.address().port;
  try {
    const r = await runBounded(['serve', model(), '--port', String(port), '--state-dir', mkdtempSync(join(tmpdir(), 'sf-cli-foreign-'))]);
    const out = r.stdout + r.stderr;
    assert.notEqual(r.code, 0, out);
    assert.match(out, new RegExp(`port ${port} is in use; another process holds it`), out);
    assert.doesNotMatch(out, /signal 15|shutting down/, out);
  } finally {
    foreign.close();
  }
});

test('run: a lone argument that is not a model is the prompt', async () => {
  const srv = await startServer();
  try {
    const common = ['--port', String(srv.port), '--state-dir', srv.stateDir, '--max-tokens', '4'];
    for (const prompt of ['Say hi', 'hello']) {
      const r = await runBounded(['run', ...common, prompt]);
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stderr, /no prompt|model not found|not a hub model/, r.stderr);
      assert.ok(r.stdout.trim().length > 0, 'the answer is printed');
      assert.doesNotMatch(r.stderr, /keeps running/, 'a server found running is not named');
    }
    // A model name first still names the model.
    const named = await runBounded(['run', 'default', 'Say', 'hi', ...common]);
    assert.equal(named.code, 0, named.stderr);
    const ttft = (await (await fetch(`${srv.url}/metrics`)).text()).match(/time_to_first_token_seconds_count\{priority="interactive"\} (\d+)/);
    assert.equal(Number(ttft?.[1]), 3, 'three answered prompts');
  } finally {
    await srv.stop();
  }
});

test('run and launch that started a server say on exit that it keeps running and how to stop it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-cli-left-'));
  const runState = join(dir, 'run-state');
  const port = await freePort();
  const r = await runBounded(['run', model(), 'hi', '--port', String(port), '--state-dir', runState, '--max-tokens', '4'], 60000);
  const stopRun = ['stop', '--state-dir', runState];
  try {
    assert.equal(r.code, 0, r.stderr);
    const pid = /started for this \(pid (\d+), 127\.0\.0\.1:(\d+)\) keeps running; `superfluid stop --state-dir (\S+)` stops it/.exec(r.stderr);
    assert.ok(pid, r.stderr);
    assert.equal(Number(pid[2]), port);
    assert.equal(pid[3], runState);
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200, 'still running');
    // A second run finds it running: nothing to say.
    const again = await runBounded(['run', 'hi', '--port', String(port), '--state-dir', runState, '--max-tokens', '4']);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /keeps running/);
  } finally {
    const s = await runBounded(stopRun);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stderr, /stopping the server \(pid \d+, state directory .*\)\nsuperfluid stop: stopped/);
  }
  await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), 'the server is gone');
  const none = await runBounded(stopRun);
  assert.equal(none.code, 1);
  assert.match(none.stderr, new RegExp(`no server runs on the state directory ${runState}`));

  // launch, with an agent it execs (the Ollama CLI, here a stand-in script).
  const agent = join(dir, 'fake-ollama');
  writeFileSync(agent, '#!/bin/sh\nexit 3\n');
  chmodSync(agent, 0o755);
  const launchState = join(dir, 'launch-state');
  const lport = await freePort();
  const l = await runBounded(['launch', 'ollama', '--bin', agent, '--port', String(lport), '--model', model(), '--state-dir', launchState], 60000);
  try {
    assert.equal(l.code, 3, l.stderr); // the agent's exit code
    assert.match(l.stderr, new RegExp(`superfluid launch: the server started for this \\(pid \\d+, 127\\.0\\.0\\.1:${lport}\\) keeps running; \`superfluid stop --state-dir ${launchState}\` stops it`), l.stderr);
  } finally {
    assert.equal((await runBounded(['stop', '--state-dir', launchState])).code, 0);
  }
});

test('a file that is not GGUF is called that (bad magic), by serve and run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-cli-magic-'));
  const zip = join(dir, 'model.gguf');
  writeFileSync(zip, Buffer.from('PK\x03\x04 a zip, not a model'));
  const r = await runBounded(['serve', zip, '--port', String(await freePort()), '--state-dir', join(dir, 'state')]);
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 1, out);
  assert.match(out, /model\.gguf is not a GGUF file \(bad magic "PK\\x03\\x04"; a GGUF file starts with "GGUF"\)/, out);
  assert.doesNotMatch(out, /expected a \.gguf file/);
  const run = await runBounded(['run', zip, 'hi', '--port', String(await freePort()), '--state-dir', join(dir, 'state')]);
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /is not a GGUF file \(bad magic/, run.stderr);
});

test('ls and show as Ollama users type them: NAME ID SIZE MODIFIED; architecture, parameters, context length, quantization', async () => {
  const hub = await startHub();
  try {
    const bytes = readFileSync(model({ seed: 2 }));
    hub.addRepo('test/Tiny-GGUF', { 'Tiny-Q8_0.gguf': bytes });
    const dir = mkdtempSync(join(tmpdir(), 'sf-cli-ls-'));
    const env = { ...process.env, HF_ENDPOINT: hub.url, HF_HOME: join(dir, 'hf') };
    delete env.HF_HUB_OFFLINE;
    const state = ['--state-dir', join(dir, 'state')];
    assert.equal((await runBounded(['pull', 'test/Tiny-GGUF:Q8_0', ...state], 60000, env)).code, 0);

    const ls = await runBounded(['ls', ...state], 30000, env);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^NAME\s+ID\s+SIZE\s+MODIFIED\s+PATH\n/);
    const id = hub.sha256(bytes).slice(0, 12);
    assert.match(ls.stdout, new RegExp(`^test/Tiny-GGUF:Q8_0\\s+${id}\\s+15\\.7 MiB\\s+less than a minute ago\\s+/`, 'm'), ls.stdout);
    assert.equal((await runBounded(['list', ...state], 30000, env)).stdout, ls.stdout, 'ls is list');

    const show = await runBounded(['show', 'test/Tiny-GGUF:Q8_0', ...state], 30000, env);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^  Model\n    architecture\s+qwen3\n    parameters\s+9\.\d\dM\n    context length\s+32768\n    embedding length\s+64\n    quantization\s+F16\n/, show.stdout);
    assert.match(show.stdout, /size\s+15\.7 MiB/);
    // A local file, with its own training context.
    const small = join(dir, 'small.gguf');
    execFileSync(MKMODEL, ['--preset', 'tiny', '--context-length', '2048', '--out', small]);
    const local = await runBounded(['show', small, ...state], 30000, env);
    assert.match(local.stdout, /context length\s+2048\n/, local.stdout);
    const missing = await runBounded(['show', 'test/Other-GGUF:Q4_K_M', ...state], 30000, env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /test\/Other-GGUF:Q4_K_M is not pulled yet: superfluid pull test\/Other-GGUF:Q4_K_M/);
  } finally {
    await hub.close();
  }
});

test('--ctx-size above the model\'s training context is capped with a warning, not reserved', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-cli-ctx-'));
  const small = join(dir, 'small.gguf');
  execFileSync(MKMODEL, ['--preset', 'tiny', '--context-length', '2048', '--out', small]);
  const srv = await startServer(['--ctx-size', '8192'], { modelPath: small }); // the flag given explicitly: the warning
  try {
    assert.match(srv.log(), /WARN serve: --ctx-size 8192 is more than the model was trained for \(2048 tokens\): capped at 2048/, srv.log());
    const ps = await (await fetch(`${srv.url}/api/ps`)).json();
    assert.equal(ps.models[0].context_length, 2048);
    // A prompt longer than the training context is refused as too long for the context.
    const long = await fetch(`${srv.baseURL}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'word '.repeat(3000), max_tokens: 1 }),
    });
    assert.equal(long.status, 400);
    assert.match(await long.text(), /context_length_exceeded/);
  } finally {
    await srv.stop();
  }
  // Without --ctx-size the default is capped too, without a warning.
  const quiet = await startServer([], { modelPath: small });
  try {
    assert.doesNotMatch(quiet.log(), /WARN serve: --ctx-size/);
    assert.equal((await (await fetch(`${quiet.url}/api/ps`)).json()).models[0].context_length, 2048);
  } finally {
    await quiet.stop();
  }
});

test('launch --print names the model that will really be served: offline, the embedded one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-cli-print-'));
  const state = join(dir, 'state');
  const port = await freePort();
  const base = { ...process.env, HF_HOME: join(dir, 'hf') };
  delete base.HF_HUB_OFFLINE;
  const printed = async (env) => {
    const r = await runBounded(['launch', 'claude', '--print', '--port', String(port), '--state-dir', state], 30000, env);
    assert.equal(r.code, 0, r.stderr);
    const header = r.stdout.split('\n')[0];
    return { model: /, model (\S+), priority/.exec(header)?.[1], env: /export ANTHROPIC_MODEL='([^']*)'/.exec(r.stdout)?.[1] };
  };
  // HF_HUB_OFFLINE=1, and a hub that cannot be reached: serve would serve the embedded model.
  for (const env of [{ ...base, HF_HUB_OFFLINE: '1' }, { ...base, HF_ENDPOINT: 'http://127.0.0.1:9' }]) {
    assert.deepEqual(await printed(env), { model: 'superfluid-tiny', env: 'superfluid-tiny' });
  }
  // What launch then really serves, offline, with no --model.
  const agent = join(dir, 'fake-ollama');
  writeFileSync(agent, '#!/bin/sh\nexit 0\n');
  chmodSync(agent, 0o755);
  const offline = { ...base, HF_HUB_OFFLINE: '1' };
  const l = await runBounded(['launch', 'ollama', '--bin', agent, '--port', String(port), '--state-dir', state], 60000, offline);
  try {
    assert.equal(l.code, 0, l.stderr);
    const served = (await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json()).data[0].id;
    assert.equal(served, 'superfluid-tiny');
  } finally {
    await runBounded(['stop', '--state-dir', state]);
  }
});
