// Checks an OpenAI Responses API event stream against the documented order: response.created,
// response.in_progress, then per output item output_item.added → (content_part.added →
// *.delta* → *.done → content_part.done) | (function_call_arguments.delta* →
// function_call_arguments.done) | (custom_tool_call_input.delta* → custom_tool_call_input.done)
// → output_item.done, one item open at a time, and one terminal event (completed | incomplete |
// failed). sequence_number strictly increases. Returns a summary.
// checkResponsesFields adds what strict typed clients (Codex's serde structs, the SDKs) need:
// the fields the spec marks required on every event, contiguous sequence numbers from 0, the
// `event:` line equal to the JSON type, items with status, a full Response object on
// created / in_progress / the terminal event (case B33).
import assert from 'node:assert/strict';

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

export function checkResponsesStream(events) {
  assert.ok(events.length >= 3, 'at least created, in_progress and a terminal event');
  let lastSeq = -1;
  for (const e of events) {
    assert.ok(Number.isInteger(e.sequence_number), `${e.type} has a sequence_number`);
    assert.ok(e.sequence_number > lastSeq, `sequence_number increases at ${e.type}`);
    lastSeq = e.sequence_number;
  }
  assert.equal(events[0].type, 'response.created');
  assert.equal(events[1].type, 'response.in_progress');
  const last = events.at(-1);
  assert.ok(TERMINAL.has(last.type), `last event is terminal, got ${last.type}`);
  const items = [];
  let item = null; // { kind, index, id, text, part }
  for (const e of events.slice(2, -1)) {
    assert.ok(!TERMINAL.has(e.type), 'one terminal event, at the end');
    if (e.type === 'response.output_item.added') {
      assert.equal(item, null, 'one item open at a time');
      assert.equal(e.output_index, items.length, 'output_index counts items');
      item = { kind: e.item.type, index: e.output_index, id: e.item.id, text: '', part: false, partDone: false, textDone: false };
      if (item.kind === 'function_call' || item.kind === 'custom_tool_call') item.name = e.item.name;
      continue;
    }
    assert.ok(item, `${e.type} inside an open item`);
    assert.equal(e.output_index, item.index, `${e.type} names the open item's output_index`);
    if (e.item_id !== undefined) assert.equal(e.item_id, item.id);
    switch (e.type) {
      case 'response.content_part.added':
        assert.ok(['message', 'reasoning'].includes(item.kind) && !item.part);
        item.part = true;
        break;
      case 'response.output_text.delta':
      case 'response.reasoning_text.delta':
        assert.ok(item.part && !item.textDone, `${e.type} after content_part.added`);
        assert.equal(item.kind, e.type.includes('output_text') ? 'message' : 'reasoning');
        item.text += e.delta;
        break;
      case 'response.output_text.done':
      case 'response.reasoning_text.done':
        assert.ok(item.part && !item.textDone);
        assert.equal(e.text, item.text, 'done text equals the joined deltas');
        item.textDone = true;
        break;
      case 'response.content_part.done':
        assert.ok(item.textDone && !item.partDone);
        item.partDone = true;
        break;
      case 'response.function_call_arguments.delta':
        assert.equal(item.kind, 'function_call');
        assert.ok(!item.textDone);
        item.text += e.delta;
        break;
      case 'response.function_call_arguments.done':
        assert.equal(item.kind, 'function_call');
        assert.equal(e.arguments, item.text, 'arguments equal the joined deltas');
        item.textDone = true;
        break;
      case 'response.custom_tool_call_input.delta':
        assert.equal(item.kind, 'custom_tool_call');
        assert.ok(!item.textDone);
        item.text += e.delta;
        break;
      case 'response.custom_tool_call_input.done':
        assert.equal(item.kind, 'custom_tool_call');
        assert.equal(e.input, item.text, 'input equals the joined deltas');
        item.textDone = true;
        break;
      case 'response.output_item.done':
        assert.ok(item.textDone, 'the item text was closed before the item');
        if (!['function_call', 'custom_tool_call'].includes(item.kind)) assert.ok(item.partDone);
        assert.equal(e.item.id, item.id);
        items.push({ ...item, item: e.item });
        item = null;
        break;
      default:
        assert.fail(`unexpected event ${e.type}`);
    }
  }
  assert.equal(item, null, 'every item closed before the terminal event');
  assert.equal(last.response.output.length, items.length, 'the final response lists every item');
  return { items, response: last.response, terminal: last.type };
}

/** The events of a Responses SSE body, each with `_event`: its `event:` line (null when none). */
export function parseResponsesSSE(text) {
  const events = [];
  for (const frame of text.split('\n\n')) {
    let name = null;
    let data = null;
    for (const line of frame.split('\n')) {
      if (line.startsWith('event: ')) name = line.slice(7);
      if (line.startsWith('data: ')) data = line.slice(6);
    }
    if (data !== null) events.push({ ...JSON.parse(data), _event: name });
  }
  return events;
}

