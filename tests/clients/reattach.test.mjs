// Re-attach in each API's own format (issue #39: OpenAI chat and completions, Anthropic,
// Responses, Ollama chat and generate): a client detaches mid-stream (X-Superfluid-Detach: the generation goes on), then
// reads the rest from GET /v1/sessions/{id}/events with Last-Event-ID. What it saw plus the rest
// must be, byte for byte, the session's uninterrupted stream (a reader from the start once it
// ended), and the official SDK must read the joined stream as one answer of its API. A real
// server on default flags and the tiny model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Stream as OpenAIStream } from 'openai/streaming';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { Stream as AnthropicStream } from '@anthropic-ai/sdk/streaming';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { Ollama } from 'ollama';
import { startServer } from '../lib/server.mjs';
import { checkAnthropicStream } from '../lib/event_grammar.mjs';
import { sseFrames } from '../lib/sse.mjs';

let server;
before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

// POSTs `body` detached and stops reading after the frame carrying the `k`-th id; then
// re-attaches after that id and, once the session ended, reads it whole from the start.
// Null when the answer ended before `k` ids (a random-weight model may end early).
async function detachAndReattach(path, body, k) {
  const ac = new AbortController();
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-superfluid-detach': 'true' },
    body: JSON.stringify(body),
    signal: ac.signal,
  });
  assert.equal(res.status, 200);
  const session = res.headers.get('x-superfluid-session');
  let seen = '';
  let ids = 0;
  let lastId = null;
  for await (const { frame, id } of sseFrames(res, { all: true })) {
    seen += frame;
    if (id === null) continue;
    lastId = id;
    if (++ids === k) break;
  }
  ac.abort();
  if (ids < k || /message_stop|\[DONE\]|event: response\.(completed|incomplete)/.test(seen)) return null;
  const again = await fetch(`${server.url}/v1/sessions/${session}/events`, { headers: { 'Last-Event-ID': lastId } });
  assert.equal(again.status, 200);
  assert.equal(again.headers.get('content-type'), res.headers.get('content-type'));
  const rest = await again.text();
  const whole = await (await fetch(`${server.url}/v1/sessions/${session}/events`)).text();
  return { session, seen, rest, whole, lastId };
}

// Tries a few prompts until one answers past `k` ids.
async function reattached(path, bodyOf, k = 4) {
  for (let i = 0; i < 6; i++) {
    const r = await detachAndReattach(path, bodyOf(i), k);
    if (r) return r;
  }
  assert.fail(`no answer of ${path} went past ${k} ids in 6 tries`);
}

const sseResponse = (text) => new Response(text, { headers: { 'content-type': 'text/event-stream' } });

test('OpenAI chat: re-attached after Last-Event-ID, seen + rest is the uninterrupted stream; the SDK reads one completion', async () => {
  const r = await reattached('/v1/chat/completions', (i) => ({
    model: 'default', stream: true, max_tokens: 24, ignore_eos: true, seed: 7 + i,
    messages: [{ role: 'user', content: `Tell story ${i} about the sea.` }],
  }));
  assert.equal(r.seen + r.rest, r.whole);
  assert.ok(!r.rest.includes(`id: ${r.lastId}\n`), 'nothing the client had is sent again');
  const chunks = OpenAIStream.fromSSEResponse(sseResponse(r.seen + r.rest), new AbortController());
  const done = await ChatCompletionStream.fromReadableStream(chunks.toReadableStream()).finalChatCompletion();
  assert.equal(done.id, `chatcmpl-${r.session}`);
  assert.equal(done.choices[0].finish_reason, 'length');
  assert.ok(done.choices[0].message.content.length > 0);
});

