// `superfluid launch claude` runs the real Claude Code (the @anthropic-ai/claude-code npm
// package installed here) in print mode through one completed turn against the tiny model,
// over the Anthropic Messages API (issue #7), with the priority class launch gives it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, runSuperfluid } from '../lib/server.mjs';

const CLAUDE = resolve('node_modules/@anthropic-ai/claude-code/bin/claude.exe');

test('launch claude: Claude Code completes a turn in print mode against the tiny model', async (t) => {
  // Claude Code's system prompt and tool definitions are tens of thousands of tokens.
  const server = await startServer(['--ctx-size', '32768', '--parallel', '2']);
  try {
    const probe = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'default', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
    });
    if (probe.status === 404 && /unknown endpoint/.test(await probe.text())) {
      t.skip('the Anthropic Messages API (/v1/messages, issue #7) is not in this build');
      return;
    }
    const home = mkdtempSync(join(tmpdir(), 'sf-claude-home-'));
    const env = { ...process.env, HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude'), CLAUDE_CODE_MAX_OUTPUT_TOKENS: '64' };
    const r = await runSuperfluid(
      ['launch', 'claude', '--bin', CLAUDE, '--port', String(server.port), '--state-dir', server.stateDir,
        '--', '-p', 'Say hello.', '--output-format', 'json', '--max-turns', '1'],
      env,
    );
    assert.equal(r.code, 0, `stderr:\n${r.stderr}\nstdout:\n${r.stdout}\nserver:\n${server.log().slice(-3000)}`);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1));
    assert.equal(result.type, 'result');
    assert.equal(result.is_error, false, r.stdout);
    assert.equal(typeof result.result, 'string');
    // The turn's requests ran in the class launch gave them.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const ttft = Number(/time_to_first_token_seconds_count\{priority="interactive"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(ttft > 0, metrics);
  } finally {
    await server.stop();
  }
});
