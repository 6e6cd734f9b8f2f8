// Cases of the prefix cache integration tests (tests/integration/prefix_cache*.test.mjs),
// defined per model architecture. The prefix cache through the real path (issue #6), on a
// transformer (qwen3) and a hybrid
// (lfm2: short convolutions + attention, whose state cannot be cut back) tiny model:
// * a cache hit gives the same text as the same request computed from scratch (a server with
//   --cache-ram 0), for an identical prompt, a shared system prompt with a new user message,
//   a multi-turn continuation, and a snapshot restored from disk after a restart;
// * requests arriving together share the system prompt's prefill;
// * an agent's tool loop computes only each turn's new tokens (the end of the last message is
//   a snapshot point on the hybrid model);
// * a corrupt disk entry is discarded, never used;
// * Claude Code's per-request billing header does not defeat the cache;
// * 200 distinct system prompts keep the cache within --cache-ram (/metrics).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, statSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model } from './server.mjs';

export const words = (seed, n) => {
  const w = ['alpha', 'bravo', 'delta', 'echo', 'golf', 'hotel', 'india', 'kilo', 'lima', 'mike', 'oscar', 'papa'];
  let x = seed;
  return Array.from({ length: n }, () => w[(x = (x * 1103515245 + 12345) % 2147483648) % w.length]).join(' ');
};
const SYS = `You are a careful assistant. ${words(1, 300)}`;
// The scheduler's planner quantum: the least spacing of snapshot points (scheduler_reuse.cpp).
const QUANTUM = 64;

export async function chat(server, messages, extra = {}) {
  const res = await fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages, max_tokens: 12, temperature: 0, ...extra }),
  });
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return {
    text: body.choices[0].message.content,
    prompt: body.usage.prompt_tokens,
    cached: body.usage.prompt_tokens_details.cached_tokens,
  };
}

// The conversation of the correctness checks; `answer` is turn 1's text (from the run itself).
const conv = {
  first: [{ role: 'system', content: SYS }, { role: 'user', content: 'Name three colours.' }],
  other: [{ role: 'system', content: SYS }, { role: 'user', content: 'What is a prime number?' }],
  turn2: (answer) => [...conv.first, { role: 'assistant', content: answer }, { role: 'user', content: 'And three more?' }],
  later: [{ role: 'system', content: SYS }, { role: 'user', content: 'Count to five.' }],
};
// Greedy, and seeded sampling at a low temperature (the text then follows the logits closely).
const MODES = [{ temperature: 0 }, { temperature: 0.2, seed: 11 }];

// Runs the sequence on one server; returns every response.
async function conversation(server) {
  const out = {};
  for (const [i, mode] of MODES.entries()) {
    out[`first${i}`] = await chat(server, conv.first, mode);
    out[`same${i}`] = await chat(server, conv.first, mode);
    out[`other${i}`] = await chat(server, conv.other, mode);
    out[`turn2${i}`] = await chat(server, conv.turn2(out[`first${i}`].text), mode);
  }
  return out;
}

async function afterRestart(server) {
  const out = {};
  for (const [i, mode] of MODES.entries()) out[`later${i}`] = await chat(server, conv.later, mode);
  return out;
}

function corruptAll(dir) {
  let n = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.sfpc')) {
        const fd = openSync(p, 'r+');
        writeSync(fd, Buffer.from('XXXX'), 0, 4, statSync(p).size - 40);
        closeSync(fd);
        n++;
      }
    }
  };
  walk(dir);
  return n;
}


