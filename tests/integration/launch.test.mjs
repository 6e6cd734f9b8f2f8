// `superfluid launch AGENT` (issue #8): what each agent gets (--print), and a real launch that
// starts the server in the background, runs the agent with its config, and restores the
// agent's own config files afterwards. The agents themselves are not installed here; a small
// script stands in for one (--bin), except Claude Code in tests/clients.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, chmodSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { model, startServer, freePort, runSuperfluid, MKMODEL } from '../lib/server.mjs';

const cleanup = [];
after(async () => {
  for (const f of cleanup) await f();
});

const sf = runSuperfluid;

/** Parses --print output: { env, unset, files: {path: content}, exec: [argv] }. */
function parsePrint(text) {
  const out = { env: {}, unset: [], files: {}, exec: null, header: text.split('\n')[0] };
  const unq = (s) => [...s.matchAll(/'((?:[^']|'\\'')*)'/g)].map((m) => m[1].replaceAll("'\\''", "'"));
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    let m;
    if ((m = /^export (\w+)=(.*)$/.exec(l))) out.env[m[1]] = unq(m[2])[0];
    else if ((m = /^unset (\w+)$/.exec(l))) out.unset.push(m[1]);
    else if ((m = /^# file (\S+) \(/.exec(l))) {
      const body = [];
      while (lines[++i] !== '# end of file') body.push(lines[i]);
      out.files[m[1]] = body.join('\n');
    } else if (l.startsWith('exec ')) out.exec = unq(l.slice(5));
  }
  return out;
}

