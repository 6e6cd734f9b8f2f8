// Fairness without markers (issue #18) on a real server: every sequence streams a long unmarked
// answer; a short unmarked request still gets its first token while they run (a same-class
// newcomer parks the most-served sequence once it had its quantum: 200 tokens here, reached
// ~180 tokens into a 500-token answer), and every long stream completes with exactly the text
// of an uncontested run: nothing lost, nothing repeated. Orderings and counts, no timing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

const LONG_TOKENS = 500;
const QUANTUM = 200; // --preempt-quantum (default 512): a shorter test

function post(server, body) {
  // No priority header, no key, no class in the body: the usual client.
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const longBody = (i) => ({
  messages: [{ role: 'user', content: `Write a very long story, number ${i}.` }],
  max_tokens: LONG_TOKENS,
  ignore_eos: true,
  temperature: 0,
  stream: true,
});

/** Reads a stream: { session, text, ids, done }; onContent(count) after each content frame. */
async function readStream(res, onContent = () => {}) {
  assert.equal(res.status, 200);
  const out = { session: res.headers.get('x-superfluid-session'), text: '', ids: [], done: false };
  let n = 0;
  for await (const { id, data } of sseFrames(res)) {
    if (data === '[DONE]') {
      out.done = true;
      continue;
    }
    const j = JSON.parse(data);
    assert.equal(j.error, undefined, data);
    const d = j.choices?.[0]?.delta ?? {};
    const piece = (d.reasoning_content ?? '') + (d.content ?? '');
    out.text += piece;
    if (id) out.ids.push(id);
    if (piece) onContent(++n);
  }
  return out;
}

test('unmarked: a short request gets its first token while every sequence streams a long answer; the long streams lose and repeat nothing', async () => {
  // Two sequences, so two long streams take every one and the short request finds none free.
  const server = await startServer(['--parallel', '2', '--preempt-quantum', String(QUANTUM)]);
  try {
    // The reference: the two long answers with nobody else on the server.
    const reference = await Promise.all([0, 1].map(async (i) => (await readStream(await post(server, longBody(i)))).text));

    const events = [];
    let started = 0;
    const longs = [0, 1].map(async (i) => {
      const r = await readStream(await post(server, longBody(i)), (n) => {
        if (n === 20) started++;
      });
      events.push(`long-${i}-done`);
      return r;
    });
    // Both sequences are taken and streaming before the short request arrives.
    await until(async () => started === 2 && (await server.metrics()).num_requests_running === 2, 60000, 10);
    const before = (await server.metrics()).num_preemptions_total ?? 0;
    const short = await post(server, { messages: [{ role: 'user', content: 'Hi?' }], max_tokens: 4, stream: true });
    const shortOut = await readStream(short, (n) => {
      if (n === 1) events.push('short-first-token');
    });
    const results = await Promise.all(longs);

    assert.equal(events[0], 'short-first-token', JSON.stringify(events));
    assert.ok(shortOut.done);
    const m = await server.metrics();
    assert.ok(m.num_preemptions_total > before, 'a long sequence was parked for the newcomer');
    for (let i = 0; i < 2; i++) {
      const r = results[i];
      assert.ok(r.done, `long ${i} ended with [DONE]`);
      assert.equal(r.text, reference[i], `long ${i}: the uncontested run's text`);
      // Event ids "<session>:<index>": strictly increasing, so no token was sent twice.
      const idx = r.ids.map((id) => Number(id.split(':')[1]));
      for (let k = 1; k < idx.length; k++) assert.ok(idx[k] > idx[k - 1], `long ${i}: ids increase`);
      const st = await (await fetch(`${server.url}/v1/sessions/${r.session}`)).json();
      assert.equal(st.status, 'completed');
      assert.equal(st.usage.completion_tokens, LONG_TOKENS);
    }
  } finally {
    await server.stop();
  }
});

test('unmarked: a burst of short requests is not time-sliced (below the quantum nobody is parked); with no quantum it is', async () => {
  for (const quantum of [null, 0]) {
    // No aging: on a slow machine a request waiting 10 s would preempt by aging, not by this policy.
    // Two sequences: 8 requests must wait for them (the policy judged is who waits).
    const args = ['--parallel', '2', '--aging-ms', '0'];
    const server = await startServer([...args, ...(quantum === null ? [] : ['--preempt-quantum', String(quantum)])]);
    try {
      // 8 requests for 2 sequences, each far below 512 tokens of prompt + answer.
      const outs = await Promise.all(
        [...Array(8).keys()].map(async (i) => readStream(await post(server, { ...longBody(i), max_tokens: 48 }))),
      );
      for (const o of outs) assert.ok(o.done);
      const m = await server.metrics();
      if (quantum === null) assert.equal(m.num_preemptions_total ?? 0, 0, 'first come, first served');
      else assert.ok(m.num_preemptions_total > 0, 'with no quantum, newcomers park running sequences');
    } finally {
      await server.stop();
    }
  }
});
