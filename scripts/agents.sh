#!/usr/bin/env bash
# Installs the coding agents the agent tests drive (tests/agents/package.json: Codex, OpenCode,
# pi, Cline, Claude Code, at pinned versions; tests/agents/openclaw/package.json: OpenClaw and
# the Node.js 24 it needs) from the npm registry, once per machine, into a cache directory
# keyed by the lockfiles (about 2.4 GB: the agents ship native binaries), and links
# tests/agents/node_modules and tests/agents/openclaw/node_modules to it. The packages' install scripts run (OpenCode and Claude
# Code put their platform binaries in place with them; none downloads). `npm install` with the
# committed lockfile, not `npm ci`: npm 11 leaves other platforms' optional binaries out of the
# lockfile and `npm ci` then refuses it as out of sync. Safe to re-run; prints the directory
# on stdout (last line).
#
# Environment:
#   SUPERFLUID_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-~/.cache}/superfluid)
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE_ROOT="${SUPERFLUID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/superfluid}"
SRC=tests/agents
KEY="$(cat "$SRC"/package.json "$SRC"/package-lock.json "$SRC"/openclaw/package*.json | sha256sum | cut -c1-12)"
DIR="$CACHE_ROOT/agents-$KEY"

log() { echo "[agents] $*" >&2; }

if [[ ! -f "$DIR/.complete" ]]; then
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.agents.lock"
  flock 9
  if [[ ! -f "$DIR/.complete" ]]; then
    log "installing the agents (npm ci, once per machine) into $DIR"
    rm -rf "$DIR"
    mkdir -p "$DIR"
    cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
    (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error)
    # OpenClaw's installer refuses Node 20; it runs under the Node 24 installed beside it.
    mkdir -p "$DIR/openclaw"
    cp "$SRC"/openclaw/package.json "$SRC"/openclaw/package-lock.json "$DIR/openclaw/"
    (cd "$DIR/openclaw" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
    touch "$DIR/.complete"
  fi
fi
# The tests find the agents under tests/agents/node_modules (OpenClaw: openclaw/node_modules).
for d in "" /openclaw; do
  if [[ "$(readlink "$SRC$d/node_modules" 2>/dev/null)" != "$DIR$d/node_modules" ]]; then
    rm -rf "$SRC$d/node_modules"
    ln -s "$DIR$d/node_modules" "$SRC$d/node_modules"
  fi
done
log "agents: $DIR"
echo "$DIR"
