// OpenClaw (openclaw 2026.9.6 under Node 24 from npm; one embedded agent turn, `openclaw
// agent --local --message`) through `superfluid launch openclaw`, over the native Ollama API
// (/api/chat): a plain turn and a whole tool loop (exec), both on the scripted engine, offline
// (lib/agent_run.mjs).
//
// The plain turn is scripted: OpenClaw exits 1 ("incomplete turn detected ... payloads=0") when
// a turn's answer shows no text, which the random model gives now and then under OpenClaw's
// long prompt: on the unscaled model about one turn in two; on the embedded model (whose answers
// end, cli/serve_command.cpp) through the server launch starts, 1 of 4 runs (the other 3
// passed in 44-50 s). A random-model turn would test the model, not the server; the other
// agents' plain turns run on the server launch starts.
import { join } from 'node:path';
import { agentSuite, NODE24_BIN } from './lib/agent_run.mjs';

const turn = (prompt) => ['agent', '--local', '--message', prompt];

agentSuite({
  agent: 'openclaw',
  ua: /user-agent "undici"/, // Node's fetch, as OpenClaw sends it
  path: '/api/chat',
  plain: turn,
  scriptedPlain: {
    prompt: 'Greet me from the script.',
    ok: (out) => out.includes('Hello from the script.'),
    why: 'a turn with no visible text fails OpenClaw',
  },
  tool: turn,
  env: { PATH: `${NODE24_BIN}:${process.env.PATH}` },
  // Its tools run in its workspace, under the state directory launch gives it.
  workdir: (r, server) => join(server.stateDir, 'launch', 'openclaw', 'state', 'workspace'),
});
