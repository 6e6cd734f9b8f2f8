// GPU offload (issue #41) on a real Vulkan device: Mesa's lavapipe, which runs Vulkan on the
// CPU, so CI without a GPU drives the same backend code as a GPU would. ggml skips CPU-type
// Vulkan devices unless GGML_VK_VISIBLE_DEVICES names them: these servers get it, and serve's
// defaults do the rest (--gpu-layers auto: every layer of the tiny model fits).
// The core promises, on the device: streaming, a prefix-cache hit, a worker SIGKILL mid-stream,
// a parked and resumed sequence, speculation and a quantized KV cache, each text identical to
// the uninterrupted run on the same backend.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { model, runSuperfluid, startServer, until } from '../lib/server.mjs';

const onDevice = { ...process.env, GGML_VK_VISIBLE_DEVICES: '0' };
const version = await runSuperfluid(['--version'], onDevice);
const backends = /backends: (.*)/.exec(version.stdout)?.[1] ?? '';
// A build of the cpu flavor (SUPERFLUID_GPU=cpu, scripts/gpu-flavor.sh) has no Vulkan backend
// to test; every other build on Linux has, and then lavapipe must be there (scripts/setup.sh).
const skip = /\bVulkan\b/.test(backends) ? false : `this build has no Vulkan backend (${backends})`;

const workerPid = (server) => Number([...server.log().matchAll(/worker started, pid (\d+)/g)].at(-1)[1]);
const prompt = (i) => `Story number ${i}: tell it slowly, with many details about the harbour.`;

// A streamed greedy chat; returns its text (reasoning + content), finish reason and usage.
// onDelta(n): after the n-th text delta.
async function stream(server, body, onDelta) {
  const res = await fetch(`${server.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ temperature: 0, stream: true, stream_options: { include_usage: true }, ...body }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const dec = new TextDecoder();
  let buf = '';
  let text = '';
  let finish = null;
  let usage = null;
  let n = 0;
  for await (const chunk of res.body) {
    buf += dec.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n\n')) >= 0) {
      const data = buf.slice(0, nl).split('\n').find((l) => l.startsWith('data: '))?.slice(6);
      buf = buf.slice(nl + 2);
      if (!data || data === '[DONE]') continue;
      const j = JSON.parse(data);
      assert.equal(j.error, undefined, JSON.stringify(j.error));
      const c = j.choices?.[0];
      const d = (c?.delta?.reasoning_content ?? '') + (c?.delta?.content ?? '');
      if (d) {
        text += d;
        onDelta?.(++n);
      }
      if (c?.finish_reason) finish = c.finish_reason;
      if (j.usage) usage = j.usage;
    }
  }
  return { text, finish, usage };
}

// Seeded sampling (temperature 1): the tiny model's greedy chat answer is newlines only, which
// the chat parser holds back; a seeded stream is varied text, and as reproducible.
const body = (i, max_tokens = 64) => ({
  messages: [{ role: 'user', content: prompt(i) }],
  max_tokens,
  ignore_eos: true,
  temperature: 1,
  seed: 100 + i,
});

test('--version names the Vulkan backend and the lavapipe device', { skip }, () => {
  assert.equal(version.code, 0, version.stderr);
  assert.match(backends, /^(?=.*\bCPU\b).*\bVulkan\b.*; devices: Vulkan0 \(llvmpipe/);
  // Without the variable ggml passes over a CPU-type device: serve would stay on the CPU.
  return runSuperfluid(['--version']).then((plain) => assert.match(plain.stdout, /devices: none beside the CPU/));
});

let dev; // serve on defaults, on the device
const reference = [];
before(async () => {
  if (skip) return;
  dev = await startServer([], { env: onDevice });
  for (let i = 0; i < 3; i++) reference.push(await stream(dev, body(i)));
  reference.push(await stream(dev, body(3, 400))); // long enough to be parked mid-way
});
after(() => dev?.stop());

test('serve on defaults offloads every layer to the device, says so, and streams', { skip }, async () => {
  assert.match(dev.log(), /offloaded (\d+)\/\1 layers to Vulkan0 \(llvmpipe.*\(auto: fitted/);
  const ps = await (await fetch(`${dev.url}/api/ps`)).json();
  const m = ps.models[0];
  assert.match(m.gpu.devices, /^Vulkan0 \(llvmpipe/);
  assert.ok(m.gpu.layers > 0 && m.gpu.layers === m.gpu.of, JSON.stringify(m.gpu));
  assert.equal(m.size_vram, m.size, 'every layer: the whole file counted on the device');
  for (const r of reference.slice(0, 3)) {
    assert.equal(r.finish, 'length');
    assert.equal(r.usage.completion_tokens, 64);
    assert.ok(r.text.length > 0);
  }
  // On one backend the same seeded request gives the same text again.
  assert.equal((await stream(dev, body(0))).text, reference[0].text);
});

test('a prefix-cache hit on the device answers as the full prefill did', { skip }, async () => {
  const long = { ...body(7, 24), messages: [{ role: 'user', content: `${prompt(7)} `.repeat(40) }] };
  const first = await stream(dev, long);
  const second = await stream(dev, long);
  assert.ok(second.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(second.usage));
  assert.equal(second.text, first.text);
});

test('a worker SIGKILL mid-stream on the device: the stream continues, text identical', { skip }, async () => {
  // The hot standby (on by default) takes over, or a new worker starts: either way, one.
  const replaced = (m) => m.worker_starts_total + m.worker_standby_promotions_total;
  const before = replaced(await dev.metrics());
  let killed = false;
  const crashed = await stream(dev, body(3, 400), (n) => {
    if (n === 20 && !killed) {
      killed = true;
      process.kill(workerPid(dev), 'SIGKILL');
    }
  });
  assert.ok(killed);
  assert.equal(crashed.text, reference[3].text);
  assert.ok(await until(async () => replaced(await dev.metrics()) > before), 'a new worker served the rest');
});

// A greedy completion of the tiny model repeats itself, which is what ngram drafts from.
const greedy = { prompt: 'Story number 0', max_tokens: 200, temperature: 0, ignore_eos: true };
// A 503 (a worker still loading: on lavapipe a new one spends ~25 s creating pipelines, and the
// test before this one killed a worker) is retried as the OpenAI SDK does, for up to 90 s.
async function complete(server, extra = {}) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const r = await fetch(`${server.baseURL}/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...greedy, ...extra }),
    });
    if (r.status === 503 && Date.now() < deadline) {
      await r.text();
      await new Promise((done) => setTimeout(done, 1000 * Math.min(5, Number(r.headers.get('retry-after')) || 1)));
      continue;
    }
    assert.equal(r.status, 200, await r.clone().text());
    return (await r.json()).choices[0].text;
  }
}

