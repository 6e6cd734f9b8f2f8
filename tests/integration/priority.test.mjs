// Priority classes on a real server: where a class comes from, admission limits, and an
// interactive request overtaking long batch work (an ordering assertion, not a timing one).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, until } from '../lib/server.mjs';

// Scheduling policy of each thread of a process (sched(7): 0 SCHED_OTHER, 3 SCHED_BATCH), from
// field 41 of /proc/<pid>/task/<tid>/stat (after the parenthesized command name).
function threadPolicies(pid) {
  const out = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      out.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]));
    } catch {} // the thread ended meanwhile
  }
  return out;
}

// The head's worker child (its cmdline says `worker`, not `--standby-fd`), or 0.
function workerOf(headPid) {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (ppid === headPid && argv[1] === 'worker' && !argv.includes('--standby-fd')) return Number(pid);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

function post(server, body, headers = {}) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Write a long essay.' }], max_tokens: 2, ...body }),
  });
}

test('the class comes from body, service_tier, header, API key, config rules, then the default', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-prio-'));
  const config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ priority_rules: [{ user_agent: 'nightly-indexer', class: 'batch' }] }));
  const server = await startServer(['--config', config, '--default-priority', 'interactive']);
  try {
    const cls = async (body, headers) => {
      const r = await post(server, body, headers);
      assert.equal(r.status, 200, await r.text());
      return r.headers.get('x-superfluid-priority');
    };
    assert.equal(await cls({ priority: 'batch' }), 'batch');
    assert.equal(await cls({ priority: -1 }), 'interactive'); // vLLM: lower is more urgent
    assert.equal(await cls({ priority: 5 }), 'batch');
    assert.equal(await cls({ priority: 0 }, { 'X-Superfluid-Priority': 'batch' }), 'normal'); // body first
    assert.equal(await cls({ service_tier: 'flex' }), 'batch');
    assert.equal(await cls({ service_tier: 'priority' }, { 'X-Superfluid-Priority': 'batch' }), 'interactive');
    assert.equal(await cls({}, { 'X-Superfluid-Priority': 'normal' }), 'normal');
    assert.equal(await cls({}, { Authorization: 'Bearer sk-batch-agent7' }), 'batch');
    assert.equal(await cls({}, { 'x-api-key': 'normal' }), 'normal');
    assert.equal(await cls({}, { 'User-Agent': 'nightly-indexer/2.1' }), 'batch');
    assert.equal(await cls({}), 'interactive'); // --default-priority
    const bad = await post(server, {}, { 'X-Superfluid-Priority': 'urgent!!' });
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.param, 'X-Superfluid-Priority');
    const badBody = await post(server, { priority: 'asap' });
    assert.equal(badBody.status, 400);
    assert.equal((await badBody.json()).error.param, 'priority');
  } finally {
    await server.stop();
  }
});

test('a full class queue answers 429 with Retry-After; other classes are still admitted', async () => {
  // The running stream must outlast the test: at 8,192 tokens (the streams' default) the tiny
  // model reached the end of its context in seconds on a loaded CI machine, the waiting request
  // moved into the slot and the third was queued (200). serve's default, the model's training
  // context (32,768), takes ~4x longer. --parallel 1 is the slot count under test.
  const server = await startServer(['--parallel', '1', '--max-queue', '1']);
  try {
    const long = { max_tokens: 100000, ignore_eos: true, stream: true };
    const running = await post(server, { ...long, priority: 'batch' });
    const runningReader = running.body.getReader();
    await runningReader.read();
    // The stream's first chunk leaves at acceptance, before the session has a slot: on a loaded
    // CI machine the next request found it still queued and was itself refused (429), so the
    // queue never filled and the third request was admitted. Wait until it holds the slot.
    assert.ok(await until(async () => (await server.metrics()).num_requests_running === 1, 20000, 20));
    const waiting = await post(server, { ...long, priority: 'batch' }); // fills the batch queue
    assert.equal(waiting.status, 200);
    assert.ok(await until(async () => (await server.metrics()).num_requests_waiting === 1, 20000, 20));
    const refused = await post(server, { priority: 'batch' });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '1');
    const e = (await refused.json()).error;
    assert.equal(e.code, 'overloaded');
    // An interactive request is not refused: it preempts the running batch sequence.
    const chat = await post(server, { priority: 'interactive', max_tokens: 3 });
    assert.equal(chat.status, 200);
    await runningReader.cancel();
    await waiting.body?.cancel();
  } finally {
    await server.stop();
  }
});

