// OpenClaw (openclaw 2026.9.6 under Node 24 from npm; one embedded agent turn, `openclaw
// agent --local --message`) through `superfluid launch openclaw`, over the native Ollama API
// (/api/chat): a plain turn on the server launch starts itself (the offline default model) and a
// whole tool loop (exec) on the scripted engine, offline (lib/agent_run.mjs).
import { join } from 'node:path';
import { agentSuite, NODE24_BIN } from './lib/agent_run.mjs';

const turn = (prompt) => ['agent', '--local', '--message', prompt];

agentSuite({
  agent: 'openclaw',
  ua: /user-agent "undici"/, // Node's fetch, as OpenClaw sends it
  path: '/api/chat',
  plain: turn,
  // OpenClaw fails a turn whose answer shows no text ("incomplete turn detected ...
  // payloads=0"): the random model's answer is empty when its first token is its end of
  // generation, about one turn in eight under OpenClaw's prompt (1 of 8 runs, checked in the
  // journal: 0 tokens, finish "stop"). Such a turn, and only such a turn, is run again.
  emptyAnswerRetries: 2,
  tool: turn,
  env: { PATH: `${NODE24_BIN}:${process.env.PATH}` },
  // Its tools run in its workspace, under the state directory launch gives it.
  workdir: (r, server) => join(server.stateDir, 'launch', 'openclaw', 'state', 'workspace'),
});
