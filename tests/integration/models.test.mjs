// Several models, one server (issue #40): `superfluid serve A B C` with three tiny models of
// different mkmodel seeds. Each name is answered by its model (its id in the answer, the text
// that model gives when served alone, different from the others'); a model other than the
// default loads on first use and unloads after --keep-alive or a request's keep_alive: 0; with
// --max-models 2 a request for the third model waits until a resident one is idle while the two
// others stream, and is then served; a SIGKILLed worker of one model leaves the other model's
// stream complete and identical, and its own stream resumes on its own model; a head SIGKILLed
// with streams of two models running is restarted on the same state directory and finishes
// each session on its own model.
// Real `superfluid serve` processes, raw HTTP.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { basename } from 'node:path';
import { startServer, model, until } from '../lib/server.mjs';
import { chatStream } from '../lib/sse.mjs';
import { postJson, readNdjson } from '../lib/ndjson.mjs';

const paths = [1, 2, 3].map((seed) => model({ seed }));
const ids = paths.map((p) => basename(p, '.gguf'));
const [A, B, C] = ids;

const prompt = (i) => [{ role: 'user', content: `Tell story ${i} about a lighthouse.` }];
// Seeded sampling, as deterministic as greedy (the counter-based sampler): the greedy answers of
// these random-weight models are newlines alone for most seeds (1, 3, 4, 5, 6, 8 to 13 tried),
// so they would not tell the models apart.
const sampled = (id, i, max_tokens) => ({ model: id, messages: prompt(i), max_tokens, ignore_eos: true, temperature: 0.9, seed: 11 + i });

async function complete(server, body) {
  const res = await postJson(server.url, '/v1/chat/completions', body);
  assert.equal(res.status, 200, await res.clone().text());
  const j = await res.json();
  const m = j.choices[0].message;
  return { model: j.model, text: (m.reasoning_content ?? '') + (m.content ?? ''), substituted: res.headers.get('x-superfluid-model-substituted') };
}

// A streamed chat to its end: { text, model, done, error, at }; `onToken(text)` after each piece.
async function stream(server, body, onToken = () => {}) {
  const r = await chatStream(server, body, onToken);
  assert.equal(r.status, 200, r.error);
  return r;
}

const ps = async (server) => (await (await fetch(`${server.url}/api/ps`)).json()).models;
const resident = async (server) => (await ps(server)).filter((m) => m.state !== 'waiting').map((m) => m.name.replace(/:latest$/, ''));

// Each model's answers served alone: the references (short, and the long streams).
const SHORT = 24;
const LONG = 600;
const refs = {};
before(async () => {
  for (const [i, p] of paths.entries()) {
    const server = await startServer([], { modelPath: p });
    try {
      refs[ids[i]] = {
        short: (await complete(server, sampled(ids[i], 0, SHORT))).text,
        long: (await complete(server, sampled(ids[i], 1, LONG))).text,
      };
    } finally {
      await server.stop();
    }
  }
});

let server;
after(async () => server?.stop());