test('OpenAI completions: re-attached text_completion chunks, seen + rest is the uninterrupted stream', async () => {
  const r = await reattached('/v1/completions', (i) => ({
    model: 'default', stream: true, max_tokens: 24, ignore_eos: true, seed: 70 + i, prompt: `Once upon a time ${i}`,
  }));
  assert.equal(r.seen + r.rest, r.whole);
  let text = '';
  let finish = null;
  for await (const c of OpenAIStream.fromSSEResponse(sseResponse(r.seen + r.rest), new AbortController())) {
    assert.equal(c.object, 'text_completion');
    text += c.choices[0]?.text ?? '';
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(finish, 'length');
  assert.ok(text.length > 0);
});

test('Anthropic: re-attached as typed Anthropic events (not OpenAI chunks); the SDK builds one message from seen + rest', async () => {
  const r = await reattached('/v1/messages', (i) => ({
    model: 'default', stream: true, max_tokens: 24, messages: [{ role: 'user', content: `Tell tale ${i} of the mountains.` }],
  }));
  assert.equal(r.seen + r.rest, r.whole);
  assert.doesNotMatch(r.rest, /chat\.completion\.chunk/);
  assert.match(r.rest, /^event: /m);
  checkAnthropicStream(r.seen + r.rest);
  const events = AnthropicStream.fromSSEResponse(sseResponse(r.seen + r.rest), new AbortController());
  const msg = await MessageStream.fromReadableStream(events.toReadableStream()).finalMessage();
  assert.equal(msg.id, `msg_${r.session.slice(5)}`);
  assert.equal(msg.content[0].type, 'text');
  assert.ok(['end_turn', 'max_tokens'].includes(msg.stop_reason));
  // The re-attached reader's message equals what a non-streamed read of the session says.
  const st = await (await fetch(`${server.url}/v1/sessions/${r.session}`)).json();
  assert.equal(msg.content[0].text, st.text);
  assert.equal(msg.usage.output_tokens, st.usage.completion_tokens);
});

test('Responses: re-attached as typed Responses events with their sequence_numbers; the SDK builds one response from seen + rest', async () => {
  const r = await reattached('/v1/responses', (i) => ({
    model: 'default', stream: true, max_output_tokens: 24, input: `Tell fable ${i} about the river.`,
  }));
  assert.equal(r.seen + r.rest, r.whole);
  assert.doesNotMatch(r.rest, /chat\.completion\.chunk/);
  const seqs = (r.seen + r.rest).split('\n\n').map((f) => f.match(/^data: (.*)$/m)?.[1]).filter(Boolean).map((d) => JSON.parse(d).sequence_number);
  assert.deepEqual(seqs, seqs.map((_, i) => i), 'sequence_numbers 0, 1, 2… across the join');
  const events = OpenAIStream.fromSSEResponse(sseResponse(r.seen + r.rest), new AbortController());
  const resp = await ResponseStream.fromReadableStream(events.toReadableStream()).finalResponse();
  assert.equal(resp.id, `resp_${r.session}`);
  assert.ok(['completed', 'incomplete'].includes(resp.status));
  // What the re-attached reader built equals the stored response object.
  const stored = await (await fetch(`${server.url}/v1/responses/resp_${r.session}`)).json();
  const withoutParsed = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'parsed' ? undefined : x))); // the SDK's own field
  assert.deepEqual(withoutParsed(resp.output), stored.output);
  assert.equal(resp.usage.output_tokens, stored.usage.output_tokens);
});

test('Anthropic: a stop sequence that matched is named again by a reader of the journaled session', async () => {
  // Greedy, the tiny model answers newlines: "\n\n" surely matches.
  const res = await fetch(`${server.url}/v1/messages`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'default', stream: true, max_tokens: 16, temperature: 0, stop_sequences: ['\n\n', 'never'], messages: [{ role: 'user', content: 'Probe' }] }),
  });
  const session = res.headers.get('x-superfluid-session');
  const live = await res.text();
  const again = await (await fetch(`${server.url}/v1/sessions/${session}/events`)).text();
  assert.equal(again, live, 'a reader from the start gets the live stream, byte for byte');
  const delta = again.split('\n\n').map((f) => f.match(/^data: (.*)$/m)?.[1]).filter(Boolean).map((d) => JSON.parse(d)).find((d) => d.type === 'message_delta');
  assert.equal(delta.delta.stop_reason, 'stop_sequence');
  assert.equal(delta.delta.stop_sequence, '\n\n');
});

