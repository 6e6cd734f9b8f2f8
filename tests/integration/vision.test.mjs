// Issue #42, the model side: serve --mmproj FILE loads a vision projector beside the model
// (mkmodel --mmproj writes a tiny one); /api/show's capabilities gain "vision" and /v1/models
// says the model reads images; a projector made for another model stops serve with mtmd's
// reason. An image in a request is still a 400 in each API's shape, whose message says why in
// terms of the model: a text-only model has no projector (--mmproj), a vision model's images
// are not yet carried to it by this server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, model, projector, runSuperfluid, freePort } from '../lib/server.mjs';

const MODEL = 'tiny-qwen3-1';
let vision;
let textOnly;
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC';

before(async () => {
  [vision, textOnly] = await Promise.all([startServer(['--standby', 'off', '--mmproj', projector()]), startServer(['--standby', 'off'])]);
});
after(async () => {
  await Promise.all([vision?.stop(), textOnly?.stop()]);
});

const post = (server, path, body, headers = {}) =>
  fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

const imageChat = { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }] };

test('/api/show lists vision and /v1/models reads images only with a projector', async () => {
  const show = async (s) => (await (await post(s, '/api/show', { model: MODEL })).json()).capabilities;
  assert.ok((await show(vision)).includes('vision'), JSON.stringify(await show(vision)));
  assert.ok(!(await show(textOnly)).includes('vision'));
  const models = async (s) => (await (await fetch(`${s.url}/v1/models`)).json()).data[0].architecture;
  assert.deepEqual((await models(vision)).input_modalities, ['text', 'image']);
  assert.deepEqual((await models(textOnly)).input_modalities, ['text']);
  assert.match(vision.log(), /projector .*: vision yes, audio no/);
});

test('a text-only model refuses an image in each API with a 400 naming --mmproj', async () => {
  const r = await post(textOnly, '/v1/chat/completions', imageChat);
  assert.equal(r.status, 400);
  const e = (await r.json()).error;
  assert.equal(e.param, 'messages[0].content');
  assert.equal(e.code, 'unsupported_content');
  assert.match(e.message, /has no vision support .*--mmproj FILE/);

  const a = await post(textOnly, '/v1/messages', { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }] }] }, { 'anthropic-version': '2023-06-01' });
  assert.equal(a.status, 400);
  const ae = await a.json();
  assert.equal(ae.type, 'error');
  assert.equal(ae.error.type, 'invalid_request_error');
  assert.match(ae.error.message, /no vision support/);

  const o = await post(textOnly, '/api/chat', { model: MODEL, stream: false, messages: [{ role: 'user', content: 'what is this?', images: [PNG] }] });
  assert.equal(o.status, 400);
  assert.match((await o.json()).error, /images is not supported: model .* has no vision support/);

  const rs = await post(textOnly, '/v1/responses', { model: MODEL, input: [{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${PNG}` }] }] });
  assert.equal(rs.status, 400);
  assert.match((await rs.json()).error.message, /'input_image' is not supported: model .* has no vision support/);
});

test('a vision model still refuses an image, saying the server does not pass it yet', async () => {
  const r = await post(vision, '/v1/chat/completions', imageChat);
  assert.equal(r.status, 400);
  const e = (await r.json()).error;
  assert.equal(e.code, 'unsupported_content');
  assert.match(e.message, /reads images through its projector, but this server does not pass them to it yet/);
  // Text requests are answered as before.
  const ok = await post(vision, '/v1/chat/completions', { model: MODEL, max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(ok.status, 200, await ok.clone().text());
});

test('corrupt, non-image and oversize image data is a 400 naming the image, in each API', async () => {
  const withUrl = (url) => ({ ...imageChat, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });
  const cases = [
    ['data:image/png;base64,iVBOR!!!', /messages\[0\]\.content\[0\]\.image_url\.url: its data is not valid base64/, 'invalid_image'],
    [`data:image/png;base64,${Buffer.from('plain text, no image').toString('base64')}`, /not a PNG, JPEG, GIF or BMP image/, 'invalid_image'],
    [`data:image/png;base64,${Buffer.alloc(21 << 20, 0x89).toString('base64')}`, /larger than 20 MiB/, 'image_too_large'],
  ];
  for (const [url, message, code] of cases) {
    const r = await post(vision, '/v1/chat/completions', withUrl(url));
    assert.equal(r.status, 400);
    const e = (await r.json()).error;
    assert.equal(e.code, code);
    assert.match(e.message, message);
  }
  const a = await post(vision, '/v1/messages', { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'bm90IGFuIGltYWdl' } }] }] }, { 'anthropic-version': '2023-06-01' });
  assert.equal(a.status, 400);
  assert.match((await a.json()).error.message, /messages\.0\.content\.0\.source\.data: the data is not a PNG/);
  const o = await post(vision, '/api/generate', { model: MODEL, prompt: 'x', stream: false, images: ['bm90IGFuIGltYWdl'] });
  assert.equal(o.status, 400);
  assert.match((await o.json()).error, /images\[0\]: the data is not a PNG/);
});

test('a projector made for another model stops serve with the reason', async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'sf-vision-'));
  const wide = projector({ preset: 'bench' }); // embedding 256; the tiny model's is 64
  const r = await runSuperfluid(['serve', model(), '--port', String(await freePort()), '--state-dir', stateDir, '--standby', 'off', '--mmproj', wide]);
  assert.equal(r.code, 1, 'serve stops: the worker cannot start');
  assert.match(r.stderr + r.stdout, /--mmproj .*mtmd cannot load it for this model/);
  const missing = await runSuperfluid(['serve', model(), '--port', String(await freePort()), '--state-dir', stateDir, '--standby', 'off', '--mmproj', join(stateDir, 'none.gguf')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr + missing.stdout, /projector file not found/);
});
