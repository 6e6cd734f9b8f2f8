// OpenClaw (openclaw 2026.9.6 under Node 24 from npm; one embedded agent turn, `openclaw
// agent --local --message`) through `superfluid launch openclaw`, over the native Ollama API
// (/api/chat): a plain turn and a whole tool loop (exec), both on the scripted engine, offline
// (lib/agent_run.mjs).
//
// The plain turn is scripted too: OpenClaw exits 1 ("Agent couldn't generate a response",
// "incomplete turn detected ... payloads=0") when a turn's answer has no visible text, which
// the tiny random model gives in about one plain turn of two under OpenClaw's long prompt
// (measured: 1 failure in 2 runs here, 1 in CI), so a random-model turn tests the model, not
// the server. The other agents keep their plain turn on the random model.
import { join } from 'node:path';
import { agentSuite, NODE24_BIN } from './lib/agent_run.mjs';

const turn = (prompt) => ['agent', '--local', '--message', prompt];

agentSuite({
  agent: 'openclaw',
  ua: /user-agent "undici"/, // Node's fetch, as OpenClaw sends it
  path: '/api/chat',
  plain: turn,
  plainPrompt: 'Greet me from the script.',
  plainModel: 'the scripted engine',
  plainOk: (out) => out.includes('Hello from the script.'),
  tool: turn,
  env: { PATH: `${NODE24_BIN}:${process.env.PATH}` },
  // Its tools run in its workspace, under the state directory launch gives it.
  workdir: (r, server) => join(server.stateDir, 'launch', 'openclaw', 'state', 'workspace'),
});
