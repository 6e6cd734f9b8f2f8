// Claude Code's CLI (@anthropic-ai/claude-code from tests/clients/node_modules) run against a
// server: a fresh HOME, a dummy key, every model name on the server's default model, and
// nothing sent anywhere but the server (no telemetry, updates or attribution block).
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
/** The Claude Code binary the client tests use (scripts/setup.sh installs it). */
export const CLAUDE = resolve(here, '..', 'clients', 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');

/**
 * Runs `claude ARGS` against `url` (ANTHROPIC_BASE_URL) with `env` added to the fixed
 * environment; SIGKILLs it after `timeoutMs`. Resolves { code, out } (stdout + stderr).
 */
export function runClaude(url, args, { env = {}, timeoutMs = 300000 } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'sf-claude-home-'));
  const full = {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_AUTH_TOKEN: 'dummy',
    ANTHROPIC_MODEL: 'default',
    ANTHROPIC_SMALL_FAST_MODEL: 'default',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'default',
    CLAUDE_CODE_ATTRIBUTION_HEADER: '0',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...env,
  };
  return new Promise((res) => {
    const p = spawn(CLAUDE, args, { env: full, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('exit', (code) => {
      clearTimeout(t);
      res({ code, out });
    });
  });
}