test('serve A B C: each name is answered by its model (its id, its own text); the lists name all three; unknown names go to the default', async () => {
  server = await startServer([paths[1], paths[2]], { modelPath: paths[0] });
  const texts = new Set(ids.map((id) => refs[id].short));
  assert.equal(texts.size, 3, `the three models answer differently: ${JSON.stringify(refs)}`);
  // Only the default model is loaded at start.
  assert.deepEqual(await resident(server), [A]);

  for (const id of ids) {
    const r = await complete(server, sampled(id, 0, SHORT));
    assert.equal(r.model, id);
    assert.equal(r.text, refs[id].short, `${id} answers as it does alone`);
  }
  // Other names of a model: its file name, its path; Ollama's name:latest.
  assert.equal((await complete(server, sampled(basename(paths[2]), 0, SHORT))).model, C);
  assert.equal((await complete(server, sampled(paths[1], 0, SHORT))).text, refs[B].short);
  const ollama = async (name) => (await (await postJson(server.url, '/api/chat', { model: name, messages: prompt(0), stream: false, options: { num_predict: SHORT, temperature: 0.9, seed: 11 } })).json());
  const [oc, ocl, oa] = [await ollama(C), await ollama(`${C}:latest`), await ollama(A)];
  assert.deepEqual([oc.model, ocl.model], [C, `${C}:latest`]);
  assert.equal(ocl.message.content, oc.message.content, `${C}:latest is answered by ${C}`);
  assert.notEqual(ocl.message.content, oa.message.content);
  // An unknown name: the default model, marked as substituted.
  const u = await complete(server, sampled('gpt-4o-mini', 0, SHORT));
  assert.deepEqual([u.model, u.text, u.substituted], [A, refs[A].short, 'gpt-4o-mini']);

  const listed = (await (await fetch(`${server.url}/v1/models`)).json()).data.map((m) => m.id);
  assert.deepEqual(listed, ids);
  const tags = (await (await fetch(`${server.url}/api/tags`)).json()).models.map((m) => m.name);
  assert.deepEqual(tags.slice(0, 3), ids.map((id) => `${id}:latest`));
  // B and C were loaded by their first requests and stay (default --keep-alive 5m).
  assert.deepEqual((await resident(server)).sort(), [...ids].sort());
  const expiring = (await ps(server)).filter((m) => m.name !== `${A}:latest`);
  for (const m of expiring) assert.ok(Date.parse(m.expires_at) - Date.now() > 200 * 1000, `${m.name} expires in ~5 min: ${m.expires_at}`);
});

test('keep_alive: 0 on an Ollama request unloads its model once idle; another model stays for the server\'s --keep-alive; Ollama\'s load and unload requests', async () => {
  // Reuses the server above (B and C resident, default --keep-alive 5m).
  const res = await postJson(server.url, '/api/generate', { model: C, prompt: 'Hello', stream: true, keep_alive: 0, options: { num_predict: 8, temperature: 0 } });
  const lines = await readNdjson(res);
  assert.equal(lines.at(-1).done, true);
  assert.ok(await until(async () => !(await resident(server)).includes(C), 10000), 'C unloaded after its keep_alive: 0 request');
  assert.ok((await resident(server)).includes(B), 'B stays resident');
  // C loads again on its next request, with the same answer.
  assert.equal((await complete(server, sampled(C, 0, SHORT))).text, refs[C].short);
  assert.ok((await resident(server)).includes(C));
  // Ollama's load and unload requests (no prompt): keep_alive 0 unloads, none loads.
  const unload = await (await postJson(server.url, '/api/generate', { model: C, keep_alive: 0 })).json();
  assert.equal(unload.done_reason, 'unload');
  assert.ok(await until(async () => !(await resident(server)).includes(C), 10000), 'C unloaded by an unload request');
  const load = await (await postJson(server.url, '/api/chat', { model: `${C}:latest`, messages: [] })).json();
  assert.equal(load.done_reason, 'load');
  assert.ok((await resident(server)).includes(C), 'C loaded by a load request, before its answer');
  await server.stop();
  server = null;
});

test('--keep-alive 1s unloads an idle non-default model; the default stays', async () => {
  // --keep-alive: the flag under test (short, so the test sees the unload).
  server = await startServer([paths[1], '--keep-alive', '1s'], { modelPath: paths[0] });
  assert.equal((await complete(server, sampled(B, 0, SHORT))).text, refs[B].short);
  const after = await ps(server);
  assert.deepEqual(after.map((m) => m.name).sort(), [`${A}:latest`, `${B}:latest`].sort());
  assert.ok(await until(async () => !(await resident(server)).includes(B), 15000), 'B unloaded after 1 s idle');
  assert.deepEqual(await resident(server), [A]);
  await server.stop();
  server = null;
});

