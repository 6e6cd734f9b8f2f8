// The web page (issue #22): GET /ui is one self-contained HTML page served from the binary, and
// GET /ui/events streams one status snapshot per second (Server-Sent Events) in which a
// running session shows up with its class, API and token count. `/` stays Ollama's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startServer, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

// The only absolute URL the page may contain: the SVG namespace (an identifier, never fetched).
const SVG_NS = 'http://www.w3.org/2000/svg';

test('GET /ui is one self-contained HTML page; / still answers Ollama clients', async () => {
  const server = await startServer();
  try {
    const res = await fetch(`${server.url}/ui`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/html/);
    const html = await res.text();
    assert.match(html, /^<!doctype html>/i);
    assert.match(html, /<script type="module">/);
    // No external asset: every absolute URL is the SVG namespace; no script/style/img by src/href.
    const urls = html.match(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/gi) || [];
    assert.deepEqual(urls.filter((u) => u !== SVG_NS), [], 'absolute URLs in the page');
    assert.doesNotMatch(html, /<script[^>]+src=/i);
    assert.doesNotMatch(html, /<link[^>]+href=/i);
    assert.doesNotMatch(html, /<img[^>]+src=/i);
    assert.doesNotMatch(html, /@import|url\(/i);
    // What the page calls is on this server.
    for (const path of ['/ui/events', '/v1/chat/completions', '/v1/sessions/'])
      assert.ok(html.includes(path), `the page uses ${path}`);

    assert.equal((await fetch(`${server.url}/ui/`)).status, 200);
    const root = await fetch(`${server.url}/`);
    assert.equal(root.status, 200);
    assert.equal(await root.text(), 'Ollama is running');
  } finally {
    await server.stop();
  }
});

test('/ui/events: a snapshot per second with the live view fields; a streaming session shows up', async () => {
  const server = await startServer();
  const events = new AbortController();
  const chat = new AbortController();
  try {
    const res = await fetch(`${server.url}/ui/events`, { signal: events.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    const frames = sseFrames(res);
    const next = async () => {
      const { value, done } = await frames.next();
      assert.ok(!done, 'the snapshot stream ended');
      return { at: Date.now(), snap: JSON.parse(value.data) };
    };

    const first = await next();
    const s = first.snap;
    for (const k of ['time_ms', 'model', 'worker', 'sessions', 'running', 'waiting', 'classes', 'ticks',
      'events', 'tokens', 'preemptions', 'journal_bytes', 'kv_cache_usage', 'prefix_cache'])
      assert.ok(k in s, `snapshot has ${k}`);
    assert.equal(s.worker.up, true);
    assert.equal(s.worker.restarts, 0);
    assert.equal(s.worker.pid, undefined, 'no worker pid without --api-key (issue #38 item 10)');
    assert.deepEqual(s.classes.map((c) => c.name), ['interactive', 'normal', 'batch']);
    for (const c of s.classes) for (const k of ['running', 'waiting', 'preemptions']) assert.equal(typeof c[k], 'number');
    for (const k of ['total', 'batched', 'last_sequences', 'max_sequences']) assert.equal(typeof s.ticks[k], 'number');
    for (const k of ['hit_rate', 'cached_tokens', 'prompt_tokens', 'lookups', 'hits'])
      assert.equal(typeof s.prefix_cache[k], 'number');
    assert.deepEqual(s.sessions, []);

    // Not a polling storm: the next snapshot comes about a second later.
    const second = await next();
    assert.ok(second.at - first.at >= 700, `snapshots ${second.at - first.at} ms apart`);
    assert.ok(second.snap.time_ms - s.time_ms >= 700);

    // A long batch stream: its session appears with class, API, state and a growing count.
    const long = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: chat.signal,
      headers: { 'content-type': 'application/json', 'X-Superfluid-Priority': 'batch', 'User-Agent': 'nightly-indexer/2.1' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
    });
    assert.equal(long.status, 200);
    const id = long.headers.get('x-superfluid-session');
    assert.match(id, /^sess_/);
    // Without keys a listing carries no session ids (issue #38 item 2): a row's ref, a hash of
    // the id, is what its maker can find it by.
    const ref = createHash('sha256').update(id).digest('hex').slice(0, 16);
    const reader = long.body.getReader();
    await reader.read();

    let seen = null;
    for (let i = 0; i < 20 && !seen; ++i) {
      const { snap } = await next();
      const mine = snap.sessions.find((x) => x.ref === ref);
      if (mine && mine.generated_tokens > 0) seen = { mine, snap };
    }
    assert.ok(seen, 'the streaming session showed up in a snapshot');
    assert.equal(seen.mine.id, undefined, 'no id in a listing without keys');
    assert.equal(seen.mine.owner, undefined, 'no owner either');
    assert.equal(seen.mine.priority, 'batch');
    assert.equal(seen.mine.api, 'openai.chat');
    assert.equal(seen.mine.client, 'nightly-indexer/2.1');
    assert.equal(seen.mine.state, 'generating');
    assert.ok(seen.mine.prompt_tokens > 0);
    assert.ok(seen.mine.age_s >= 0);
    assert.ok(seen.mine.ttft_s >= 0 && seen.mine.ttft_s <= seen.mine.age_s, `ttft ${seen.mine.ttft_s}`);
    assert.ok(seen.snap.running >= 1);
    assert.equal(seen.snap.classes[2].running, 1);
    assert.ok(seen.snap.tokens.generated_total > 0);
    assert.ok(seen.snap.ticks.total > 0);
    assert.ok(seen.snap.journal_bytes > 0, 'the journal holds the session');
    const later = await next();
    const again = later.snap.sessions.find((x) => x.ref === ref);
    assert.ok(again && again.generated_tokens > seen.mine.generated_tokens, 'its token count grows');

    // /api/ps reports the same sessions (shared code): with the API too.
    const ps = await (await fetch(`${server.url}/api/ps`)).json();
    const psMine = ps.sessions.find((x) => x.ref === ref);
    assert.equal(psMine.priority, 'batch');
    assert.equal(psMine.api, 'openai.chat');

    // Stop (what the page's Stop button does): the session leaves the running list.
    chat.abort();
    const gone = await until(async () => {
      const { snap } = await next();
      return !snap.sessions.some((x) => x.ref === ref) ? snap : null;
    }, 20000, 0);
    assert.ok(gone, 'the stopped session left the snapshot');
  } finally {
    events.abort();
    chat.abort();
    await server.stop();
  }
});

test('/ui/events refuses streams beyond its limit with 503; a closed stream frees its slot', async () => {
  const server = await startServer();
  const ctl = [];
  try {
    const open = async () => {
      const c = new AbortController();
      ctl.push(c);
      const r = await fetch(`${server.url}/ui/events`, { signal: c.signal });
      if (r.status === 200) await r.body.getReader().read();
      return r;
    };
    for (let i = 0; i < 16; ++i) assert.equal((await open()).status, 200);
    const refused = await open();
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get('retry-after'), '5');
    ctl[0].abort();
    const again = await until(async () => {
      const r = await open();
      return r.status === 200 ? r : null;
    }, 10000, 200);
    assert.ok(again, 'a slot was freed when a page went away');
  } finally {
    for (const c of ctl) c.abort();
    await server.stop();
  }
});

test('the chat pane\'s requests: X-Superfluid-Detach keeps a stream running without its client; POST /v1/sessions/{id}/cancel stops it', async () => {
  const server = await startServer();
  try {
    const ctl = new AbortController();
    const res = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: ctl.signal,
      headers: { 'content-type': 'application/json', 'X-Superfluid-Detach': 'true' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
    });
    assert.equal(res.status, 200);
    const id = res.headers.get('x-superfluid-session');
    await res.body.getReader().read();
    ctl.abort(); // the page reloads
    const state = async () => (await fetch(`${server.url}/v1/sessions/${id}`)).json();
    const before = (await state()).usage.completion_tokens;
    const grew = await until(async () => {
      const s = await state();
      return s.status === 'running' && s.usage.completion_tokens > before + 5 ? s : null;
    }, 20000, 200);
    assert.ok(grew, 'the detached session kept generating after its client left');

    // Re-attach (what the page does after a reload): the stream replays and continues.
    const again = await fetch(`${server.url}/v1/sessions/${id}/events`);
    assert.equal(again.status, 200);
    // The replay starts from the beginning: the role chunk, then the first token id that
    // completed visible text (a token the chat parser holds back, e.g. a lone '<', carries no id;
    // its text goes out with the next one, so the first id need not be :0).
    const firstId = async (frames) => {
      const head = await frames.next();
      assert.ok(!head.done, 'the re-attached stream ended early');
      assert.equal(JSON.parse(head.value.data).choices[0].delta.role, 'assistant', 'the replay begins with the role chunk');
      for (;;) {
        const f = await frames.next();
        assert.ok(!f.done, 'the re-attached stream ended early');
        if (f.value.id) return f.value.id;
      }
    };
    const frames = sseFrames(again);
    const first = await firstId(frames);
    assert.match(first, new RegExp(`^${id}:\\d+$`));
    const other = await fetch(`${server.url}/v1/sessions/${id}/events`);
    const otherFrames = sseFrames(other);
    assert.equal(await firstId(otherFrames), first, 'every re-attach replays the same stream from its start');
    await otherFrames.return();

    const cancel = await fetch(`${server.url}/v1/sessions/${id}/cancel`, { method: 'POST' });
    assert.equal(cancel.status, 200);
    assert.equal((await cancel.json()).status, 'cancelled');
    let last = null;
    for await (const f of frames) last = f.data;
    assert.equal(last, '[DONE]', 'the re-attached stream ended');
    assert.equal((await (await fetch(`${server.url}/v1/sessions/${id}/cancel`, { method: 'POST' })).json()).status, 'cancelled');
    assert.equal((await fetch(`${server.url}/v1/sessions/sess_unknown/cancel`, { method: 'POST' })).status, 404);

    // Without the header a client that leaves still cancels its session.
    const ctl2 = new AbortController();
    const plain = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: ctl2.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
    });
    const id2 = plain.headers.get('x-superfluid-session');
    await plain.body.getReader().read();
    ctl2.abort();
    assert.ok(await until(async () => (await (await fetch(`${server.url}/v1/sessions/${id2}`)).json()).status === 'cancelled'));
  } finally {
    await server.stop();
  }
});