test('an interactive request gets its first token before any long batch session finishes', async () => {
  // Two sequences for three batch sessions: every slot is busy, so the chat must preempt.
  const server = await startServer(['--parallel', '2']);
  try {
    const events = [];
    const batch = [0, 1, 2].map(async (i) => {
      const r = await post(server, { priority: 'batch', max_tokens: 300, ignore_eos: true, stream: true });
      const text = await r.text();
      events.push({ what: `batch-${i}-done`, at: performance.now() });
      return text;
    });
    // All slots are busy with batch work before the chat arrives.
    await until(async () => (await server.metrics()).num_requests_running === 2, 20000, 20);
    // While tokens stream, exactly one worker thread is batch-class: the Events stream's, which
    // must not preempt decoding (util/relay_sched.h). Every head thread stays ordinary.
    // The serving worker: the head's child that is not the standby (/api/ps gives no pid
    // without --api-key).
    const workerPid = workerOf(server.proc.pid);
    assert.ok(workerPid > 0, 'the worker process is found');
    assert.equal(threadPolicies(workerPid).filter((p) => p === 3).length, 1, `worker: ${threadPolicies(workerPid)}`);
    assert.ok(threadPolicies(server.proc.pid).every((p) => p === 0), `head: ${threadPolicies(server.proc.pid)}`);
    const chat = await post(server, { priority: 'interactive', max_tokens: 5, stream: true });
    const reader = chat.body.getReader();
    await reader.read(); // headers + the role chunk
    await reader.read(); // the first content
    events.push({ what: 'chat-first-token', at: performance.now() });
    await reader.cancel();
    const texts = await Promise.all(batch);
    events.sort((a, b) => a.at - b.at);
    assert.equal(events[0].what, 'chat-first-token', JSON.stringify(events));
    // The preempted batch session resumed and completed its 300 tokens.
    for (const t of texts) assert.match(t, /"finish_reason":"length"/);
    // The chat was cancelled by its client (reader.cancel): that reaches the worker on its own.
    await until(async () => (await server.metrics()).num_requests_running === 0, 20000, 20);
    const m = await server.metrics();
    assert.ok(m.num_preemptions_total >= 1, 'a batch sequence was preempted for the chat');
    assert.equal(m.num_requests_running, 0);
    // The tokens came on the worker's Events stream, the two sequences of a tick in one message.
    assert.ok(m.worker_event_batches_total > 0, 'events came on the Events stream');
    assert.ok(m.worker_events_total >= 900, `all tokens on the stream: ${m.worker_events_total}`);
    assert.ok(m.worker_events_total > 1.2 * m.worker_event_batches_total,
      `batches carry several sessions' tokens: ${m.worker_events_total} events in ${m.worker_event_batches_total} batches`);
  } finally {
    await server.stop();
  }
});

test('an interactive arrival interrupts the batch tick in flight; the batch streams stay identical', async () => {
  const words = Array.from({ length: 1500 }, (_, i) => ['alpha', 'delta', 'kilo', 'oscar', 'papa'][(i * 7) % 5]).join(' ');
  const batchBody = (i) => ({
    priority: 'batch',
    temperature: 0,
    max_tokens: 120,
    ignore_eos: true,
    messages: [{ role: 'user', content: `Document ${i}: ${words}` }],
  });
  const texts = async (server) =>
    Promise.all([0, 1].map(async (i) => (await (await post(server, batchBody(i))).json()).choices[0].message.content));
  const ref = await startServer(['--cache-ram', '0', '--cache-dir', 'off']);
  let expected;
  try {
    expected = await texts(ref);
  } finally {
    await ref.stop();
  }
  const server = await startServer();
  try {
    const batch = texts(server);
    await until(async () => (await server.metrics()).num_requests_running === 2, 20000, 5);
    // Chats one after another while the batch sequences prefill and decode.
    for (let i = 0; i < 8; i++) {
      const r = await post(server, { priority: 'interactive', max_tokens: 2, messages: [{ role: 'user', content: `hi ${i}` }] });
      assert.equal(r.status, 200);
      await r.json();
      await new Promise((res) => setTimeout(res, 20));
    }
    assert.deepEqual(await batch, expected, 'the interrupted ticks were redone exactly');
    const m = await server.metrics();
    assert.ok(m.interrupted_ticks_total >= 1, `a tick was interrupted: ${m.interrupted_ticks_total}`);
  } finally {
    await server.stop();
  }
});