test('--max-models 2: a request for the third model waits while the two others stream, is served once one is idle; the streams complete identical', async () => {
  // --max-models: the flag under test.
  server = await startServer([paths[1], paths[2], '--max-models', '2'], { modelPath: paths[0] });
  let aTokens = 0;
  let bTokens = 0;
  const sa = stream(server, sampled(A, 1, LONG), () => aTokens++);
  const sb = stream(server, sampled(B, 1, LONG), () => bTokens++);
  assert.ok(await until(() => aTokens > 0 && bTokens > 0, 30000), 'both streams started');
  let cAt = 0;
  const rc = complete(server, sampled(C, 0, SHORT)).then((r) => ({ ...r, at: (cAt = Date.now()) }));
  // C waits for room (shown in /api/ps) while A and B are both still streaming.
  const seen = await until(async () => (await ps(server)).some((m) => m.name === `${C}:latest` && m.state === 'waiting'), 20000, 20);
  assert.ok(seen, 'C is listed as waiting');
  assert.equal(cAt, 0, 'C was not answered while A and B stream');
  const [a, b, c] = await Promise.all([sa, sb, rc]);
  assert.deepEqual([a.done, a.error, a.model, a.text], [true, null, A, refs[A].long]);
  assert.deepEqual([b.done, b.error, b.model, b.text], [true, null, B, refs[B].long]);
  assert.deepEqual([c.model, c.text], [C, refs[C].short]);
  assert.ok(c.at >= Math.min(a.at, b.at), 'C was answered after a stream had finished');
  const now = await resident(server);
  assert.equal(now.length, 2);
  assert.ok(now.includes(C));
  assert.match(server.log(), /unloading model '(\S+)' \(room for '/);
  await server.stop();
  server = null;
});

test('a SIGKILLed worker of one model leaves the other model\'s concurrent stream complete and identical; its own stream resumes on its model', async () => {
  server = await startServer([paths[1]], { modelPath: paths[0] });
  let bText = '';
  let aTokens = 0;
  const sa = stream(server, sampled(A, 1, LONG), () => aTokens++);
  const sb = stream(server, sampled(B, 1, LONG), (t) => (bText = t));
  assert.ok(await until(() => aTokens > 0 && bText.length > 0, 30000), 'both streams started');
  // B's worker: the head's child whose command line loads B's file (no standby: B is not the default).
  const children = execFileSync('pgrep', ['-P', String(server.proc.pid)]).toString().trim().split('\n').map(Number);
  const cmd = (pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const bPid = children.find((pid) => {
    try {
      const c = cmd(pid);
      return c[c.indexOf('--model') + 1] === paths[1] && !c.includes('--standby-fd');
    } catch {
      return false;
    }
  });
  assert.ok(bPid, 'B has its own worker process');
  const cut = bText.length;
  process.kill(bPid, 'SIGKILL');
  const [a, b] = await Promise.all([sa, sb]);
  assert.deepEqual([a.done, a.error, a.text], [true, null, refs[A].long], 'A is untouched');
  assert.ok(cut < refs[B].long.length, 'B was killed mid-stream');
  assert.deepEqual([b.done, b.error, b.model, b.text], [true, null, B, refs[B].long], 'B resumed on B');
  await server.stop();
  server = null;
});

test('a head SIGKILLed with streams of two models: restarted on the same state dir, each session finishes on its own model', async () => {
  server = await startServer([paths[1]], { modelPath: paths[0] });
  const stateDir = server.stateDir;
  const killed = new Promise((r) => server.proc.once('exit', r));
  // B first (its load), then A; the head dies once both have sent text.
  let bStarted = false;
  const sb = chatStream(server, sampled(B, 1, LONG), () => (bStarted = true));
  assert.ok(await until(() => bStarted, 60000), 'B streams');
  const sa = chatStream(server, sampled(A, 1, LONG), () => server.proc.exitCode === null && server.proc.kill('SIGKILL'));
  const [a, b] = await Promise.all([sa, sb]);
  await killed;
  assert.deepEqual([a.done, b.done], [false, false], 'both streams were cut by the kill');
  assert.ok(a.session && b.session);

  server = await startServer([paths[1]], { modelPath: paths[0], stateDir });
  assert.match(server.log(), /resuming 2 unfinished sessions from the journal/);
  for (const [r, id] of [[a, A], [b, B]]) {
    const whole = await chatStream(server, null, () => {}, `/v1/sessions/${r.session}/events`);
    assert.equal(whole.status, 200);
    assert.deepEqual([whole.done, whole.error, whole.text], [true, null, refs[id].long], `${id}'s session finished on ${id}`);
  }
  await server.stop();
  server = null;
});
