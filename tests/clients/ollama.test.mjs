// The official `ollama` npm SDK against a real server and the tiny model: chat stream,
// generate, `format` with a JSON schema (valid by grammar), tools, tags/show/ps/version, embed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ollama } from 'ollama';
import { startServer } from '../lib/server.mjs';
import { answerTokens } from '../lib/ndjson.mjs';

let server;
let ollama;
const MODEL = 'tiny-qwen3-1';

before(async () => {
  server = await startServer();
  ollama = new Ollama({ host: server.url });
});
after(async () => server && (await server.stop()));

test('chat stream: parts then one done part with counters', async () => {
  const stream = await ollama.chat({
    model: `${MODEL}:latest`,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello!' }],
    stream: true,
    options: { num_predict: 10, temperature: 0 },
  });
  let text = '';
  let last;
  for await (const part of stream) {
    assert.equal(part.model, `${MODEL}:latest`);
    assert.equal(part.message.role, 'assistant');
    text += part.message.content;
    last = part;
  }
  assert.equal(last.done, true);
  assert.ok(['stop', 'length'].includes(last.done_reason));
  assert.ok(last.eval_count >= 1 && last.eval_count <= 10);
  assert.ok(last.prompt_eval_count > 5);
  assert.ok(last.total_duration > 0 && last.eval_duration > 0);
  const one = await ollama.chat({
    model: MODEL,
    messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello!' }],
    options: { num_predict: 10, temperature: 0 },
  });
  assert.equal(one.message.content, text, 'streamed and not give the same text');
});

test('generate: response, done_reason, context', async () => {
  const r = await ollama.generate({ model: MODEL, prompt: 'Once upon a time', options: { num_predict: 5 } });
  assert.equal(typeof r.response, 'string');
  assert.equal(r.done, true);
  assert.equal(r.done_reason, 'length');
  assert.equal(r.eval_count, 5);
  // `context` is the whole exchange; prompt_eval_count only what the prefix cache did not have
  // (the chat template's first tokens may be shared with an earlier test's prompt).
  assert.ok(r.prompt_eval_count >= 1 && r.context.length >= r.prompt_eval_count + answerTokens(r));
  const parts = [];
  for await (const p of await ollama.generate({ model: MODEL, prompt: 'Hi', stream: true, options: { num_predict: 3 } })) parts.push(p);
  assert.equal(parts.at(-1).done, true);
  assert.ok(parts.slice(0, -1).every((p) => !p.done));
});

test('format with a JSON schema: the content parses and validates', async () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 16 }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 2 } },
    required: ['name', 'age', 'tags'],
    additionalProperties: false,
  };
  for (const seed of [1, 2]) {
    const r = await ollama.chat({
      model: MODEL,
      messages: [{ role: 'user', content: 'Describe a person.' }],
      format: schema,
      options: { num_predict: 300, seed },
    });
    assert.equal(r.done_reason, 'stop', 'the grammar ends the object');
    const v = JSON.parse(r.message.content);
    assert.deepEqual(Object.keys(v).sort(), ['age', 'name', 'tags']);
    assert.equal(typeof v.name, 'string');
    assert.ok([...v.name].length <= 16, "maxLength counts code points");
    assert.ok(Number.isInteger(v.age));
    assert.ok(Array.isArray(v.tags) && v.tags.length <= 2 && v.tags.every((t) => typeof t === 'string'));
  }
  // format "json" has no length bound: random weights may still be inside a string when
  // num_predict ends. The grammar shows either way: an object starts, and a finished one parses.
  for (const seed of [1, 2, 3]) {
    const j = await ollama.generate({ model: MODEL, prompt: 'JSON please', format: 'json', options: { num_predict: 48, seed } });
    assert.ok(j.response.trimStart().startsWith('{'), `json mode starts an object: ${JSON.stringify(j.response)}`);
    if (j.done_reason === 'stop') assert.equal(typeof JSON.parse(j.response), 'object');
  }
});

