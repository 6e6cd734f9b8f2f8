// A real agent against the server: the @anthropic-ai/claude-code CLI in print mode (-p) with
// ANTHROPIC_BASE_URL pointing here completes a turn without a protocol error. The tiny model has
// random weights, so the answer is noise and never ends by itself: output is capped with
// CLAUDE_CODE_MAX_OUTPUT_TOKENS, and Claude Code then reports that the (complete, well-formed)
// answer hit that cap — which it can only do after parsing the whole Anthropic stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLAUDE = resolve(here, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe');
let server;

before(async () => {
  // Claude Code's default system prompt and 24 tool definitions are ~19k tokens.
  server = await startServer(['--ctx-size', '32768', '--parallel', '1']);
});
after(async () => server && (await server.stop()));

function runClaude(args, timeoutMs) {
  const home = mkdtempSync(join(tmpdir(), 'sf-claude-home-'));
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_AUTH_TOKEN: 'dummy',
    ANTHROPIC_MODEL: 'default',
    ANTHROPIC_SMALL_FAST_MODEL: 'default',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'default',
    CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8',
    CLAUDE_CODE_ATTRIBUTION_HEADER: '0',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  return new Promise((res) => {
    const p = spawn(CLAUDE, ['-p', 'say hi', '--max-turns', '1', ...args], { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      res({ code, out });
    });
  });
}

// A finished turn: an answer, or Claude Code's note that the answer reached the output cap.
function assertTurnCompleted({ code, out }) {
  assert.doesNotMatch(out, /API Error: (4|5)\d\d|Unexpected event|stream.*(ended|stopped|interrupted)|ECONNREFUSED|Could not/i, out);
  assert.ok(code === 0 || /exceeded the 8 output token maximum/.test(out), `exit ${code}:\n${out}`);
}

test('claude-code print mode, no tools: completes a turn against the server', { skip: !existsSync(CLAUDE) && 'claude-code not installed' }, async () => {
  const before = (await server.metrics()).generation_tokens_total ?? 0;
  assertTurnCompleted(await runClaude(['--tools', '', '--system-prompt', 'You are terse.'], 240000));
  assert.ok((await server.metrics()).generation_tokens_total > before, 'the server generated the answer');
});

test('claude-code print mode with its default system prompt and tools completes a turn', { skip: !existsSync(CLAUDE) && 'claude-code not installed' }, async () => {
  const before = (await server.metrics()).prompt_tokens_total ?? 0;
  assertTurnCompleted(await runClaude([], 1200000));
  assert.ok((await server.metrics()).prompt_tokens_total - before > 10000, 'the full agent prompt was served');
});
