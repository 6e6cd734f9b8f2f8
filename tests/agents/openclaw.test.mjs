// OpenClaw (openclaw 2026.9.6 under Node 24 from npm; one embedded agent turn, `openclaw
// agent --local --message`) through `superfluid launch openclaw`, over the native Ollama API
// (/api/chat): a plain turn through the server launch starts itself (no flags, the offline
// default model) and a whole tool loop (exec) on the scripted engine, offline
// (lib/agent_run.mjs).
//
// OpenClaw exits 1 ("incomplete turn detected ... payloads=0") on a turn whose answer shows no
// text. The default model never ends an answer at its first token (mkmodel --nonempty-answers,
// cli/serve_command.cpp): with the end-of-turn scaling alone, 3 of 15 of OpenClaw's turns began
// with it, and its one retry (which Ollama's eval_count, counting that token, allows) began
// with it again in 1 of those 3.
import { join } from 'node:path';
import { agentSuite, NODE24_BIN } from './lib/agent_run.mjs';

const turn = (prompt) => ['agent', '--local', '--message', prompt];

agentSuite({
  agent: 'openclaw',
  ua: /user-agent "undici"/, // Node's fetch, as OpenClaw sends it
  path: '/api/chat',
  plain: turn,
  tool: turn,
  env: { PATH: `${NODE24_BIN}:${process.env.PATH}` },
  // Its tools run in its workspace, under the state directory launch gives it.
  workdir: (r, server) => join(server.stateDir, 'launch', 'openclaw', 'state', 'workspace'),
});
