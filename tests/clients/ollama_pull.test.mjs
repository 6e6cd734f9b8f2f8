// The official `ollama` npm client against Superfluid's model store endpoints (issue #8):
// pull (streamed progress) from a stand-in Hugging Face hub, list, delete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { model, startServer } from '../lib/server.mjs';
import { startHub } from '../lib/hub.mjs';

test('ollama client: pull streams progress, list shows the model, delete removes it', async () => {
  const hub = await startHub();
  const bytes = readFileSync(model({ seed: 2 }));
  hub.addRepo('test/Client-GGUF', { 'c-Q8_0.gguf': bytes, 'c-Q4_K_M.gguf': readFileSync(model()) });
  process.env.HF_ENDPOINT = hub.url;
  process.env.HF_HOME = mkdtempSync(join(tmpdir(), 'sf-hf-'));
  const server = await startServer();
  try {
    const ollama = new Ollama({ host: server.url });
    const parts = [];
    for await (const part of await ollama.pull({ model: 'test/Client-GGUF:q8_0', stream: true })) parts.push(part);
    assert.equal(parts[0].status, 'pulling manifest');
    const last = parts.filter((p) => p.digest).at(-1);
    assert.equal(last.digest, `sha256:${hub.sha256(bytes)}`);
    assert.equal(last.completed, bytes.length);
    assert.equal(last.total, bytes.length);
    assert.equal(parts.at(-1).status, 'success');

    const { models } = await ollama.list();
    assert.ok(models.some((m) => m.name === 'test/Client-GGUF:Q8_0' && m.size === bytes.length), JSON.stringify(models));

    const once = await ollama.pull({ model: 'test/Client-GGUF:Q8_0' }); // stream: false
    assert.equal(once.status, 'success');
    await assert.rejects(ollama.pull({ model: 'test/Client-GGUF:Q2_K' }), /available quantizations: Q4_K_M, Q8_0/);

    await ollama.delete({ model: 'test/Client-GGUF:Q8_0' });
    assert.ok(!(await ollama.list()).models.some((m) => m.name === 'test/Client-GGUF:Q8_0'));
    await assert.rejects(ollama.delete({ model: 'test/Client-GGUF:Q8_0' }), /not found/);
  } finally {
    await server.stop();
    await hub.close();
  }
});
