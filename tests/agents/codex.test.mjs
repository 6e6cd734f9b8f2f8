// Codex (@openai/codex 0.169.0, `codex exec`) through `superfluid launch codex` over the
// Responses API: a plain turn on the tiny random model, and a whole tool loop on the scripted
// engine (exec_command runs in the working directory, its output goes back, the scripted
// answer is printed), with the launch's interactive class on every request and no connection
// off loopback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgentServer, runAgent, requestLines, installed, TOOL_PROMPT, FINAL_ANSWER, NETNS } from './lib/agent_run.mjs';

const skip = !installed('codex') && 'codex not installed: run scripts/agents.sh';
const UA = /user-agent "codex_exec\//;
// One-shot and offline: no git repository needed, commands run without a sandbox (no
// bubblewrap here) and without asking.
const EXEC = ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
let server;

before(async () => {
  if (!skip) server = await startAgentServer();
});
after(async () => server && (await server.stop()));

test(`codex exec: a plain turn on the tiny model (network: ${NETNS})`, { skip }, async () => {
  const r = await runAgent(server, 'codex', [...EXEC, 'Say hi.']);
  assert.equal(r.code, 0, `${r.out}\nserver:\n${server.log().slice(-3000)}`);
  assert.match(r.out, /^codex$/m, r.out); // the answer's header in codex exec's transcript
  assert.ok(requestLines(server, UA).every((l) => / class interactive,/.test(l)), server.log());
  assert.ok(requestLines(server, UA).length >= 1, server.log());
  assert.deepEqual(r.outbound, [], `connections off loopback:\n${r.outbound.join('\n')}`);
});

test(`codex exec: a whole tool loop on the scripted engine (network: ${NETNS})`, { skip }, async () => {
  const before = requestLines(server, UA).length;
  const r = await runAgent(server, 'codex', [...EXEC, TOOL_PROMPT]);
  assert.equal(r.code, 0, `${r.out}\nserver:\n${server.log().slice(-3000)}`);
  assert.ok(existsSync(join(r.cwd, 'made_by_tool.txt')), `the tool did not run:\n${r.out}`);
  assert.equal(readFileSync(join(r.cwd, 'made_by_tool.txt'), 'utf8'), 'made\n');
  assert.ok(r.out.includes(FINAL_ANSWER), r.out);
  const lines = requestLines(server, UA).slice(before);
  assert.ok(lines.length >= 2, `the call and the answer after its result:\n${lines.join('\n')}`);
  for (const l of lines) assert.match(l, /POST \/v1\/responses: class interactive,/);
  assert.deepEqual(r.outbound, [], `connections off loopback:\n${r.outbound.join('\n')}`);
});
