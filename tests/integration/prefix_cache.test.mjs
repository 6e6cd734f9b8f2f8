// Prefix cache on the transformer test model (qwen3); the cases are in
// tests/lib/prefix_cache_cases.mjs (one file per architecture keeps each under CTest's timeout).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer } from '../lib/server.mjs';
import { prefixCacheCases, chat, words } from '../lib/prefix_cache_cases.mjs';

prefixCacheCases('qwen3');

test('a Claude Code billing header line does not defeat the prefix cache', async () => {
  const s = await startServer(['--cache-dir', 'off']);
  try {
    const sys = (cch) => `x-anthropic-billing-header: cc_version=2.1.197; cc_entrypoint=cli; cch=${cch};\nYou are Claude Code. ${words(3, 300)}`;
    const a = await chat(s, [{ role: 'system', content: sys('0a1b2') }, { role: 'user', content: 'List the files.' }]);
    const b = await chat(s, [{ role: 'system', content: sys('9f8e7') }, { role: 'user', content: 'Read README.md.' }]);
    assert.equal(a.cached, 0);
    assert.ok(b.cached > 300, `shared past the header: ${b.cached}`);
  } finally {
    await s.stop();
  }
});
