// pi (@mariozechner/pi-coding-agent 0.73.1, print mode `pi -p`) through `superfluid launch pi`,
// over OpenAI chat completions: a plain turn on the server launch starts (offline default model)
// and a whole tool loop (bash) on the scripted engine, offline (lib/agent_run.mjs).
import { agentSuite } from './lib/agent_run.mjs';

const print = (prompt) => ['-p', prompt];

agentSuite({
  agent: 'pi',
  ua: /user-agent "OpenAI\/JS /, // pi talks through the openai SDK
  path: '/v1/chat/completions',
  plain: print,
  tool: print,
});