test('launch --print: every agent gets the documented variables and config', async () => {
  // Not the default context: openclaw's contextWindow (checked below) must be the server's.
  const server = await startServer(['--ctx-size', '4096']);
  cleanup.push(() => server.stop());
  const home = mkdtempSync(join(tmpdir(), 'sf-home-'));
  // A user's existing pi config: launch merges its provider in and leaves the rest.
  mkdirSync(join(home, '.pi', 'agent'), { recursive: true });
  writeFileSync(join(home, '.pi', 'agent', 'models.json'), JSON.stringify({ providers: { mine: { baseUrl: 'http://x' } } }));
  const env = { ...process.env, HOME: home };
  const state = server.stateDir;
  const print = async (agent, ...extra) => {
    const r = await sf(['launch', agent, '--print', '--port', String(server.port), '--state-dir', state, ...extra], env);
    assert.equal(r.code, 0, r.stderr);
    return parsePrint(r.stdout);
  };
  const url = server.url;
  const id = 'tiny-qwen3-1'; // the running server's model id, asked from /v1/models

  const claude = await print('claude', '--', '-p', 'hi');
  assert.equal(claude.env.ANTHROPIC_BASE_URL, url);
  // No class by default (issue #36): the key names none and tells the agent apart; no header.
  assert.equal(claude.env.ANTHROPIC_AUTH_TOKEN, 'sk-superfluid-claude');
  for (const v of ['ANTHROPIC_MODEL', 'ANTHROPIC_SMALL_FAST_MODEL', 'ANTHROPIC_DEFAULT_OPUS_MODEL', 'ANTHROPIC_DEFAULT_SONNET_MODEL', 'ANTHROPIC_DEFAULT_HAIKU_MODEL', 'CLAUDE_CODE_SUBAGENT_MODEL'])
    assert.equal(claude.env[v], id, v);
  assert.equal(claude.env.CLAUDE_CODE_ATTRIBUTION_HEADER, '0');
  assert.equal(claude.env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, '1');
  assert.equal(claude.env.ANTHROPIC_CUSTOM_HEADERS, undefined);
  assert.deepEqual(claude.unset, ['ANTHROPIC_API_KEY']);
  assert.deepEqual(claude.exec, ['claude', '-p', 'hi']);

  const marked = await print('claude', '--priority', 'interactive');
  assert.equal(marked.env.ANTHROPIC_CUSTOM_HEADERS, 'X-Superfluid-Priority: interactive');
  assert.equal(marked.env.ANTHROPIC_AUTH_TOKEN, 'sk-interactive-superfluid');
  const batch = await print('claude', '--priority', 'batch');
  assert.equal(batch.env.ANTHROPIC_CUSTOM_HEADERS, 'X-Superfluid-Priority: batch');
  assert.equal(batch.env.ANTHROPIC_AUTH_TOKEN, 'sk-batch-superfluid');

  const codex = await print('codex');
  const overrides = codex.exec.filter((_, i) => codex.exec[i - 1] === '-c');
  assert.deepEqual(overrides, [
    'model_provider="superfluid"',
    `model="${id}"`,
    'model_providers.superfluid.name="Superfluid"',
    `model_providers.superfluid.base_url="${url}/v1"`,
    'model_providers.superfluid.wire_api="responses"',
    // Offline (issue #19): no plugin sync, analytics or update check.
    'features.plugins=false',
    'analytics.enabled=false',
    'check_for_update_on_startup=false',
  ]);

  const codexMarked = await print('codex', '--priority', 'interactive');
  assert.ok(codexMarked.exec.includes('model_providers.superfluid.http_headers={ "X-Superfluid-Priority" = "interactive" }'));

  const opencodePlan = await print('opencode');
  const opencode = JSON.parse(opencodePlan.env.OPENCODE_CONFIG_CONTENT);
  for (const v of ['MODELS_FETCH', 'AUTOUPDATE', 'LSP_DOWNLOAD', 'DEFAULT_PLUGINS', 'SHARE'])
    assert.equal(opencodePlan.env[`OPENCODE_DISABLE_${v}`], '1', v);
  assert.equal(opencode.autoupdate, false);
  assert.equal(opencode.share, 'disabled');
  assert.equal(opencodePlan.files[join(home, '.config/opencode/.npmrc')], 'offline=true');
  assert.equal(opencode.provider.superfluid.npm, '@ai-sdk/openai-compatible');
  assert.equal(opencode.provider.superfluid.options.baseURL, `${url}/v1`);
  assert.deepEqual(opencode.provider.superfluid.options.headers, {});
  assert.equal(opencode.provider.superfluid.options.apiKey, 'sk-superfluid-opencode');
  assert.equal(opencode.model, `superfluid/${id}`);

  const pi = await print('pi');
  const piCfg = JSON.parse(pi.files[join(home, '.pi/agent/models.json')]);
  assert.equal(piCfg.providers.mine.baseUrl, 'http://x');
  assert.deepEqual(piCfg.providers.superfluid, {
    api: 'openai-completions', apiKey: 'sk-superfluid-pi', baseUrl: `${url}/v1`,
    headers: {}, models: [{ id }],
  });
  assert.deepEqual(pi.exec, ['pi', '--provider', 'superfluid', '--model', id]);
  assert.equal(pi.env.PI_OFFLINE, '1');
  assert.equal(pi.env.PI_TELEMETRY, '0');

  const cline = await print('cline');
  const gs = JSON.parse(cline.files[join(home, '.cline/data/globalState.json')]);
  assert.equal(gs.actModeApiProvider, 'openai');
  assert.equal(gs.planModeApiProvider, 'openai');
  assert.equal(gs.openAiBaseUrl, `${url}/v1`);
  assert.equal(gs.actModeOpenAiModelId, id);
  assert.deepEqual(gs.openAiHeaders, {});
  assert.equal(JSON.parse(cline.files[join(home, '.cline/data/secrets.json')]).openAiApiKey, 'sk-superfluid-cline');
  // Cline 3 reads its provider from settings/providers.json; telemetry and updates off.
  const cp = JSON.parse(cline.files[join(home, '.cline/data/settings/providers.json')]);
  assert.equal(cp.lastUsedProvider, 'openai-compatible');
  assert.deepEqual(cp.providers['openai-compatible'].settings, {
    provider: 'openai-compatible', apiKey: 'sk-superfluid-cline', model: id, baseUrl: `${url}/v1`,
    headers: {},
  });
  assert.deepEqual(JSON.parse(cline.files[join(home, '.cline/data/settings/global-settings.json')]),
    { telemetryOptOut: true, autoUpdateEnabled: false });
  assert.equal(cline.env.E2E_TEST, 'true');

  const hermes = await print('hermes');
  assert.equal(hermes.env.HERMES_HOME, join(state, 'launch', 'hermes'));
  const yaml = hermes.files[join(state, 'launch', 'hermes', 'config.yaml')];
  assert.match(yaml, new RegExp(`default: "${id}"\\n  provider: custom\\n  base_url: "${url}/v1"\\n  api_key: "sk-superfluid-hermes"`));

  const openclaw = await print('openclaw');
  const ocPath = join(state, 'launch', 'openclaw', 'openclaw.json');
  assert.equal(openclaw.env.OPENCLAW_CONFIG_PATH, ocPath);
  const oc = JSON.parse(openclaw.files[ocPath]);
  assert.equal(oc.models.providers.ollama.api, 'ollama'); // native Ollama API, no /v1
  assert.equal(oc.models.providers.ollama.baseUrl, url);
  assert.equal(oc.models.providers.ollama.models[0].contextWindow, 4096);
  assert.equal(oc.agents.defaults.model.primary, `ollama/${id}`);

  const ollama = await print('ollama', '--', 'run', id);
  assert.equal(ollama.env.OLLAMA_HOST, url);
  assert.deepEqual(ollama.exec, ['ollama', 'run', id]);

  const unknown = await sf(['launch', 'nope', '--print'], env);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown agent "nope"; known agents:\n\s+claude\s+Claude Code/);
  // --print starts nothing: with no server, it names the model serve would use (offline: the
  // embedded one; integration.cli checks it against what serve then serves).
  const none = await sf(['launch', 'claude', '--print', '--port', String(await freePort()), '--state-dir', state], { ...env, HF_HUB_OFFLINE: '1' });
  assert.equal(parsePrint(none.stdout).env.ANTHROPIC_MODEL, 'superfluid-tiny');
});

