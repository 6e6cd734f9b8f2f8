// Handed API cases (../shared/cases/api-cases-2.md) on the Responses API as Codex uses it
// (issue #19), over raw HTTP: tool outputs as part arrays (B29), non-function tools (B30),
// replayed reasoning and other input items (B31), and the SSE fields strict clients need (B33).
// The model has random weights: the tests judge statuses, shapes, event grammar and counts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { checkResponsesFields, parseResponsesSSE } from '../lib/responses_grammar.mjs';

let server;
const MODEL = 'default';

before(async () => {
  server = await startServer();
});
after(async () => server && (await server.stop()));

async function create(body) {
  const res = await fetch(server.url + '/v1/responses', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  const text = await res.text();
  assert.ok(res.status < 500, `never a 5xx: ${res.status} ${text}`);
  if (body.stream && res.status === 200) return { status: 200, events: parseResponsesSSE(text), text };
  return { status: res.status, json: JSON.parse(text), text };
}
function ok(r) {
  assert.equal(r.status, 200, r.text);
  return r.json;
}
function assert400(r, param, re) {
  assert.equal(r.status, 400, r.text);
  assert.equal(r.json.error.type, 'invalid_request_error');
  if (param) assert.equal(r.json.error.param, param);
  if (re) assert.match(r.json.error.message, re);
  return r.json.error;
}
const calls = (out) => out.filter((i) => ['function_call', 'custom_tool_call'].includes(i.type));

const SHELL = {
  type: 'function',
  name: 'shell',
  description: 'run a command',
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] },
  strict: false,
};
// A namespace (Codex groups an MCP server's tools so) whose tool's arguments close under the grammar.
const FS = {
  type: 'namespace',
  name: 'mcp__fs',
  description: 'files',
  tools: [
    {
      type: 'function',
      name: 'read',
      description: 'read a file',
      parameters: { type: 'object', properties: { path: { type: 'string', enum: ['a.txt', 'b.txt'] } }, required: ['path'], additionalProperties: false },
    },
  ],
};
const PATCH = { type: 'custom', name: 'apply_patch', description: 'apply a patch' };
// Every tool type Codex (and the spec) may send that this server cannot run.
const HOSTED = [
  { type: 'web_search' },
  { type: 'web_search_preview' },
  { type: 'image_generation' },
  { type: 'local_shell' },
  { type: 'mcp', server_label: 'x', server_url: 'http://127.0.0.1:1' },
  { type: 'file_search', vector_store_ids: ['vs_1'] },
  { type: 'computer_use_preview', display_width: 8, display_height: 8, environment: 'linux' },
  { type: 'code_interpreter', container: { type: 'auto' } },
  { type: 'tool_search' },
  { type: 'some_future_tool' },
];

// B29 ------------------------------------------------------------------------------------------

const VIEW = {
  type: 'function',
  name: 'view',
  description: 'show a file',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};
const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const withOutput = (output, type = 'function_call_output') => ({
  max_output_tokens: 16,
  tools: [VIEW],
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look at a.png' }] },
    { type: 'function_call', call_id: 'call_1', name: 'view', arguments: '{"path":"a.png"}' },
    { type, call_id: 'call_1', output },
  ],
});

test('B29 function_call_output as a string or an array of text/image parts is answered (200), parts joined in order', async () => {
  const tokens = async (output) => ok(await create(withOutput(output))).usage.input_tokens;
  const empty = await tokens('');
  const two = await tokens([
    { type: 'input_text', text: 'first part' },
    { type: 'output_text', text: 'second part' },
  ]);
  const plain = await tokens('first part second part');
  assert.ok(two - empty >= plain - empty, `both parts reach the prompt: ${two} vs ${plain} (empty ${empty})`);
  assert.ok((await tokens('plain string')) > empty);
  assert.equal(await tokens([]), empty, 'no parts is an empty output');
  // No vision: the image becomes a short placeholder, never a 400 the client would replay forever.
  const image = await tokens([{ type: 'input_image', image_url: PNG }]);
  assert.ok(image > empty && image < empty + 40, `an image is a short placeholder: ${image} vs ${empty}`);
  const mixed = await tokens([{ type: 'input_text', text: 'see:' }, { type: 'input_image', image_url: PNG, detail: 'auto' }, { type: 'input_file', filename: 'a.pdf', file_data: 'JVBERi0=' }]);
  assert.ok(mixed > image);
  // The same for a custom tool's output, and a streamed answer.
  ok(await create(withOutput([{ type: 'input_text', text: 'done' }], 'custom_tool_call_output')));
  const s = await create({ ...withOutput([{ type: 'input_image', image_url: PNG }]), stream: true });
  checkResponsesFields(s.events);
  // A malformed part is a 400 naming it, not a 500.
  assert400(await create(withOutput([{ type: 'bogus', text: 'x' }])), 'input[2].output[0]');
  assert400(await create(withOutput({ type: 'input_text', text: 'x' })), 'input[2].output');
});

// B30 ------------------------------------------------------------------------------------------

