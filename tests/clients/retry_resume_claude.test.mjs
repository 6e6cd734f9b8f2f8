// Retry-resume (issue #36) under Claude Code (`claude -p`, the real CLI from npm): the head is
// SIGKILLed while Claude Code reads its answer, and restarted on the same state dir and port.
// Claude Code knows nothing of sessions: it sends its request again (its own retry on a broken
// stream), and that request attaches to the interrupted session. The answer it gets is the text
// of an uninterrupted run, and the journal holds one session for it whose tokens were generated
// once (the restarted worker generated only the tokens after the journaled ones). Servers start
// with no flags (the feature is on by default).
//
// Greedy: Claude Code sends temperature 1 and no seed, so its requests carry `top_k: 1` through
// its own CLAUDE_CODE_EXTRA_BODY (merged into every request body): the reference run and the
// interrupted one then pick the same tokens. Answers are capped at N tokens
// (CLAUDE_CODE_MAX_OUTPUT_TOKENS: the random model never ends by itself).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../lib/server.mjs';
import { CLAUDE, runClaude } from '../lib/claude.mjs';

const N = 200;
const KILL_AT = 40;
const servers = [];
after(async () => {
  for (const s of servers) await s.stop();
});

/** `claude -p` against `url`, no tools, a short system prompt; resolves { code, out }. */
function runClaudeTurn(url) {
  const args = ['-p', 'Tell a long story about a lighthouse.', '--max-turns', '1', '--tools', '', '--system-prompt', 'You are terse.', '--output-format', 'json'];
  return runClaude(url, args, { env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: String(N), CLAUDE_CODE_EXTRA_BODY: JSON.stringify({ top_k: 1 }) } });
}

/** The journal's sessions, oldest first: { id, t0 (first placement, ms), placements, from (the last placement's first index), tokens, distinct, text }. */
function journal(stateDir) {
  const sql = `SELECT s.id, (SELECT min(at_ms) FROM placements p WHERE p.session = s.id) AS t0,
      (SELECT count(*) FROM placements p WHERE p.session = s.id),
      (SELECT from_idx FROM placements p WHERE p.session = s.id ORDER BY epoch DESC LIMIT 1),
      (SELECT count(*) FROM tokens t WHERE t.session = s.id),
      (SELECT count(DISTINCT idx) FROM tokens t WHERE t.session = s.id),
      hex((SELECT group_concat(x, '') FROM (SELECT CAST(text AS TEXT) AS x FROM tokens t WHERE t.session = s.id ORDER BY idx)))
    FROM sessions s ORDER BY t0`;
  const out = execFileSync('sqlite3', ['-separator', '|', join(stateDir, 'journal.db'), sql]).toString().trim();
  return out.split('\n').filter(Boolean).map((l) => {
    const [id, t0, placements, from, tokens, distinct, hex] = l.split('|');
    return { id, t0: +t0, placements: +placements, from: +from, tokens: +tokens, distinct: +distinct, text: Buffer.from(hex, 'hex').toString() };
  });
}

test('claude -p: the head SIGKILLed mid-answer and restarted; Claude Code\'s retry attaches to its session: the uninterrupted text, generated once', { skip: !existsSync(CLAUDE) && 'claude-code not installed' }, async () => {
  // The reference: an uninterrupted run. Its first request is the turn (Claude Code may follow
  // an answer cut at the cap with requests of its own; those are other sessions).
  const ref = await startServer([]);
  servers.push(ref);
  const r0 = await runClaudeTurn(ref.url);
  assert.doesNotMatch(r0.out, /Unable to connect|ECONNREFUSED/, r0.out);
  const want = journal(ref.stateDir)[0];
  assert.equal(want.tokens, N, 'the reference answer reached the cap');

  let head = await startServer([]);
  servers.push(head);
  const { stateDir, port } = head;
  const running = runClaudeTurn(head.url);
  for (let i = 0; i < 6000; i++) {
    if (((await head.metrics()).generation_tokens_total ?? 0) >= KILL_AT) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  head.proc.kill('SIGKILL');
  await new Promise((r) => (head.proc.exitCode !== null || head.proc.signalCode !== null ? r() : head.proc.once('exit', r)));
  const restartedAt = Date.now();
  head = await startServer([], { stateDir, port });
  servers.push(head);
  const r = await running;
  assert.doesNotMatch(r.out, /API Error: (4|5)\d\d|Unable to connect|ECONNREFUSED/, r.out);
  assert.equal(JSON.parse(r.out.slice(r.out.indexOf('{'))).usage !== undefined, true, r.out);
  assert.match(head.log(), /the same request again after a restart; attaching it at token \d+ \(retry-resume\)/, 'Claude Code\'s retry attached');

  const sessions = journal(stateDir);
  const interrupted = sessions.filter((s) => s.t0 < restartedAt);
  assert.equal(interrupted.length, 1, `one session for the interrupted request: ${JSON.stringify(sessions.map((s) => s.id))}`);
  const s = interrupted[0];
  assert.equal(s.placements, 2, 'placed once, then resumed once');
  assert.ok(s.from >= KILL_AT && s.from < N, `resumed at ${s.from}`);
  assert.equal(s.tokens, N);
  assert.equal(s.distinct, N, 'each index once');
  assert.equal(s.text, want.text, 'the text of the uninterrupted run');
  // Generated once: no session begun after the restart answers the same request again (greedy,
  // it would begin with the same text), and the restarted worker made the rest of this answer
  // and any other request Claude Code sent after it, nothing more.
  const after = sessions.filter((x) => x.t0 >= restartedAt);
  const again = after.filter((x) => x.text.slice(0, 80) === want.text.slice(0, 80));
  assert.equal(again.length, 0, `the request was generated again as ${again.map((x) => x.id)}`);
  const later = after.reduce((n, x) => n + x.tokens, 0);
  assert.equal((await head.metrics()).generation_tokens_total, N - s.from + later);
});
