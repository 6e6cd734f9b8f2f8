// The socket audit the agent tests rely on (lib/agent_run.mjs outboundConnects over an strace
// log) catches a connection attempt off loopback, from a child process too, and lets loopback
// and unix sockets pass; and says whether this run is in an isolated network namespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outboundConnects, NETNS } from './lib/agent_run.mjs';

test(`the connect() audit sees every address a process tree tried (network: ${NETNS})`, () => {
  const log = join(mkdtempSync(join(tmpdir(), 'sf-audit-')), 'connects.strace');
  // A child process tries TEST-NET-1 (RFC 5737: never routed) and [2001:db8::1], and loopback.
  const child = `const n=require('net');for(const [h,p] of [['192.0.2.1',53],['2001:db8::1',443],['127.0.0.1',9]])n.connect(p,h).on('error',()=>{});setTimeout(()=>{},300)`;
  const r = spawnSync('strace', ['-f', '-qq', '--seccomp-bpf', '-e', 'trace=connect', '-o', log,
    process.execPath, '-e', `require('child_process').spawnSync(process.execPath,['-e',${JSON.stringify(child)}])`]);
  assert.equal(r.status, 0, String(r.stderr));
  assert.deepEqual(outboundConnects(readFileSync(log, 'utf8')).sort(), ['inet 192.0.2.1:53', 'inet6 [2001:db8::1]:443']);
});