test('launch starts the server in the background, runs the agent with its args, restores its config', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-launch-'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.pi', 'agent'), { recursive: true });
  const original = '{"providers": {"mine": {}}}\n';
  writeFileSync(join(home, '.pi', 'agent', 'models.json'), original);
  // The stand-in agent records what it was given, then asks the server for its health.
  const agent = join(dir, 'fake-pi');
  const seen = join(dir, 'seen.txt');
  writeFileSync(agent, `#!/bin/sh\n{ echo "ARGS $*"; cat "$HOME/.pi/agent/models.json"; } > "${seen}"\nexit 7\n`);
  chmodSync(agent, 0o755);
  const port = await freePort();
  const state = join(dir, 'state');
  const env = { ...process.env, HOME: home };
  const args = ['launch', 'pi', '--bin', agent, '--port', String(port), '--model', model(), '--state-dir', state, '--', '--print', 'hello'];
  const r = await sf(args, env);
  const pid = Number(/pid (\d+)/.exec(r.stderr)?.[1]);
  if (pid) cleanup.push(async () => { try { process.kill(pid, 'SIGTERM'); } catch {} });
  assert.equal(r.code, 7, r.stderr); // the agent's exit code
  // With serve's defaults (issue #36): the KV pool gives each request the model's training context.
  assert.match(r.stderr, new RegExp(`starting \`superfluid serve \\S+\` on 127\\.0\\.0\\.1:${port} \\(pid \\d+, log ${state}/launch/serve-${port}\\.log\\)`));
  assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200); // still running
  const s = readFileSync(seen, 'utf8');
  assert.match(s, /^ARGS --provider superfluid --model tiny-qwen3-1 --print hello\n/);
  assert.match(s, /"superfluid"/);
  assert.equal(readFileSync(join(home, '.pi', 'agent', 'models.json'), 'utf8'), original);
  assert.equal(existsSync(join(home, '.pi', 'agent', 'models.json.superfluid-backup')), false);

  // A second launch finds the running server and starts none.
  const again = await sf(args, env);
  assert.equal(again.code, 7, again.stderr);
  assert.doesNotMatch(again.stderr, /starting/);

  const missing = await sf(['launch', 'codex', '--bin', join(dir, 'no-such-codex'), '--port', String(port)], env);
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /no-such-codex \(Codex\) is not installed: npm install -g @openai\/codex, or pass --bin PATH/);
});

