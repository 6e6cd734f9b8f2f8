// OpenCode (opencode-ai 1.18.33, `opencode run`) through `superfluid launch opencode`, over OpenAI
// chat completions: a plain turn on the server launch starts (offline default model) and a whole
// tool loop (bash) on the scripted engine, offline (lib/agent_run.mjs).
import { agentSuite } from './lib/agent_run.mjs';

const run = (prompt) => ['run', prompt];

agentSuite({
  agent: 'opencode',
  ua: /user-agent "opencode\//,
  path: '/v1/chat/completions',
  plain: run,
  tool: run,
});