test('park and resume, and speculation, on the device: texts identical', { skip }, async () => {
  const plain = await complete(dev);
  // One sequence (the flag's reason): a batch stream holds it, so the interactive request
  // must park it; ngram speculation verifies its drafts in batches on the device.
  const one = await startServer(['--parallel', '1', '--spec-type', 'ngram'], { env: onDevice });
  try {
    assert.equal(await complete(one), plain, 'speculated: the same greedy text');
    const m0 = await one.metrics();
    assert.ok(m0.spec_accepted_tokens_total > 0, JSON.stringify(m0));
    // The chat comes once the batch stream has 20 tokens (the worker's count: the chat parser
    // may hold text deltas back), well before its 400.
    const generated = (await one.metrics()).generation_tokens_total;
    const batch = stream(one, { ...body(3, 400), priority: 'batch' });
    assert.ok(await until(async () => (await one.metrics()).generation_tokens_total >= generated + 20, 60000, 20));
    const chat = await stream(one, { ...body(0, 16), priority: 'interactive' });
    const parked = await batch;
    assert.equal(chat.usage.completion_tokens, 16);
    const m = await one.metrics();
    assert.ok(m.num_preemptions_total >= 1, `the batch sequence was parked for the chat:\n${one.log().slice(-3000)}`);
    assert.equal(parked.text, reference[3].text, 'parked and resumed: the same text');
  } finally {
    await one.stop();
  }
});

test('a q8_0 KV cache on the device: 34/64 of f16\'s bytes per token, and it answers', { skip }, async () => {
  // The bench preset: the tiny model's 16-value heads are no multiple of q8_0's 32-value block.
  const q8 = await startServer(['--cache-type-k', 'q8_0', '--cache-type-v', 'q8_0'], { env: onDevice, modelPath: model({ preset: 'bench' }) });
  try {
    const info = (await (await fetch(`${q8.url}/api/show`, { method: 'POST', body: '{"model":"m"}' })).json()).model_info;
    const f16 = info['qwen3.block_count'] * info['qwen3.attention.head_count_kv'] * (info['qwen3.attention.key_length'] + info['qwen3.attention.value_length']) * 2;
    assert.equal((await q8.metrics()).kv_cache_bytes_per_token * 64, f16 * 34);
    const r = await stream(q8, body(0, 16));
    assert.equal(r.usage.completion_tokens, 16);
    assert.match(q8.log(), /offloaded (\d+)\/\1 layers to Vulkan0/);
  } finally {
    await q8.stop();
  }
});
