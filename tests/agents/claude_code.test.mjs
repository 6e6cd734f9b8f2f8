// Claude Code (@anthropic-ai/claude-code 2.1.197, the last release that runs on Node 20; print mode
// `claude -p`) through `superfluid launch claude`, over the Anthropic Messages API with its full
// system prompt and tools: a plain turn on the server launch starts (offline default model) and a
// whole tool loop (Bash) on the scripted engine, offline (lib/agent_run.mjs).
import { agentSuite } from './lib/agent_run.mjs';

// Bash is allowed by rule (tests run as root here, where Claude Code refuses to skip
// permission checks altogether); a few turns at most.
const print = (prompt) => ['-p', prompt, '--max-turns', '4', '--allowedTools', 'Bash'];

agentSuite({
  agent: 'claude',
  ua: /user-agent "claude-cli\//,
  path: '/v1/messages',
  plain: print,
  tool: print,
});