// Ollama's NDJSON carries no ids: one line per generated token, so a client that read k token
// lines re-attaches after token k - 1. Lines of two readings differ only in created_at, the
// durations of the done line (each reading's own clock) and generate's `context`.
async function ollamaReattached(path, bodyOf, k = 4) {
  const norm = (text) => text.split('\n').filter(Boolean).map((l) => {
    const j = JSON.parse(l);
    // (`context`, generate's prompt and answer tokens: only while the head holds the session.)
    for (const f of ['created_at', 'total_duration', 'load_duration', 'prompt_eval_duration', 'eval_duration', 'context']) delete j[f];
    return j;
  });
  for (let i = 0; i < 6; i++) {
    const ac = new AbortController();
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-superfluid-detach': 'true' },
      body: JSON.stringify(bodyOf(i)),
      signal: ac.signal,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    const session = res.headers.get('x-superfluid-session');
    let buf = '';
    const dec = new TextDecoder();
    for await (const part of res.body) {
      buf += dec.decode(part, { stream: true });
      if (buf.split('\n').length > k) break;
    }
    ac.abort();
    const seen = buf.split('\n').slice(0, k).map((l) => l + '\n').join('');
    if (seen.split('\n').length <= k || /"done":true/.test(seen)) continue;
    const again = await fetch(`${server.url}/v1/sessions/${session}/events`, { headers: { 'Last-Event-ID': `${session}:${k - 1}` } });
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('content-type'), 'application/x-ndjson');
    const rest = await again.text();
    const whole = await (await fetch(`${server.url}/v1/sessions/${session}/events`)).text();
    assert.deepEqual(norm(seen + rest), norm(whole), 'seen + rest is the uninterrupted stream');
    assert.ok(/"done":true/.test(rest) && !/"done":true/.test(seen));
    return { session, joined: seen + rest, whole };
  }
  assert.fail(`no answer of ${path} went past ${k} lines in 6 tries`);
}

// The ollama SDK reads the joined lines as one streamed answer (its fetch answers with them).
const ollamaOver = (text) => new Ollama({ host: 'http://127.0.0.1:1', fetch: async () => new Response(text, { headers: { 'content-type': 'application/x-ndjson' } }) });

// What the ollama SDK builds from a stream: the answer's text, reasoning and last part.
async function ollamaRead(text, chat) {
  const client = ollamaOver(text);
  const parts = chat ? await client.chat({ model: 'default', messages: [], stream: true }) : await client.generate({ model: 'default', prompt: 'x', stream: true });
  const out = { text: '', thinking: '', last: null };
  for await (const part of parts) {
    out.text += chat ? part.message.content : part.response;
    out.thinking += (chat ? part.message.thinking : part.thinking) ?? '';
    const { created_at, total_duration, load_duration, prompt_eval_duration, eval_duration, context, ...rest } = part;
    out.last = rest;
  }
  return out;
}

test('Ollama chat and generate: re-attached as NDJSON lines after Last-Event-ID; the ollama SDK reads one answer from seen + rest', async () => {
  const chat = await ollamaReattached('/api/chat', (i) => ({
    model: 'default', options: { num_predict: 24, seed: 3 + i }, messages: [{ role: 'user', content: `Tell legend ${i} of the forest.` }],
  }));
  const joined = await ollamaRead(chat.joined, true);
  assert.deepEqual(joined, await ollamaRead(chat.whole, true));
  assert.equal(joined.last.done, true);
  const st = await (await fetch(`${server.url}/v1/sessions/${chat.session}`)).json();
  // eval_count counts the end-of-generation token too (Ollama's count); usage does not.
  assert.equal(joined.last.eval_count, st.usage.completion_tokens + (joined.last.done_reason === 'stop' ? 1 : 0));
  assert.ok(joined.text.length + joined.thinking.length > 0);

  const gen = await ollamaReattached('/api/generate', (i) => ({
    model: 'default', options: { num_predict: 24, seed: 5 + i }, prompt: `Tell myth ${i} of the desert.`,
  }));
  const g = await ollamaRead(gen.joined, false);
  assert.deepEqual(g, await ollamaRead(gen.whole, false));
  const gst = await (await fetch(`${server.url}/v1/sessions/${gen.session}`)).json();
  assert.equal(g.last.eval_count, gst.usage.completion_tokens);
});
