// Cline CLI (cline 3.0.65, one-shot `cline PROMPT`, tools auto-approved) through `superfluid launch
// cline`, over OpenAI chat completions: a plain turn on the server launch starts (offline default
// model) and a whole tool loop (run_commands) on the scripted engine, offline (lib/agent_run.mjs).
import { agentSuite } from './lib/agent_run.mjs';

const once = (prompt) => [prompt];

agentSuite({
  agent: 'cline',
  ua: /user-agent "ai-sdk\/openai-compatible\/.*runtime\/bun/,
  path: '/v1/chat/completions',
  plain: once,
  tool: once,
  // The task runs in this process: Cline's default backend is a hub daemon that outlives the
  // command (and the test).
  env: { CLINE_SESSION_BACKEND_MODE: 'local' },
});
