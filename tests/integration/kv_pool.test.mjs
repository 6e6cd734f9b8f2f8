// One KV pool for every sequence (issue #36; serve's default, docs/ARCHITECTURE.md "KV memory"):
// on default flags, eight concurrent requests of
// Claude Code's shape (an ~18k-token shared prefix, the agent's system prompt and tools, plus
// ~1k tokens of their own) all run at once and hold the prefix about once; and with a pool
// smaller than what they hold together (--kv-memory, the flag under test), requests that each
// fit alone all complete, with the text they have alone: parked for cells and resumed, none
// failed. Counts and texts, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

// A document of n words (~1.5 tokens each with the Qwen3 tokenizer); seeds give different ones.
const W = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu apple river stone cloud light north south east west green'.split(' ');
const words = (n, seed) => Array.from({ length: n }, (_, i) => W[(i * 7 + seed * 13 + ((i * seed) >> 3)) % W.length]).join(' ');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function complete(server, prompt, maxTokens, extra = {}) {
  const res = await fetch(`${server.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt, max_tokens: maxTokens, ignore_eos: true, temperature: 1, seed: 5, stream: true,
      stream_options: { include_usage: true }, ...extra }),
  });
  assert.equal(res.status, 200, await (res.status === 200 ? '' : res.text()));
  const out = { text: '', firstAt: 0, doneAt: 0, usage: null, finish: null };
  for await (const { data } of sseFrames(res)) {
    if (data === '[DONE]') continue;
    const j = JSON.parse(data);
    assert.equal(j.error, undefined, data);
    if (j.usage) out.usage = j.usage;
    const piece = j.choices?.[0]?.text ?? '';
    if (j.choices?.[0]?.finish_reason) out.finish = j.choices[0].finish_reason;
    if (piece && !out.firstAt) out.firstAt = performance.now();
    out.text += piece;
  }
  out.doneAt = performance.now();
  return out;
}

test('default flags: 8 requests of ~19k tokens sharing an ~18k-token prefix run at once and hold the prefix once', { timeout: 900_000 }, async () => {
  const server = await startServer();
  try {
    const prefix = words(12000, 1); // ~18k tokens
    // The agent's earlier turn: the system prompt and tools are in the server already.
    const warm = await complete(server, `${prefix} start`, 1);
    const nPrefix = warm.usage.prompt_tokens;
    assert.ok(nPrefix > 16000 && nPrefix < 21000, `prefix of ${nPrefix} tokens`);

    const OWN = 650; // words of each request's own part (~1k tokens)
    const GEN = 160;
    let kvWhileRunning = 0;
    let running = 0;
    let stop = false;
    const streams = Array.from({ length: 8 }, (_, i) => complete(server, `${prefix} ${words(OWN, 100 + i)}`, GEN));
    // While all eight hold a slot: the pool's cells in use, most seen.
    const watcher = (async () => {
      while (!stop) {
        const m = await server.metrics();
        running = Math.max(running, m.num_requests_running);
        if (m.num_requests_running === 8) kvWhileRunning = Math.max(kvWhileRunning, m.kv_cache_used_cells);
        await sleep(100);
      }
    })();
    const done = await Promise.all(streams);
    stop = true;
    await watcher;
    const own = done.map((d) => d.usage.prompt_tokens - nPrefix);
    // All at once: every first token before any stream ends.
    const lastFirst = Math.max(...done.map((d) => d.firstAt));
    const firstDone = Math.min(...done.map((d) => d.doneAt));
    assert.ok(lastFirst < firstDone, 'a request waited for another to finish');
    for (const d of done) assert.equal(d.usage.completion_tokens, GEN);
    // The prefix once: well under twice (prefix + 8 x own tokens), and more than the prefix
    // and the requests' own tokens (the gauge is real).
    const ownTotal = own.reduce((a, b) => a + b, 0);
    const bound = 2 * (nPrefix + ownTotal);
    const m = await server.metrics();
    assert.ok(m.kv_cache_cells > 0, 'the pool size is reported');
    assert.ok(kvWhileRunning > 0, `kv gauge seen while eight ran (running max ${running})`);
    assert.ok(kvWhileRunning < bound, `${kvWhileRunning} cells in use, bound ${bound}`);
    assert.ok(kvWhileRunning >= nPrefix + ownTotal, `${kvWhileRunning} cells < prefix + own ${nPrefix + ownTotal}`);
  } finally {
    await server.stop();
  }
});

test('--kv-memory smaller than four requests together: each fits alone, none fails, all complete their full answer', { timeout: 900_000 }, async () => {
  // The flag under test: a pool of 1 MiB, a few thousand cells of the tiny model.
  const server = await startServer(['--kv-memory', '1']);
  try {
    await complete(server, 'hello', 1); // the worker's counts are published from its first tick
    const cells = (await server.metrics()).kv_cache_cells;
    assert.ok(cells >= 256 && cells < 100000, `pool of ${cells} cells`);
    // Each request alone holds about half the pool; four together twice what it has.
    const promptWords = Math.floor(cells / 3 / 1.5);
    const GEN = Math.floor(cells / 6);
    const prompts = [0, 1, 2, 3].map((i) => words(promptWords, 200 + i));
    const alone = [];
    for (const p of prompts) alone.push(await complete(server, p, GEN));
    for (const a of alone) assert.ok(a.usage.prompt_tokens + GEN < cells, 'a request fits alone');

    let stop = false;
    let maxRunning = 0;
    let maxWaiting = 0;
    const watcher = (async () => {
      while (!stop) {
        const m = await server.metrics();
        maxRunning = Math.max(maxRunning, m.num_requests_running);
        maxWaiting = Math.max(maxWaiting, m.num_requests_waiting);
        await sleep(50);
      }
    })();
    const before = (await server.metrics()).num_preemptions_total;
    const together = await Promise.all(prompts.map((p) => complete(server, p, GEN)));
    stop = true;
    await watcher;
    const parked = (await server.metrics()).num_preemptions_total - before;
    // Texts are not compared with the runs alone: where cells lie no longer changes attention's
    // sums (KvPoolOrder in tests/unit/engine), but four decoding together share ubatches with
    // each other's prefill, where alone a decode row was a lone row, and the repacked quantized
    // matrix product rounds the two differently (docs/ARCHITECTURE.md, "KV memory"): over
    // thousands of tokens a near-tie can take another token. Reported: how far each matches.
    const same = (a, b) => {
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      return n;
    };
    for (let i = 0; i < 4; i++) {
      assert.equal(together[i].usage.completion_tokens, GEN, `request ${i} completed`);
      assert.equal(together[i].finish, 'length', `request ${i} ran to max_tokens`);
      assert.ok(together[i].text.length > 0, `request ${i} has text`);
    }
    console.log(`matching the runs alone: ${together.map((t, i) => `${same(t.text, alone[i].text)}/${alone[i].text.length}`).join(', ')} characters`);
    // The pool held them back: some waited for cells or were parked for them.
    assert.ok(maxWaiting > 0 || parked > 0, `waiting ${maxWaiting}, parked ${parked}, running ${maxRunning}`);
    assert.ok(maxRunning < 4 || parked > 0, `all four ran at once (${maxRunning}) and none was parked`);
  } finally {
    await server.stop();
  }
});
