// Retry-resume (issue #36) under the official `openai` SDK: the head is SIGKILLed mid-stream
// and restarted on the same state dir; the client, knowing nothing of sessions, sends the same
// request again and gets the interrupted session from token 0 — the journaled tokens at once,
// then the continuation — with text equal to an uninterrupted run (greedy). The journal holds
// one session whose tokens were generated once. A request that differs by one byte starts a new
// session. Servers start with no flags but the state dir (the feature is on by default).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startServer } from '../lib/server.mjs';

const MODEL = 'tiny-qwen3-1';
const N = 200;
const body = (content) => ({
  model: MODEL,
  messages: [{ role: 'user', content }],
  max_tokens: N,
  temperature: 0,
  ignore_eos: true,
  stream: true,
});
const servers = [];
after(async () => {
  for (const s of servers) await s.stop();
});
const clientOf = (server) => new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });

/** Streams `req`; calls onChunk(count) per content chunk. Returns { session, text, finish, error }. */
async function run(client, req, onChunk) {
  const out = { session: null, text: '', finish: null, error: null };
  try {
    const { data, response } = await client.chat.completions.create(req).withResponse();
    out.session = response.headers.get('x-superfluid-session');
    let n = 0;
    for await (const chunk of data) {
      const c = chunk.choices[0];
      out.text += (c?.delta?.reasoning_content ?? '') + (c?.delta?.content ?? '');
      if (c?.finish_reason) out.finish = c.finish_reason;
      onChunk?.(++n);
    }
  } catch (e) {
    out.error = e;
  }
  return out;
}

test('a request sent again after a head SIGKILL + restart attaches to its session: the same text, generated once', async () => {
  const ref = await startServer([]);
  servers.push(ref);
  const want = await run(clientOf(ref), body('Tell a long story about a lighthouse.'));
  assert.equal(want.error, null);
  assert.equal(want.finish, 'length');

  let head = await startServer([]);
  servers.push(head);
  const stateDir = head.stateDir;
  const first = await run(clientOf(head), body('Tell a long story about a lighthouse.'), (n) => {
    if (n === 40 && head.proc.exitCode === null) head.proc.kill('SIGKILL');
  });
  assert.ok(first.error, 'the stream broke when the head died');
  assert.ok(first.session, 'the first answer named its session');
  await new Promise((r) => head.proc.exitCode !== null || head.proc.signalCode !== null ? r() : head.proc.once('exit', r));

  head = await startServer([], { stateDir });
  servers.push(head);
  const again = await run(clientOf(head), body('Tell a long story about a lighthouse.'));
  assert.equal(again.error, null, String(again.error));
  assert.equal(again.session, first.session, 'the retry attached to the interrupted session');
  assert.equal(again.finish, 'length');
  assert.equal(again.text, want.text, 'the text of an uninterrupted run');
  assert.match(head.log(), /the same request again after a restart; attaching it at token \d+ \(retry-resume\)/);

  // Differs by one byte: a new session.
  const other = await run(clientOf(head), { ...body('Tell a long story about a lighthouse!'), max_tokens: 4 });
  assert.equal(other.error, null);
  assert.notEqual(other.session, first.session);

  // Generated once: the journal's placements are the first run from 0 and the resume from the
  // tokens it held; the restarted worker generated only the rest (and the 4 of the other one).
  const st = await (await fetch(`${head.url}/v1/sessions/${first.session}`)).json();
  assert.equal(st.usage.completion_tokens, N);
  assert.equal(st.placements.length, 2, JSON.stringify(st.placements));
  const resumedAt = st.placements[1].from_index;
  assert.ok(resumedAt >= 40 && resumedAt < N, `resumed at ${resumedAt}`);
  assert.equal((await head.metrics()).generation_tokens_total, N - resumedAt + 4);
  // The journal: one session for the request, its N tokens once each.
  const db = join(stateDir, 'journal.db');
  const q = (sql) => execFileSync('sqlite3', [db, sql]).toString().trim();
  assert.equal(q(`SELECT count(*) FROM sessions WHERE id <> '${other.session}'`), '1');
  assert.equal(q(`SELECT count(*) || ',' || count(DISTINCT idx) || ',' || max(idx) FROM tokens WHERE session = '${first.session}'`), `${N},${N},${N - 1}`);
});