test('the class launch gives an agent reaches the server: header (OpenCode) and key only (Hermes); none by default', async () => {
  // OpenCode needs 16,384 tokens of context, Hermes Agent 32,768 (launch refuses less): serve's
  // default gives the tiny model's training context, 32,768.
  const server = await startServer();
  cleanup.push(() => server.stop());
  const dir = mkdtempSync(join(tmpdir(), 'sf-launch-class-'));
  // Stand-in agents that send one chat request the way the real ones would from what launch
  // gave them, and print the class the server answered with.
  const ask = `async function ask(url, key, headers, model) {
    const r = await fetch(url + '/chat/completions', { method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key, ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }) });
    console.log(r.status, r.headers.get('x-superfluid-priority'));
  }\n`;
  const opencode = join(dir, 'fake-opencode.mjs');
  writeFileSync(opencode, `#!/usr/bin/env node\n${ask}const p = JSON.parse(process.env.OPENCODE_CONFIG_CONTENT).provider.superfluid;
await ask(p.options.baseURL, p.options.apiKey, p.options.headers, Object.keys(p.models)[0]);\n`);
  const hermes = join(dir, 'fake-hermes.mjs');
  writeFileSync(hermes, `#!/usr/bin/env node\n${ask}import { readFileSync } from 'node:fs';
const y = readFileSync(process.env.HERMES_HOME + '/config.yaml', 'utf8');
const v = (k) => JSON.parse(new RegExp(k + ': (".*")').exec(y)[1]);
await ask(v('base_url'), v('api_key'), {}, v('default'));\n`);
  chmodSync(opencode, 0o755);
  chmodSync(hermes, 0o755);
  const base = ['--port', String(server.port), '--state-dir', server.stateDir];
  for (const [agent, bin] of [['opencode', opencode], ['hermes', hermes]]) {
    const batch = await sf(['launch', agent, '--bin', bin, '--priority', 'batch', ...base]);
    assert.equal(batch.code, 0, batch.stderr);
    assert.equal(batch.stdout.trim(), '200 batch', agent);
    const interactive = await sf(['launch', agent, '--bin', bin, '--priority', 'interactive', ...base]);
    assert.equal(interactive.stdout.trim(), '200 interactive', agent);
    // Unmarked by default (issue #36): the server's --default-priority, as for a person's chat
    // from a UI that marks nothing, so the agent never outranks it by class.
    const plain = await sf(['launch', agent, '--bin', bin, ...base]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout.trim(), '200 normal', agent);
  }
});