test('B30 non-function tools (as Codex sends them) are skipped; the function and custom tools still work', async () => {
  const repro = {
    // Room for the whitespace the JSON grammar lets a random model write between the tokens
    // (requests are unseeded; with 32 tokens one CI run had a call cut short: no call at all).
    max_output_tokens: 160,
    tool_choice: 'required',
    input: 'list files',
    tools: [SHELL, { type: 'web_search' }, { type: 'image_generation' }, { type: 'local_shell' }, PATCH, { type: 'some_future_tool' }],
  };
  const r = ok(await create(repro));
  const called = calls(r.output);
  assert.ok(called.length >= 1, JSON.stringify(r.output));
  for (const c of called) {
    assert.ok((c.type === 'function_call' && c.name === 'shell') || (c.type === 'custom_tool_call' && c.name === 'apply_patch'), JSON.stringify(c));
  }
  assert.deepEqual(r.tools, repro.tools, 'the response echoes the tools as sent');
  for (const input of ['list files', 'show the disk usage', 'what is here']) {
    const one = ok(await create({ ...repro, input, parallel_tool_calls: false }));
    assert.equal(calls(one.output).length, 1, JSON.stringify(one.output));
  }
  // Every hosted type at once, and a namespace: 200, and the log says what was skipped.
  const all = ok(await create({ max_output_tokens: 8, input: 'hi', tools: [SHELL, FS, PATCH, ...HOSTED] }));
  assert.ok(['completed', 'incomplete'].includes(all.status));
  assert.match(server.log(), /tool types .*'web_search'.* skipped/);
});

test('B30 a namespace tool is offered flattened and answered with its namespace and name', async () => {
  for (const stream of [false, true]) {
    // Room for the whitespace the JSON grammar lets a random model write between the tokens.
    const body = {
      stream,
      max_output_tokens: 160,
      parallel_tool_calls: false,
      input: 'read a file',
      tools: [FS, { type: 'web_search' }],
      tool_choice: { type: 'function', name: 'read', namespace: 'mcp__fs' },
    };
    const r = await create(body);
    const out = stream ? checkResponsesFields(r.events).response.output : ok(r).output;
    const [call] = calls(out);
    assert.equal(call.type, 'function_call');
    assert.equal(call.namespace, 'mcp__fs');
    assert.equal(call.name, 'read');
    assert.ok(['a.txt', 'b.txt'].includes(JSON.parse(call.arguments).path));
    // Sent back, the call and its output are accepted (Codex replays them).
    const input = [{ role: 'user', content: 'read a file' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'hello' }];
    ok(await create({ max_output_tokens: 4, tools: [FS], input }));
  }
});

test('B30 a custom (freeform) tool is a one-string tool answered as custom_tool_call, streamed with input events', async () => {
  for (const stream of [false, true]) {
    const r = await create({ stream, max_output_tokens: 64, input: 'patch it', tools: [PATCH, SHELL, { type: 'web_search' }], tool_choice: { type: 'custom', name: 'apply_patch' } });
    const out = stream ? checkResponsesFields(r.events).response.output : ok(r).output;
    const [call] = calls(out);
    assert.equal(call.type, 'custom_tool_call', JSON.stringify(out));
    assert.equal(call.name, 'apply_patch');
    assert.equal(typeof call.input, 'string');
    assert.match(call.call_id, /\S/);
    if (stream) assert.ok(r.events.some((e) => e.type === 'response.custom_tool_call_input.done' && e.input === call.input));
    // Replayed with its output: 200.
    ok(await create({ max_output_tokens: 4, tools: [PATCH], input: [{ role: 'user', content: 'patch it' }, call, { type: 'custom_tool_call_output', call_id: call.call_id, output: 'applied' }] }));
  }
});

test('B30 the empty-input probe is answered; a malformed function tool or a forced hosted tool is a 400 naming it', async () => {
  const probe = ok(await create({ input: [], max_output_tokens: 1 }));
  assert.equal(probe.usage.output_tokens, 1);
  assert400(await create({ input: 'x', tools: [{ type: 'web_search' }, { type: 'function', parameters: { type: 'object' } }] }), 'tools[1].name');
  assert400(await create({ input: 'x', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'custom' }] }] }), 'tools[0].tools[0].name');
  assert400(await create({ input: 'x', tools: [SHELL], tool_choice: { type: 'web_search' } }), 'tool_choice', /web_search/);
  assert400(await create({ input: 'x', tools: [SHELL], tool_choice: { type: 'function', name: 'nope' } }), 'tool_choice', /nope/);
  // allowed_tools narrows what is offered.
  const narrowed = ok(
    await create({
      max_output_tokens: 48,
      input: 'x',
      parallel_tool_calls: false,
      tools: [SHELL, FS],
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'read', namespace: 'mcp__fs' }] },
    }),
  );
  assert.deepEqual(calls(narrowed.output).map((c) => c.name), ['read']);
});

// B31 ------------------------------------------------------------------------------------------

const history = (reasoning, extra = []) => ({
  max_output_tokens: 16,
  store: false,
  include: ['reasoning.encrypted_content'],
  tools: [SHELL],
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
    reasoning,
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
    ...extra,
  ],
});

