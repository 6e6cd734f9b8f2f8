// A background OpenAI Responses API answer across a head SIGKILL (issue #5): after a restart on
// the same state dir, GET /v1/responses/{id} completes it with the uninterrupted text and a
// stream resumed with starting_after continues the same event sequence. Raw HTTP (the SDK lives
// in tests/clients; the SDK-level background tests are in tests/clients/responses.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, until } from '../lib/server.mjs';
import { sseFrames } from '../lib/sse.mjs';

function post(server, path, body) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Reads a Responses API SSE stream into its events; onEvents(events) after each one. */
async function readEvents(res, onEvents) {
  const events = [];
  for await (const { data } of sseFrames(res)) {
    events.push(JSON.parse(data));
    onEvents?.(events);
  }
  return events;
}

const outputText = (events) =>
  events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
const messageText = (r) =>
  r.output.filter((i) => i.type === 'message').flatMap((i) => i.content).map((c) => c.text).join('');

test('head SIGKILLed mid background response: after a restart GET by id completes it, and a stream resumed by sequence_number continues the same events', async () => {
  // This prompt makes the tiny model write text greedily (others give mostly reasoning or nothing).
  const body = { input: 'Explain gravity in detail.', max_output_tokens: 120, temperature: 0 };
  let server = await startServer();
  const stateDir = server.stateDir;
  let reference;
  let seen;
  try {
    await (await post(server, '/v1/responses', body)).json();
    // The second run reuses the prompt from the prefix cache: its cached_tokens must survive too.
    reference = await (await post(server, '/v1/responses', body)).json();
    assert.ok(reference.usage.input_tokens_details.cached_tokens > 0);
    const res = await post(server, '/v1/responses', { ...body, background: true, stream: true });
    assert.equal(res.status, 200);
    const session = res.headers.get('x-superfluid-session');
    const reading = readEvents(res);
    // Killed once a third of the answer is journaled (whatever events that made so far).
    const progress = async () => (await (await fetch(`${server.url}/v1/sessions/${session}`)).json()).usage.completion_tokens;
    assert.ok(await until(async () => (await progress()) >= 40, 120000, 20), 'generation progressed');
    const killed = new Promise((r) => server.proc.once('exit', r));
    server.proc.kill('SIGKILL');
    await killed;
    seen = await reading;
    assert.ok(seen.length >= 2);
    assert.ok(!seen.some((e) => e.type === 'response.completed' || e.type === 'response.incomplete'), 'cut by the kill');
  } finally {
    await server.stop();
  }
  const id = seen[0].response.id;
  assert.match(id, /^resp_sess_/);

  server = await startServer([], { stateDir });
  try {
    assert.match(server.log(), /resuming 1 unfinished sessions from the journal/);
    const last = seen.at(-1).sequence_number;
    const rest = await readEvents(await fetch(`${server.url}/v1/responses/${id}?stream=true&starting_after=${last}`));
    const all = [...seen, ...rest];
    all.forEach((e, i) => assert.equal(e.sequence_number, i, 'no gap, no duplicate'));
    assert.equal(all.at(-1).type, reference.status === 'completed' ? 'response.completed' : 'response.incomplete');
    assert.equal(outputText(all), messageText(reference), 'seen + resumed = the uninterrupted text');
    // Polling by id: the same response, the same text; a replay from the start is the same stream.
    let r;
    for (;;) {
      r = await (await fetch(`${server.url}/v1/responses/${id}`)).json();
      if (!['queued', 'in_progress'].includes(r.status)) break;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.equal(r.status, reference.status);
    assert.equal(r.background, true);
    assert.equal(messageText(r), messageText(reference));
    assert.equal(r.usage.output_tokens, reference.usage.output_tokens);
    assert.deepEqual(await readEvents(await fetch(`${server.url}/v1/responses/${id}?stream=true`)), all);
    // A plain response finished before the kill, read back from the journal: the same object.
    assert.deepEqual(await (await fetch(`${server.url}/v1/responses/${reference.id}`)).json(), reference);
  } finally {
    await server.stop();
  }
});