// Required fields per event type (OpenAI Responses streaming reference).
const REQUIRED = {
  'response.output_item.added': ['output_index', 'item'],
  'response.output_item.done': ['output_index', 'item'],
  'response.content_part.added': ['item_id', 'output_index', 'content_index', 'part'],
  'response.content_part.done': ['item_id', 'output_index', 'content_index', 'part'],
  'response.output_text.delta': ['item_id', 'output_index', 'content_index', 'delta', 'logprobs'],
  'response.output_text.done': ['item_id', 'output_index', 'content_index', 'text', 'logprobs'],
  'response.reasoning_text.delta': ['item_id', 'output_index', 'content_index', 'delta'],
  'response.reasoning_text.done': ['item_id', 'output_index', 'content_index', 'text'],
  'response.function_call_arguments.delta': ['item_id', 'output_index', 'delta'],
  'response.function_call_arguments.done': ['item_id', 'output_index', 'arguments'],
  'response.custom_tool_call_input.delta': ['item_id', 'output_index', 'delta'],
  'response.custom_tool_call_input.done': ['item_id', 'output_index', 'input'],
};
const RESPONSE_KEYS = ['id', 'object', 'created_at', 'status', 'model', 'output', 'error', 'incomplete_details', 'instructions', 'metadata', 'parallel_tool_calls', 'temperature', 'tool_choice', 'tools', 'top_p'];
const ITEM_KEYS = {
  message: ['id', 'type', 'status', 'role', 'content'],
  reasoning: ['id', 'type', 'status', 'summary'],
  function_call: ['id', 'type', 'status', 'call_id', 'name', 'arguments'],
  custom_tool_call: ['id', 'type', 'status', 'call_id', 'name', 'input'],
};

function checkResponseObject(r, where) {
  assert.ok(r && typeof r === 'object', `${where} carries a response`);
  for (const k of RESPONSE_KEYS) assert.ok(k in r, `${where}: response.${k} is present`);
  assert.equal(r.object, 'response');
  assert.match(r.id, /^resp_/);
  assert.ok(Number.isInteger(r.created_at), `${where}: created_at is an integer`);
  assert.ok(Array.isArray(r.output), `${where}: output is an array`);
}

function checkItem(item, status, where) {
  const keys = ITEM_KEYS[item.type];
  assert.ok(keys, `${where}: known item type ${item.type}`);
  for (const k of keys) assert.ok(k in item, `${where}: ${item.type}.${k} is present`);
  if (status) assert.ok(status.includes(item.status), `${where}: status ${item.status}`);
}

/** checkResponsesStream plus every field strict clients require; returns its summary. */
export function checkResponsesFields(events) {
  const summary = checkResponsesStream(events);
  events.forEach((e, i) => {
    assert.equal(e.sequence_number, i, `sequence_number ${e.sequence_number} at event ${i}: contiguous from 0`);
    if (e._event !== undefined) assert.equal(e._event, e.type, 'the event: line equals the JSON type');
    for (const k of REQUIRED[e.type] || []) assert.ok(k in e, `${e.type} has ${k}`);
    if (e.item_id !== undefined) assert.equal(typeof e.item_id, 'string');
  });
  const [created, inProgress] = events;
  for (const e of [created, inProgress]) {
    checkResponseObject(e.response, e.type);
    assert.deepEqual(e.response.output, [], `${e.type}: output is []`);
    assert.ok(['queued', 'in_progress'].includes(e.response.status));
  }
  for (const e of events) {
    if (e.type === 'response.output_item.added') {
      checkItem(e.item, ['in_progress'], e.type);
      if (e.item.type === 'function_call') assert.equal(e.item.arguments, '');
      if (e.item.type === 'custom_tool_call') assert.equal(e.item.input, '');
    }
    if (e.type === 'response.output_item.done') checkItem(e.item, ['completed', 'incomplete'], e.type);
  }
  const last = events.at(-1);
  checkResponseObject(last.response, last.type);
  assert.deepEqual(last.response.output, summary.items.map((i) => i.item), 'the terminal output equals the output_item.done items');
  assert.ok(last.response.usage && Number.isInteger(last.response.usage.output_tokens), 'the terminal response carries usage');
  const status = { 'response.completed': 'completed', 'response.incomplete': 'incomplete', 'response.failed': 'failed' }[last.type];
  assert.equal(last.response.status, status);
  if (status === 'incomplete') assert.equal(last.response.incomplete_details.reason, 'max_output_tokens');
  return summary;
}
