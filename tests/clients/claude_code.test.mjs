// A real agent against the server: the @anthropic-ai/claude-code CLI in print mode (-p) with
// ANTHROPIC_BASE_URL pointing here completes a turn without a protocol error. The tiny model has
// random weights, so the answer is noise and never ends by itself: output is capped with
// CLAUDE_CODE_MAX_OUTPUT_TOKENS, and Claude Code then reports that the (complete, well-formed)
// answer hit that cap — which it can only do after parsing the whole Anthropic stream.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startServer } from '../lib/server.mjs';
import { CLAUDE, runClaude } from '../lib/claude.mjs';

let server;

before(async () => {
  // Claude Code's default system prompt and 24 tool definitions are ~19k tokens: serve's
  // default context (the model's training context, 32,768 for the tiny model) holds them.
  server = await startServer();
});
after(async () => server && (await server.stop()));

const runClaudeHere = (args, timeoutMs) =>
  runClaude(server.url, ['-p', 'say hi', '--max-turns', '1', ...args], { env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8' }, timeoutMs });

// A finished turn: an answer, or Claude Code's note that the answer reached the output cap.
function assertTurnCompleted({ code, out }) {
  assert.doesNotMatch(out, /API Error: (4|5)\d\d|Unexpected event|stream.*(ended|stopped|interrupted)|ECONNREFUSED|Could not/i, out);
  assert.ok(code === 0 || /exceeded the 8 output token maximum/.test(out), `exit ${code}:\n${out}`);
}

test('claude-code print mode, no tools: completes a turn against the server', { skip: !existsSync(CLAUDE) && 'claude-code not installed' }, async () => {
  const before = (await server.metrics()).generation_tokens_total ?? 0;
  assertTurnCompleted(await runClaudeHere(['--tools', '', '--system-prompt', 'You are terse.'], 240000));
  assert.ok((await server.metrics()).generation_tokens_total > before, 'the server generated the answer');
});

test('claude-code print mode with its default system prompt and tools completes a turn', { skip: !existsSync(CLAUDE) && 'claude-code not installed' }, async () => {
  const before = (await server.metrics()).prompt_tokens_total ?? 0;
  assertTurnCompleted(await runClaudeHere([], 1200000));
  assert.ok((await server.metrics()).prompt_tokens_total - before > 10000, 'the full agent prompt was served');
});