test('launch refuses a server whose context is too small for the agent, before the agent runs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-launch-ctx-'));
  // A stand-in Claude Code that records that it ran.
  const ran = join(dir, 'ran.txt');
  const agent = join(dir, 'fake-claude');
  writeFileSync(agent, `#!/bin/sh\necho ran >> "${ran}"\nexit 0\n`);
  chmodSync(agent, 0o755);
  const env = { ...process.env, HOME: join(dir, 'home') };
  const launch = (server, name = 'claude') =>
    sf(['launch', name, '--bin', agent, '--port', String(server.port), '--state-dir', server.stateDir, '--', '-p', 'say hi'], env);

  // serve --ctx-size 4096: Claude Code's first request (~19K tokens) cannot fit.
  const small = await startServer(['--ctx-size', '4096']);
  cleanup.push(() => small.stop());
  const r = await launch(small);
  assert.equal(r.code, 1, r.stderr);
  assert.equal(existsSync(ran), false, 'the agent ran');
  assert.equal(r.stderr.trim(), `superfluid launch: the server on 127.0.0.1:${small.port} gives each request 4,096 tokens of context; ` +
    `claude's first request needs about 19,000 (at least 32,768 to work): restart it with \`superfluid serve --port ${small.port} --ctx-size 32768\``);
  // Every agent with a minimum is refused alike; the Ollama CLI (a chat) has none.
  for (const [name, needs] of [['codex', '32,768'], ['opencode', '16,384'], ['cline', '16,384'], ['openclaw', '32,768'], ['hermes', '32,768']]) {
    const o = await launch(small, name);
    assert.equal(o.code, 1, o.stderr);
    assert.match(o.stderr, new RegExp(`4,096 tokens of context; ${name}'s first request needs .*${needs}.*--ctx-size ${needs.replace(',', '')}\``));
  }
  assert.equal(existsSync(ran), false, 'an agent ran');
  assert.equal((await launch(small, 'ollama')).code, 0);
  assert.equal(existsSync(ran), true);
  // launch --print says it too, and exits 0 (it runs nothing).
  const print = await sf(['launch', 'claude', '--print', '--port', String(small.port), '--state-dir', small.stateDir], env);
  assert.equal(print.code, 0, print.stderr);
  assert.match(print.stdout, /^# launch would refuse: the server on .* 4,096 tokens of context; claude's first request/m);

  // A server with enough context (serve's default: the training context, 32,768): the agent runs.
  const big = await startServer();
  cleanup.push(() => big.stop());
  rmSync(ran);
  const ok = await launch(big);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(existsSync(ran), true);

  // A model trained for less than Claude Code's first request: the restart would not help, so
  // launch names the model. One trained for more than the first request but less than the
  // minimum: the agent runs, with a warning.
  const short = join(dir, 'short.gguf');
  execFileSync(MKMODEL, ['--preset', 'tiny', '--context-length', '16384', '--out', short]);
  const trained16k = await startServer(['--ctx-size', '32768'], { modelPath: short }); // capped: 16,384
  cleanup.push(() => trained16k.stop());
  rmSync(ran);
  const no = await launch(trained16k);
  assert.equal(no.code, 1, no.stderr);
  assert.equal(existsSync(ran), false, 'the agent ran');
  assert.match(no.stderr, /the model short on 127\.0\.0\.1:\d+ gives each request 16,384 tokens of context \(all it was trained for\); claude's first request needs about 19,000 \(at least 32,768 to work\): serve a model with a longer context/);
  const mid = join(dir, 'mid.gguf');
  execFileSync(MKMODEL, ['--preset', 'tiny', '--context-length', '24576', '--out', mid]);
  // --no-kv-unified: a stream per sequence, 8,192 tokens each by default, is a server too small
  // for the agent that a restart with --ctx-size fixes (the pool, the default, gives 24,576).
  const trained24k = await startServer(['--no-kv-unified'], { modelPath: mid });
  cleanup.push(() => trained24k.stop());
  const restart = await launch(trained24k);
  assert.equal(restart.code, 1, restart.stderr);
  assert.match(restart.stderr, /gives each request 8,192 tokens of context; .*restart it with `superfluid serve --port \d+ --ctx-size 24576` \(all its model mid was trained for\)/);
  await trained24k.stop();
  const fullMid = await startServer([], { modelPath: mid }); // the default: all it was trained for
  cleanup.push(() => fullMid.stop());
  const warned = await launch(fullMid);
  assert.equal(warned.code, 0, warned.stderr);
  assert.equal(existsSync(ran), true);
  assert.match(warned.stderr, /warning: the model mid on .* gives each request 24,576 tokens of context \(all it was trained for\): claude's first request \(about 19,000\) fits, but it works with at least 32,768, so a long session may run out/);
});
