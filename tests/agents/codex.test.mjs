// Codex (@openai/codex 0.169.0, `codex exec`) through `superfluid launch codex`, over the Responses
// API: a plain turn on the server launch starts (offline default model) and a whole tool loop
// (exec_command) on the scripted engine, offline (lib/agent_run.mjs).
import { agentSuite } from './lib/agent_run.mjs';

// One-shot: no git repository needed; commands run without a sandbox (no bubblewrap here)
// and without asking.
const exec = (prompt) => ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt];

agentSuite({
  agent: 'codex',
  ua: /user-agent "codex_exec\//,
  path: '/v1/responses',
  plain: exec,
  tool: exec,
  plainOk: (out) => /^codex$/m.test(out), // the answer's header in codex exec's transcript
});