test('B31 replayed reasoning items (any encrypted_content) and Codex history items are accepted', async () => {
  const base = { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'I should run ls.' }] };
  for (const reasoning of [
    { ...base, encrypted_content: '' },
    { ...base, encrypted_content: null },
    { ...base, encrypted_content: 'gAAAAforeignblob' },
    { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'plan' }] },
  ]) {
    ok(await create(history(reasoning)));
  }
  // Items of tools that ran elsewhere are dropped; local shell calls and custom tool calls are history.
  ok(
    await create(
      history({ ...base, encrypted_content: null }, [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
        { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: null },
        { type: 'compaction', encrypted_content: 'opaque' },
        { type: 'local_shell_call', call_id: 'ls_1', status: 'completed', action: { type: 'exec', command: ['ls'] } },
        { type: 'function_call_output', call_id: 'ls_1', output: 'a.txt' },
        { type: 'custom_tool_call', call_id: 'ct_1', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'ct_1', output: 'ok' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'be brief' }] },
      ]),
    ),
  );
});

test('B31 an item_reference to an unknown id and unsupported item types are 400s naming them', async () => {
  const base = { type: 'reasoning', id: 'rs_1', summary: [] };
  const ref = assert400(await create(history(base, [{ type: 'item_reference', id: 'msg_unknown' }])), 'input[4]');
  assert.match(ref.message, /msg_unknown/);
  const computer = { type: 'computer_call_output', call_id: 'c9', output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,AA==' } };
  assert400(await create(history(base, [computer])), 'input[4]', /computer_call_output/);
  assert400(await create({ input: 'x', truncation: 'sometimes' }), 'truncation');
  assert400(await create({ input: 'x', include: 5 }), 'include');
  assert400(await create({ input: 'x', prompt_cache_key: 5 }), 'prompt_cache_key');
});

test('B31 include, truncation, parallel_tool_calls, prompt_cache_key, store are accepted and echoed', async () => {
  const r = ok(
    await create({
      input: 'hi',
      max_output_tokens: 2,
      include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
      truncation: 'auto',
      parallel_tool_calls: false,
      prompt_cache_key: 'codex-session-1',
      store: false,
      service_tier: 'auto',
      text: { verbosity: 'low' },
      reasoning: { effort: 'low', summary: 'auto' },
    }),
  );
  assert.equal(r.truncation, 'auto');
  assert.equal(r.parallel_tool_calls, false);
  assert.equal(r.prompt_cache_key, 'codex-session-1');
  assert.equal(r.store, false);
});

test('B31 round trip: any output this server produced, sent back with the call outputs, is accepted', async () => {
  const tools = [SHELL, PATCH, FS];
  for (const [i, extra] of [{ max_output_tokens: 12 }, { max_output_tokens: 24, temperature: 1.5 }, { max_output_tokens: 40 }, { max_output_tokens: 6, stream: true }].entries()) {
    const first = await create({ input: `run ls ${i}`, tools, tool_choice: 'required', parallel_tool_calls: true, ...extra });
    const r = extra.stream ? checkResponsesFields(first.events).response : ok(first);
    if (r.status === 'incomplete' && r.output.length) {
      assert.equal(r.incomplete_details.reason, 'max_output_tokens');
      assert.equal(r.output.at(-1).status, 'incomplete', 'the item cut by the limit is marked incomplete');
    }
    const outputs = r.output.flatMap((item) =>
      item.type === 'function_call'
        ? [{ type: 'function_call_output', call_id: item.call_id, output: 'ok' }]
        : item.type === 'custom_tool_call'
          ? [{ type: 'custom_tool_call_output', call_id: item.call_id, output: [{ type: 'input_text', text: 'ok' }] }]
          : [],
    );
    ok(await create({ max_output_tokens: 4, tools, input: [{ role: 'user', content: `run ls ${i}` }, ...r.output, ...outputs] }));
  }
});

// B33 ------------------------------------------------------------------------------------------

test('B33 every SSE event carries the fields the spec requires, numbered 0..N, items with status', async () => {
  const text = await create({ stream: true, max_output_tokens: 16, input: 'hi' });
  const t = checkResponsesFields(text.events);
  assert.ok(['response.completed', 'response.incomplete'].includes(t.terminal));
  const tool = await create({ stream: true, max_output_tokens: 32, input: 'run ls', tool_choice: 'required', tools: [SHELL] });
  const c = checkResponsesFields(tool.events);
  assert.ok(c.items.some((i) => i.kind === 'function_call' && i.name === 'shell'));
  // With reasoning on, reasoning items obey the same rules.
  const think = await create({ stream: true, max_output_tokens: 24, input: 'think first', reasoning: { effort: 'high' } });
  checkResponsesFields(think.events);
  // The same events come back from a stored response's replay.
  const stored = await create({ stream: true, max_output_tokens: 8, input: 'hi', store: true });
  const id = stored.events[0].response.id;
  const again = parseResponsesSSE(await (await fetch(`${server.url}/v1/responses/${id}?stream=true`)).text());
  checkResponsesFields(again);
  assert.deepEqual(again.at(-1).response.output, stored.events.at(-1).response.output);
});