test('tools and think are accepted; tool history with object arguments renders', async () => {
  const r = await ollama.chat({
    model: MODEL,
    think: true,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: 'Sunny', tool_name: 'get_weather' },
    ],
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
    options: { num_predict: 8 },
  });
  assert.equal(r.done, true);
  assert.ok(r.prompt_eval_count > 40, 'tools and history are in the prompt');
  for (const tc of r.message.tool_calls ?? []) assert.equal(typeof tc.function.arguments, 'object');
});

test('prefix cache: prompt_eval_count counts only the prompt tokens evaluated, as in Ollama', async () => {
  // A server of its own, so the first request is cold: its prompt_eval_count is the whole prompt.
  const s = await startServer([]);
  try {
    const client = new Ollama({ host: s.url });
    const w = ['amber', 'basil', 'cedar', 'dune', 'ember', 'fjord', 'grove', 'heath', 'inlet', 'juniper'];
    let x = 5;
    const system = `You are a careful assistant. ${Array.from({ length: 400 }, () => w[(x = (x * 1103515245 + 12345) % 2147483648) % w.length]).join(' ')}`;
    const options = { num_predict: 4, temperature: 0 };
    const cold = await client.generate({ model: MODEL, system, prompt: 'List the files.', options });
    assert.ok(cold.prompt_eval_count > 400, `a long prompt: ${cold.prompt_eval_count}`);
    assert.equal(cold.context.length, cold.prompt_eval_count + answerTokens(cold), 'cold: the whole prompt evaluated');
    // The same prompt again: the same exchange, all but its last prompt token from the cache.
    const again = await client.generate({ model: MODEL, system, prompt: 'List the files.', options });
    assert.deepEqual(again.context, cold.context);
    assert.equal(again.prompt_eval_count, 1);
    assert.equal(again.context.length - answerTokens(again), cold.prompt_eval_count, 'the same whole prompt');
    // A new question under the same system prompt (chat and generate): only the rest is evaluated.
    const other = await client.generate({ model: MODEL, system, prompt: 'Read README.md.', options });
    const whole = other.context.length - answerTokens(other);
    assert.ok(other.prompt_eval_count < whole - 400, `${other.prompt_eval_count} of ${whole} evaluated`);
    const chat = await client.chat({ model: MODEL, messages: [{ role: 'system', content: system }, { role: 'user', content: 'Count to five.' }], options });
    assert.ok(chat.prompt_eval_count >= 1 && chat.prompt_eval_count < cold.prompt_eval_count - 400, `chat evaluated ${chat.prompt_eval_count}`);
  } finally {
    await s.stop();
  }
});

test('list, show, ps, version', async () => {
  const tags = await ollama.list();
  assert.equal(tags.models.length, 1);
  const m = tags.models[0];
  assert.equal(m.name, `${MODEL}:latest`);
  assert.equal(m.details.format, 'gguf');
  assert.equal(m.details.family, 'qwen3');
  assert.match(m.digest, /^[0-9a-f]{64}$/);
  assert.ok(m.size > 0);
  const show = await ollama.show({ model: MODEL });
  assert.equal(show.model_info['general.architecture'], 'qwen3');
  assert.ok(show.model_info['general.parameter_count'] > 0);
  assert.match(show.template, /im_start/);
  assert.ok(show.capabilities.includes('completion'));
  const ps = await ollama.ps();
  assert.equal(ps.models[0].name, `${MODEL}:latest`);
  assert.ok(ps.models[0].context_length > 0);
  assert.match((await ollama.version()).version, /^\d+\.\d+\.\d+/);
});

test('embed and embeddings through the SDK', async () => {
  const e = await ollama.embed({ model: MODEL, input: ['one', 'two'] });
  assert.equal(e.embeddings.length, 2);
  assert.ok(e.embeddings[0].length > 0);
  const legacy = await ollama.embeddings({ model: MODEL, prompt: 'one' });
  assert.equal(legacy.embedding.length, e.embeddings[0].length);
});

test('an unknown model is answered by the served one (its 404 is for --strict-model-names)', async () => {
  const r = await ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }], options: { num_predict: 2 } });
  assert.equal(r.model, MODEL);
  assert.equal(r.done, true);
});