/** Defines the tests for one mkmodel architecture. */
export function prefixCacheCases(arch) {
  test(`${arch}: cache hits give the text computed from scratch, also after a restart from disk`, async () => {
    const modelPath = model({ arch });
    const cacheDir = mkdtempSync(join(tmpdir(), 'sf-prefix-'));

    // From scratch: no cache at all.
    const ref = await startServer(['--cache-ram', '0', '--cache-dir', 'off'], { modelPath });
    let scratch, scratchLater;
    try {
      scratch = await conversation(ref);
      scratchLater = await afterRestart(ref);
      for (const r of [...Object.values(scratch), ...Object.values(scratchLater)]) assert.equal(r.cached, 0);
    } finally {
      await ref.stop();
    }

    let s = await startServer([], { modelPath, cacheDir });
    let got;
    try {
      got = await conversation(s);
    } finally {
      await s.stop();
    }
    for (const [k, r] of Object.entries(got)) assert.equal(r.text, scratch[k].text, `${arch} ${k}: same text as from scratch`);
    // Snapshots (hybrid): a point less than a quantum past the previous one is not taken, so
    // up to that many tokens after the last snapshot are computed again (scheduler_reuse.cpp).
    const slack = arch === 'lfm2' ? QUANTUM : 1;
    for (const i of MODES.keys()) {
      const first = got[`first${i}`];
      console.log(`${arch} mode ${i}: prompt ${first.prompt}, identical ${got[`same${i}`].cached}, other ${got[`other${i}`].cached}, turn 2 ${got[`turn2${i}`].cached} of ${got[`turn2${i}`].prompt}`);
      // Identical prompt: all of it but the last token (decoded again for its logits); on
      // snapshots, all but the tokens after the last snapshot point.
      assert.ok(got[`same${i}`].cached <= first.prompt - 1 && got[`same${i}`].cached >= first.prompt - slack,
        `${arch} identical prompt: ${got[`same${i}`].cached} of ${first.prompt}`);
      if (arch !== 'lfm2') assert.equal(got[`same${i}`].cached, first.prompt - 1);
      // New user message: the system prompt (300 words) at least.
      assert.ok(got[`other${i}`].cached > 300, `${arch} shared system prompt: ${got[`other${i}`].cached}`);
      // Next turn: turn 1's prompt (but its last token) at least.
      assert.ok(got[`turn2${i}`].cached >= first.prompt - slack, `${arch} multi-turn: ${got[`turn2${i}`].cached} of ${first.prompt}`);
    }

    // Restart: the system prompt comes from the disk tier.
    s = await startServer([], { modelPath, cacheDir });
    try {
      const later = await afterRestart(s);
      for (const [k, r] of Object.entries(later)) {
        assert.equal(r.text, scratchLater[k].text, `${arch} ${k} after restart`);
        assert.ok(r.cached > 300, `${arch} ${k} restored from disk: ${r.cached}`);
      }
      assert.ok((await s.metrics()).prefix_cache_disk_loads_total >= 1);
    } finally {
      await s.stop();
    }

    // Corrupt entries are discarded with a log line and never used.
    assert.ok(corruptAll(cacheDir) > 0);
    s = await startServer([], { modelPath, cacheDir });
    try {
      const r = await chat(s, conv.later, MODES[0]);
      assert.equal(r.cached, 0);
      assert.equal(r.text, scratchLater.later0.text);
      assert.ok((await s.metrics()).prefix_cache_disk_corrupt_total >= 1);
      assert.match(s.log(), /discarding corrupt prefix cache entry/);
    } finally {
      await s.stop();
    }
  });

  test(`${arch}: requests arriving together prefill the shared system prompt once`, async () => {
    const s = await startServer(['--cache-dir', 'off'], { modelPath: model({ arch }) });
    try {
      const sys = `You are a terse assistant. ${words(7, 300)}`;
      const res = await Promise.all(
        [0, 1, 2, 3].map((i) => chat(s, [{ role: 'system', content: sys }, { role: 'user', content: `Question ${i}: ${words(100 + i, 5)}?` }])),
      );
      const hits = res.filter((r) => r.cached > 300).length;
      assert.equal(hits, 3, JSON.stringify(res.map((r) => r.cached)));
    } finally {
      await s.stop();
    }
  });

  test(`${arch}: an agent's tool loop computes only each turn's new tokens`, async () => {
    const s = await startServer(['--cache-dir', 'off'], { modelPath: model({ arch }) });
    try {
      const tools = [{
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Reads a file of the project.',
          parameters: { type: 'object', properties: { path: { type: 'string', maxLength: 24 } }, required: ['path'] },
        },
      }];
      const messages = [{ role: 'system', content: `You are a coding agent. ${words(3, 300)}` }, { role: 'user', content: 'Find the bug.' }];
      let before = 0;
      for (let turn = 0; turn < 4; turn++) {
        const res = await fetch(`${s.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ messages, tools, tool_choice: 'required', max_tokens: 48, temperature: 0 }),
        });
        const body = await res.json();
        assert.equal(res.status, 200, JSON.stringify(body));
        const { prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: cached } } = body.usage;
        const calls = body.choices[0].message.tool_calls;
        assert.ok(calls?.length >= 1, JSON.stringify(body.choices[0]));
        if (turn > 0) {
          // This turn's messages (the answer, the tool result) and the generation prompt: the
          // end of the last message (the tool result, 80 words) is a snapshot point, so at most
          // the previous turn's generation prompt (<= 8 tokens) is computed again.
          // Turn 0's last message ('Find the bug.') is shorter than a quantum: on snapshots its
          // end is no snapshot point, and turn 1 computes it again.
          const grown = prompt - before;
          const slack = arch === 'lfm2' && turn === 1 ? QUANTUM : 0;
          assert.ok(prompt - cached <= grown + 8 + slack, `${arch} turn ${turn}: computed ${prompt - cached} of ${prompt} for ${grown} new tokens`);
        }
        before = prompt;
        messages.push({ role: 'assistant', content: null, tool_calls: calls });
        messages.push({ role: 'tool', tool_call_id: calls[0].id, content: `Contents: ${words(50 + turn, 80)}` });
      }
    } finally {
      await s.stop();
    }
  });
}

/** The memory-budget test for one architecture (its own file: it is the longest). */
export function budgetCase(arch) {
  test(`${arch}: 200 distinct system prompts keep the cache within --cache-ram`, async () => {
    const budget = 256 * 1024;
    const s = await startServer(['--cache-ram', '256K', '--cache-dir', 'off'], { modelPath: model({ arch }) });
    try {
      let max = 0;
      // Eight clients at a time (the machine is small), metrics checked every 32 prompts.
      for (let i = 0; i < 200; i += 8) {
        await Promise.all(
          Array.from({ length: Math.min(8, 200 - i) }, (_, k) =>
            chat(s, [{ role: 'system', content: `Prompt ${i + k}. ${words(1000 + i + k, 60)}` }, { role: 'user', content: 'Hi' }], { max_tokens: 1 }),
          ),
        );
        if (i % 32 === 24 || i + 8 >= 200) {
          const m = await s.metrics();
          assert.equal(m.prefix_cache_ram_budget_bytes, budget);
          assert.ok(m.prefix_cache_ram_bytes <= budget, `${m.prefix_cache_ram_bytes} > ${budget}`);
          max = Math.max(max, m.prefix_cache_ram_bytes);
        }
      }
      const m = await s.metrics();
      assert.ok(m.prefix_cache_evictions_total > 0);
      assert.ok(m.prefix_cache_entries > 0);
      assert.ok(max > budget / 4, `the cache was used: ${max}`);
    } finally {
      await s.stop();
    }
  });
}
