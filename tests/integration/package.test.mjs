// The install (issue #22): the Debian package that cpack builds from this build tree, unpacked
// into a throw-away root with `dpkg -x` (no dpkg database, no root file system touched), whose
// binary runs its systemd user unit's ExecStart under a fresh HOME and serves a chat; and
// `cmake --install --prefix` writing the unit for the prefix it was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUPERFLUID, startServer } from '../lib/server.mjs';

const BUILD = process.env.SUPERFLUID_BUILD_DIR;
const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const version = (bin) => run(bin, ['--version']).trim();
const tmp = (name) => mkdtempSync(join(tmpdir(), `sf-package-${name}-`));

/** The unit's [Service] ExecStart= split into argv, and whether [Install] wants default.target. */
function readUnit(path) {
  const text = readFileSync(path, 'utf8');
  const exec = /^ExecStart=(.+)$/m.exec(text);
  assert.ok(exec, `no ExecStart in ${path}:\n${text}`);
  return { argv: exec[1].trim().split(/\s+/), wanted: /^WantedBy=default\.target$/m.test(text) };
}

test('the .deb: cpack builds it, dpkg -x unpacks it, its unit\'s ExecStart serves a chat', { timeout: 300000 }, async () => {
  assert.ok(BUILD && existsSync(join(BUILD, 'CPackConfig.cmake')), `no CPackConfig.cmake in ${BUILD}`);
  const out = tmp('deb');
  run('cpack', ['--config', join(BUILD, 'CPackConfig.cmake'), '-B', out]);
  const ver = /^superfluid (\S+) /.exec(version(SUPERFLUID))[1];
  const arch = run('dpkg', ['--print-architecture']).trim();
  const deb = join(out, `superfluid_${ver}_${arch}.deb`);
  assert.ok(existsSync(deb), `${deb} not built`);
  const fields = run('dpkg-deb', ['-f', deb, 'Package', 'Version', 'Depends']);
  assert.match(fields, /^Package: superfluid$/m);
  assert.match(fields, new RegExp(`^Version: ${ver.replace(/\./g, '\\.')}$`, 'm'));
  assert.match(fields, /libgrpc\+\+/, 'Depends from dpkg-shlibdeps');

  const root = tmp('root');
  run('dpkg', ['-x', deb, root]);
  const unit = readUnit(join(root, 'usr/share/systemd/user/superfluid.service'));
  assert.deepEqual(unit.argv, ['/usr/bin/superfluid', 'serve']);
  assert.ok(unit.wanted, 'enabled by `systemctl --user enable`: WantedBy=default.target');
  const bin = join(root, unit.argv[0]);
  assert.equal(version(bin), version(SUPERFLUID), 'the packaged binary is this build');

  // The unit's command, as systemd --user would run it (plus a free port): the default model,
  // offline the embedded test model, with its state under the user's XDG dirs.
  const home = tmp('home');
  const env = { PATH: process.env.PATH, HOME: home, HF_HUB_OFFLINE: '1' };
  const srv = await startServer(unit.argv.slice(2), { bin, modelPath: null, stateDir: null, env });
  try {
    const res = await fetch(`${srv.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'default', max_tokens: 8, messages: [{ role: 'user', content: 'Hello!' }] }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(typeof body.choices[0].message.content, 'string');
    assert.ok(body.usage.completion_tokens > 0);
    assert.ok(existsSync(join(home, '.local/state/superfluid/journal.db')), `journal not under HOME:\n${srv.log()}`);
  } finally {
    await srv.stop();
  }
});

test('cmake --install --prefix: the binary and a unit whose ExecStart is that prefix\'s binary', async () => {
  const prefix = tmp('prefix');
  run('cmake', ['--install', BUILD, '--prefix', prefix]);
  const unit = readUnit(join(prefix, 'share/systemd/user/superfluid.service'));
  assert.deepEqual(unit.argv, [join(prefix, 'bin/superfluid'), 'serve']);
  assert.equal(version(unit.argv[0]), version(SUPERFLUID));
  assert.ok(existsSync(join(prefix, 'share/doc/superfluid/README.md')));
});
