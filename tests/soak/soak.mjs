// Kill soak (issue #20; not in CI: `scripts/soak.sh N`). One `superfluid serve` on the tiny
// model and a fixed state directory; 24 streams always in flight, mixing OpenAI chat (plain,
// tools, json_schema), Anthropic messages (plain, tools), Ollama chat (plain, format) and the
// Responses API (streamed, and background polled); N `kill -9`s at random intervals,
// alternating the worker (the head restarts it) and the head (restarted here on the same state
// dir; cut streams re-attach with Last-Event-ID to /v1/sessions/{id}/events).
//
// Every request is deterministic (seeded or greedy), so its reference is the same request run
// alone on a fresh server first. At the end every session's state (GET /v1/sessions/{id}: text,
// reasoning, tool calls, token count) must equal its reference, and the client-side event ids of
// each stream must increase without a repeat across the cut. Prints the totals
// "lost L, duplicated D, mismatched M" (all must be 0) and the kills by target; exit 1 otherwise.
// A session whose journal holds the reference's token count but another id at one sampled
// position is counted apart as "diverged" (a near-tie rounded the other way; README "Kill soak").
// SOAK_DRY=1: the same load and pauses without killing anything (a control run).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

const N = Number(process.argv[2] || 100);
const STREAMS = 24;
const DRY = process.env.SOAK_DRY === '1';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tool = { type: 'function', function: { name: 'lookup', description: 'Look a word up.', parameters: { type: 'object', properties: { word: { type: 'string', maxLength: 20 } }, required: ['word'], additionalProperties: false } } };
const schema = { type: 'object', properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 0, maximum: 99 } }, required: ['ok', 'n'], additionalProperties: false };

// The request kinds: [name, path, body(i)]; i seeds the request (same i, same answer).
const kinds = [
  ['openai', '/v1/chat/completions', (i) => ({ messages: [{ role: 'user', content: `Tell story ${i}.` }], max_tokens: 120, ignore_eos: true, temperature: 1, seed: 1000 + i, stream: true })],
  ['openai-tools', '/v1/chat/completions', (i) => ({ messages: [{ role: 'user', content: `Look up word ${i}.` }], tools: [tool], max_tokens: 80, temperature: 1, seed: 2000 + i, stream: true })],
  ['openai-schema', '/v1/chat/completions', (i) => ({ messages: [{ role: 'user', content: `Judge ${i}.` }], response_format: { type: 'json_schema', json_schema: { name: 'j', strict: true, schema } }, max_tokens: 80, temperature: 1, seed: 3000 + i, stream: true })],
  ['anthropic', '/v1/messages', (i) => ({ messages: [{ role: 'user', content: `Write line ${i}.` }], max_tokens: 100, temperature: 0, stream: true })],
  ['anthropic-tools', '/v1/messages', (i) => ({ messages: [{ role: 'user', content: `Find ${i}.` }], tools: [{ name: 'lookup', description: 'Look a word up.', input_schema: tool.function.parameters }], max_tokens: 80, temperature: 0, stream: true })],
  ['ollama', '/api/chat', (i) => ({ messages: [{ role: 'user', content: `Poem ${i}.` }], stream: true, options: { seed: 4000 + i, temperature: 1, num_predict: 120 } })],
  ['ollama-format', '/api/chat', (i) => ({ messages: [{ role: 'user', content: `Rate ${i}.` }], stream: true, format: schema, options: { seed: 5000 + i, temperature: 1, num_predict: 80 } })],
  ['responses', '/v1/responses', (i) => ({ input: `Summarize ${i}.`, max_output_tokens: 100, temperature: 0, stream: true })],
  ['responses-background', '/v1/responses', (i) => ({ input: `Explain ${i}.`, max_output_tokens: 100, temperature: 0, background: true })],
];

let server;          // the current head (replaced after a head kill)
let refStateDir;     // the reference server's state dir (its journal)
let stateDir;        // the soak server's state dir
let headDown = false;
let headEpoch = 0;     // incremented by every head kill
const stats = { mismatchedBy: {}, lost: 0, duplicated: 0, mismatched: 0, diverged: 0, failed: 0, retried: 0, kills: { worker: 0, head: 0 }, streams: 0, reattached: 0 };
const problems = [];

const post = (path, body) => fetch(`${server.url}${path}`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', 'X-Superfluid-Detach': 'true', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'default', ...body }),
});

async function waitForHead() {
  await until(async () => !headDown, 120000, 50);
}