test('the first snapshot a page gets carries rates: tokens/s, ticks/s, each session\'s tokens/s (issue #36)', async () => {
  const server = await startServer();
  const chat = new AbortController();
  const events = new AbortController();
  try {
    const long = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      signal: chat.signal,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 100000, ignore_eos: true, stream: true }),
    });
    const id = long.headers.get('x-superfluid-session');
    const reader = long.body.getReader();
    // Decoding, not still in prefill: a few token chunks have arrived (beside other tests'
    // servers a prefill, or a restore from the shared disk tier, can outlast the page's 200 ms
    // measuring window, and nothing would have been generated in it).
    const decoder = new TextDecoder();
    for (let seen = ''; (seen.match(/"content"/g) || []).length < 4; ) {
      const { value, done } = await reader.read();
      assert.ok(!done, `the stream ended early: ${seen}`);
      seen += decoder.decode(value, { stream: true });
    }
    // A page opens now, with no snapshot built before on this server.
    const res = await fetch(`${server.url}/ui/events`, { signal: events.signal });
    const first = JSON.parse((await sseFrames(res).next()).value.data);
    assert.ok(first.rates, 'rates in the first snapshot');
    assert.ok(first.rates.tokens_per_s > 0, `tokens/s ${first.rates.tokens_per_s}`);
    assert.ok(first.rates.ticks_per_s > 0, `ticks/s ${first.rates.ticks_per_s}`);
    assert.ok(first.rates.sequences_per_tick >= 1);
    assert.ok(first.rates.interval_s >= 0.19 && first.rates.interval_s < 2, `interval ${first.rates.interval_s}`);
    // Rows carry no id without keys (issue #38): found by ref, a hash of the id.
    const ref = createHash('sha256').update(id).digest('hex').slice(0, 16);
    const mine = first.sessions.find((x) => x.ref === ref);
    assert.ok(mine && mine.tokens_per_s > 0, JSON.stringify(mine));
    // The page reads them from the snapshot, not from a second one.
    const html = await (await fetch(`${server.url}/ui`)).text();
    assert.match(html, /s\.rates/);
    assert.match(html, /x\.tokens_per_s/);
  } finally {
    events.abort();
    chat.abort();
    await server.stop();
  }
});
