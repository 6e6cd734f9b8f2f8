// Event-grammar checkers for streamed answers, used by every Anthropic and OpenAI stream test
// (also the failing ones). They parse raw SSE text, assert the documented event order and
// shapes, and return what the stream said (joined text, blocks, tool calls, stop reason).
import assert from 'node:assert/strict';

/**
 * Splits raw SSE text into [{event, id, data}] (data JSON-parsed, or the raw string for
 * [DONE]; id from an `id:` line, which lets a client re-attach with Last-Event-ID).
 */
export function parseSSE(text) {
  const out = [];
  for (const frame of text.split('\n\n')) {
    if (!frame.trim()) continue;
    let event = null;
    let id = null;
    const data = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else assert.fail(`unexpected SSE line: ${JSON.stringify(line)}`);
    }
    const raw = data.join('\n');
    out.push({ event, id, data: raw === '[DONE]' ? raw : JSON.parse(raw) });
  }
  return out;
}

const DELTA_FOR_BLOCK = {
  text: ['text_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  tool_use: ['input_json_delta'],
};

/**
 * Anthropic Messages stream: message_start → (content_block_start → content_block_delta* →
 * content_block_stop)+ → message_delta → message_stop, pings anywhere, one block open at a
 * time with indexes 0, 1, …; or, after a failure, every open block closed and then `error`.
 * Returns { message, blocks: [{type, text, thinking, json, id, name, signature}], stopReason,
 * stopSequence, usage, error }.
 */
export function checkAnthropicStream(text) {
  const evs = parseSSE(text).filter((e) => e.event !== 'ping');
  for (const e of parseSSE(text)) {
    assert.ok(e.event, 'every Anthropic SSE frame names its event');
    assert.equal(e.data.type, e.event, `data.type matches the event name (${e.event})`);
  }
  assert.ok(evs.length >= 1, 'the stream is not empty');
  const out = { blocks: [], stopReason: null, stopSequence: null, usage: null, error: null };
  if (evs[0].event === 'error') {
    out.error = evs[0].data.error;
    assert.equal(evs.length, 1, 'nothing after an error event');
    return out;
  }
  assert.equal(evs[0].event, 'message_start', 'the first event is message_start');
  out.message = evs[0].data.message;
  assert.equal(out.message.role, 'assistant');
  assert.deepEqual(out.message.content, []);
  assert.equal(typeof out.message.usage.input_tokens, 'number');
  let open = null;
  let i = 1;
  for (; i < evs.length; i++) {
    const { event, data } = evs[i];
    if (event === 'content_block_start') {
      assert.equal(open, null, 'a block starts only when none is open');
      assert.equal(data.index, out.blocks.length, 'block indexes are 0, 1, 2, …');
      const b = data.content_block;
      assert.ok(DELTA_FOR_BLOCK[b.type], `known block type ${b.type}`);
      open = { type: b.type, text: '', thinking: '', json: '', id: b.id, name: b.name, signature: null };
      if (b.type === 'tool_use') {
        assert.match(b.id, /^toolu_/);
        assert.equal(typeof b.name, 'string');
        assert.deepEqual(b.input, {});
      }
    } else if (event === 'content_block_delta') {
      assert.ok(open, 'a delta belongs to an open block');
      assert.equal(data.index, out.blocks.length, 'the delta names the open block');
      const d = data.delta;
      assert.ok(DELTA_FOR_BLOCK[open.type].includes(d.type), `${d.type} in a ${open.type} block`);
      if (d.type === 'text_delta') open.text += d.text;
      if (d.type === 'thinking_delta') open.thinking += d.thinking;
      if (d.type === 'input_json_delta') open.json += d.partial_json;
      if (d.type === 'signature_delta') open.signature = d.signature;
    } else if (event === 'content_block_stop') {
      assert.ok(open, 'content_block_stop closes an open block');
      assert.equal(data.index, out.blocks.length);
      if (open.type === 'thinking') assert.equal(typeof open.signature, 'string', 'a thinking block is signed');
      out.blocks.push(open);
      open = null;
    } else {
      break;
    }
  }
  assert.equal(open, null, 'no block is left open');
  const rest = evs.slice(i);
  if (rest.length === 1 && rest[0].event === 'error') {
    out.error = rest[0].data.error;
    assert.ok(['api_error', 'overloaded_error'].includes(out.error.type), out.error.type);
    return out;
  }
  assert.ok(out.blocks.length >= 1, 'at least one content block');
  assert.deepEqual(rest.map((e) => e.event), ['message_delta', 'message_stop'], 'the stream ends with message_delta, message_stop');
  const md = rest[0].data;
  out.stopReason = md.delta.stop_reason;
  out.stopSequence = md.delta.stop_sequence;
  out.usage = md.usage;
  assert.ok(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use'].includes(out.stopReason), out.stopReason);
  // Cumulative usage: the whole prompt (input_tokens + the cache's counts) as in message_start.
  // The split may differ: a message_start sent before the first token (a long prefill) cannot
  // know yet what the prefix cache supplied.
  const promptOf = (u) => u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  assert.equal(promptOf(md.usage), promptOf(out.message.usage), 'cumulative usage repeats the prompt count');
  assert.equal(typeof md.usage.output_tokens, 'number');
  return out;
}

/**
 * OpenAI chat.completion.chunk stream: chunks of one id, the first with the role, content /
 * reasoning_content / tool_calls deltas (a call's first delta carries index, id, type and
 * name; later ones only argument text), exactly one finish_reason on the last choice chunk,
 * an optional usage chunk, then [DONE] — or an error payload then [DONE].
 * Legacy text_completion streams are read the same way (choices[0].text).
 * Returns { content, reasoning, toolCalls: [{id, name, arguments}], finishReason, usage, error }.
 */
export function checkOpenAIStream(text) {
  const evs = parseSSE(text);
  let lastIndex = -1;
  for (const e of evs) {
    assert.equal(e.event, null, 'OpenAI streams have no event names');
    if (e.id === null) continue;
    const m = e.id.match(/^(.+):(\d+)$/);
    assert.ok(m, `event id <session>:<index>: ${e.id}`);
    assert.ok(Number(m[2]) > lastIndex, 'event ids increase');
    lastIndex = Number(m[2]);
  }
  assert.ok(evs.length >= 1);
  assert.equal(evs.at(-1).data, '[DONE]', 'the stream ends with [DONE]');
  const out = { content: '', reasoning: '', toolCalls: [], finishReason: null, usage: null, error: null };
  const body = evs.slice(0, -1).map((e) => e.data);
  let id = null;
  for (let k = 0; k < body.length; k++) {
    const c = body[k];
    if (c.error) {
      assert.equal(k, body.length - 1, 'an error is the last payload before [DONE]');
      out.error = c.error;
      return out;
    }
    assert.ok(['chat.completion.chunk', 'text_completion'].includes(c.object), c.object);
    id ??= c.id;
    assert.equal(c.id, id, 'one id for all chunks');
    if (c.choices.length === 0) {
      assert.ok(c.usage, 'a chunk without choices carries usage');
      assert.ok(out.finishReason, 'usage comes after the finish');
      out.usage = c.usage;
      continue;
    }
    assert.equal(out.finishReason, null, 'nothing after the finish_reason chunk but usage');
    assert.equal(c.choices.length, 1);
    const { delta = {}, finish_reason: fr } = c.choices[0];
    if (c.object === 'text_completion') out.content += c.choices[0].text;
    else if (k === 0) assert.equal(delta.role, 'assistant', 'the first chunk has the role');
    if (typeof delta.content === 'string') out.content += delta.content;
    if (typeof delta.reasoning_content === 'string') out.reasoning += delta.reasoning_content;
    for (const tc of delta.tool_calls ?? []) {
      if (tc.index === out.toolCalls.length) {
        assert.equal(tc.type, 'function');
        assert.equal(typeof tc.id, 'string');
        assert.equal(typeof tc.function.name, 'string');
        out.toolCalls.push({ id: tc.id, name: tc.function.name, arguments: tc.function.arguments ?? '' });
      } else {
        assert.equal(tc.index, out.toolCalls.length - 1, 'argument deltas continue the latest call');
        assert.equal(tc.id, undefined);
        out.toolCalls[tc.index].arguments += tc.function.arguments;
      }
    }
    if (fr !== null) {
      assert.ok(['stop', 'length', 'tool_calls'].includes(fr), fr);
      out.finishReason = fr;
    }
  }
  assert.ok(out.finishReason, 'a finish_reason was sent');
  if (out.toolCalls.length) assert.ok(['tool_calls', 'length'].includes(out.finishReason));
  return out;
}

/** Reads a fetch Response body to text (an SSE stream to its end). */
export async function readAll(res) {
  return await res.text();
}

/**
 * A fetch for SDK clients that also hands every SSE body (as raw text) to `check` once it has
 * been read in full, so streams an SDK parses still go through the event-grammar checker.
 * Collected results are pushed to `checked`.
 */
export function checkingFetch(check, checked = []) {
  return async (url, init) => {
    const res = await fetch(url, init);
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return res;
    const [mine, theirs] = res.body.tee();
    new Response(mine).text().then((t) => checked.push(check(t)), (e) => checked.push(e));
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