// The state a finished session ends in, compared with its reference.
async function finalState(sessionId) {
  let st;
  await until(async () => {
    await waitForHead();
    try {
      st = await (await fetch(`${server.url}/v1/sessions/${sessionId}`)).json();
    } catch {
      return false;
    }
    return st.status && st.status !== 'running';
  }, 300000, 200);
  return { status: st.status, text: st.text ?? '', reasoning: st.reasoning ?? '', tool_calls: JSON.stringify(st.tool_calls ?? []), tokens: st.usage?.completion_tokens };
}

// One request: POST; an OpenAI chat stream is read with its event ids checked (strictly
// increasing, none repeated), the other formats are read to their end. When the head was killed
// meanwhile, the client re-attaches on the new head: after the last id seen (OpenAI), else from
// the start (OpenAI chat chunks, or Anthropic's own events for /v1/messages; their ids checked the same way). A background response is
// only polled. Returns the session's final state, or null when the request was not accepted.
async function runStream(kind, i) {
  const [, path, make] = kind;
  const body = make(i);
  // A request refused while a process restarts (the head gone, or 503 while the worker loads)
  // is sent again, as a client would, for up to a minute.
  let res = null;
  let epoch = headEpoch;
  for (const deadline = Date.now() + 60000; Date.now() < deadline; await sleep(250)) {
    await waitForHead();
    epoch = headEpoch;
    try {
      res = await post(path, body);
    } catch {
      res = null;
    }
    if (res && res.status === 200) break;
    if (res && res.status !== 503) break;
    stats.retried++;
  }
  if (!res || res.status !== 200) {
    if (res) problems.push(`${kind[0]} #${i}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return null; // never accepted
  }
  let session = res.headers.get('x-superfluid-session');
  if (body.background) session = (await res.json()).id.replace(/^resp_/, '');
  const openai = path === '/v1/chat/completions' && !body.background;
  let last = -1;
  let done = false;
  const consume = async (r, what) => {
    for await (const { id, data } of sseFrames(r)) {
      if (data === '[DONE]') done = true;
      const idx = id ? Number(id.split(':').at(-1)) : NaN;
      if (!Number.isFinite(idx)) continue;
      if (idx <= last) {
        stats.duplicated++;
        problems.push(`${kind[0]} ${session} (${what}): event ${idx} after ${last}`);
      }
      last = Math.max(last, idx);
    }
  };
  if (!body.background) {
    if (openai) await consume(res, 'stream');
    else await res.text().catch(() => {});
  }
  if (headEpoch !== epoch && !body.background && !(openai && done)) {
    await waitForHead();
    stats.reattached++;
    if (!openai) last = -1; // a replay from the start, in the session's API's format
    const headers = openai && last >= 0 ? { 'Last-Event-ID': `${session}:${last}` } : {};
    const r = await fetch(`${server.url}/v1/sessions/${session}/events`, { headers }).catch(() => null);
    if (r && r.status === 200) await consume(r, 're-attach');
  }
  return { session, ...(await finalState(session)) };
}

// A session's sampled token ids, read from a journal (sqlite3 CLI; the server may be down).
function journalTokens(dir, session) {
  try {
    return execFileSync('sqlite3', [join(dir, 'journal.db'), `select group_concat(token, ' ') from (select token from tokens where session='${session}' order by idx)`]).toString().trim().split(' ');
  } catch {
    return null;
  }
}

function compare(name, i, got, ref) {
  if (!got || !ref) return;
  const same = got.status === ref.status && got.text === ref.text && got.reasoning === ref.reasoning && got.tool_calls === ref.tool_calls;
  if (!same) {
    // Same number of tokens, and the journal shows the token ids part at one sampled position:
    // the sampler drew another token there (a near-tie of the scores that the resumed sequence's
    // different batch shapes rounded the other way), not a token lost, repeated or garbled.
    const a = journalTokens(refStateDir, ref.session);
    const b = journalTokens(stateDir, got.session);
    const at = a && b ? a.findIndex((t, k) => t !== b[k]) : -1;
    if (a && b && a.length === b.length && got.tokens === ref.tokens && at >= 0) {
      stats.diverged++;
      problems.push(`${name} #${i} ${got.session}: diverged at sampled token ${at} of ${a.length} (${a[at]} in the reference, ${b[at]} here)`);
      return;
    }
    stats.mismatched++;
    stats.mismatchedBy[name] = (stats.mismatchedBy[name] || 0) + 1;
    // Where the texts part: the common prefix in characters, and both lengths.
    let k = 0;
    while (k < got.text.length && got.text[k] === ref.text[k]) k++;
    problems.push(`${name} #${i} ${got.session}: ${got.status}/${ref.status}, text equal for ${k} of ${got.text.length}/${ref.text.length} chars, tokens ${got.tokens}/${ref.tokens}, tool calls ${got.tool_calls === ref.tool_calls ? 'equal' : 'differ'}`);
  }
  if (typeof ref.tokens === 'number' && typeof got.tokens === 'number' && got.tokens < ref.tokens) stats.lost += ref.tokens - got.tokens;
}

