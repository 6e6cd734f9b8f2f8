// Checks an OpenAI Responses API event stream against the documented order: response.created,
// response.in_progress, then per output item output_item.added → (content_part.added →
// *.delta* → *.done → content_part.done) | (function_call_arguments.delta* →
// function_call_arguments.done) → output_item.done, one item open at a time, and one terminal
// event (completed | incomplete | failed). sequence_number strictly increases. Returns a summary.
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
      if (item.kind === 'function_call') item.name = e.item.name;
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
      case 'response.output_item.done':
        assert.ok(item.textDone, 'the item text was closed before the item');
        if (item.kind !== 'function_call') assert.ok(item.partDone);
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
