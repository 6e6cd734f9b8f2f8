// `superfluid launch claude` runs the real Claude Code (the @anthropic-ai/claude-code npm
// package installed here) in print mode through one completed turn against the tiny model,
// over the Anthropic Messages API (issue #7), with the priority class launch gives it (none by default).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, runSuperfluid } from '../lib/server.mjs';

const CLAUDE = resolve('node_modules/@anthropic-ai/claude-code/bin/claude.exe');

test('launch claude: Claude Code completes a turn in print mode against the tiny model', async (t) => {
  // Claude Code's system prompt and tool definitions are ~19K tokens: serve's default (the KV
  // pool, each request up to the model's training context, 32,768 for the tiny model) holds them.
  const server = await startServer();
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
    // The tiny model's answer is random and never ends by itself: the output cap ends it, and
    // Claude Code reports that cap only after parsing the whole, well-formed stream.
    const env = { ...process.env, HOME: home, CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8' };
    const r = await runSuperfluid(
      ['launch', 'claude', '--bin', CLAUDE, '--port', String(server.port), '--state-dir', server.stateDir,
        '--', '-p', 'say hi', '--max-turns', '1', '--tools', '', '--system-prompt', 'You are terse.'],
      env,
    );
    const out = r.stdout + r.stderr;
    assert.doesNotMatch(out, /API Error: (4|5)\d\d|Unexpected event|ECONNREFUSED|Could not/i, out);
    assert.ok(r.code === 0 || /exceeded the 8 output token maximum/.test(out), `exit ${r.code}:\n${out}\nserver:\n${server.log().slice(-3000)}`);
    // The turn's requests ran in the class launch gave them: none, so the server's default
    // (normal), as for any client that marks nothing (issue #36).
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const ttft = Number(/time_to_first_token_seconds_count\{priority="normal"\} (\d+)/.exec(metrics)?.[1]);
    assert.ok(ttft > 0, metrics);
  } finally {
    await server.stop();
  }
});