async function main() {
  const t0 = Date.now();
  // The prefix cache is off unless SOAK_PREFIX_CACHE=1: a prompt restored from it and the same
  // prompt prefilled cold give slightly different logits, and a seeded or greedy sample can flip
  // at a near-tie (bench/results/README.md, recovery's reference_stable). With it on, every
  // repeat of a request (a cache hit) can differ from its cold reference whether or not a kill
  // touched it: N=100 gave 26 such mismatches, all repeats of two requests, each the same way.
  const cache = process.env.SOAK_PREFIX_CACHE === '1' ? [] : ['--cache-ram', '0'];
  const args = cache;
  // References: every (kind, i) this soak may send, alone and uninterrupted on a fresh server.
  const plan = [];
  const rounds = 2; // 48 distinct requests, sent again and again until the last kill
  for (let n = 0; n < STREAMS * rounds; n++) plan.push([kinds[n % kinds.length], n]);
  server = await startServer(args);
  refStateDir = server.stateDir;
  const refs = new Map();
  console.log(`references: ${plan.length} requests…`);
  for (let k = 0; k < plan.length; k += 8) {
    await Promise.all(plan.slice(k, k + 8).map(async ([kind, i]) => refs.set(i, await runStream(kind, i))));
  }
  await server.stop();
  const missing = plan.filter(([, i]) => !refs.get(i) || refs.get(i).status !== 'completed');
  if (missing.length) throw new Error(`${missing.length} reference requests did not complete: ${missing.map(([k, i]) => `${k[0]} #${i}`).join(', ')}`);

  stateDir = mkdtempSync(join(tmpdir(), 'sf-soak-state-'));
  server = await startServer(args, { stateDir });
  let next = 0;
  let stop = false;
  const lanes = Array.from({ length: STREAMS }, async () => {
    while (!stop) {
      const [kind, i] = plan[next++ % plan.length]; // a request again: the same expected state
      stats.streams++;
      const got = await runStream(kind, i);
      if (got === null) stats.failed++;
      else compare(kind[0], i, got, refs.get(i));
    }
  });
  for (let k = 0; k < N; k++) {
    await sleep(1500 + Math.random() * 2500);
    await waitForHead();
    if (DRY) {
      // SOAK_DRY=1: the same load and the same pauses, no kill (a control run: what differs
      // from the references without any kill comes from the batch mix, not from a resume).
    } else if (k % 2 === 0) {
      const pid = Number([...server.log().matchAll(/worker started, pid (\d+)/g)].at(-1)?.[1]);
      try { process.kill(pid, 'SIGKILL'); stats.kills.worker++; } catch {}
    } else {
      headDown = true;
      headEpoch++;
      const exited = new Promise((r) => server.proc.once('exit', r));
      server.proc.kill('SIGKILL');
      await exited;
      stats.kills.head++;
      server = await startServer(args, { stateDir });
      headDown = false;
    }
    process.stdout.write(`kill ${k + 1}/${N} (${k % 2 === 0 ? 'worker' : 'head'}), ${stats.streams} streams started\n`);
  }
  stop = true;
  await Promise.all(lanes);
  await server.stop();
  const wall = ((Date.now() - t0) / 1000).toFixed(0);
  for (const p of problems.slice(0, 20)) console.log('problem:', p);
  console.log(`soak: ${N} kills (worker ${stats.kills.worker}, head ${stats.kills.head}), ${stats.streams} streams (${stats.reattached} re-attached; ${stats.retried} sends refused while a process restarted and sent again; ${stats.failed} never accepted), wall ${wall} s`);
  console.log(`lost ${stats.lost}, duplicated ${stats.duplicated}, mismatched ${stats.mismatched} ${JSON.stringify(stats.mismatchedBy)}; diverged at a sampled near-tie ${stats.diverged}`);
  process.exit(stats.lost + stats.duplicated + stats.mismatched === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
