#!/usr/bin/env bash
# Runs a command in a network namespace of its own with only the loopback interface up, so
# nothing it starts (the server, the agents) can reach any other machine: a request to the
# outside fails at once instead of leaving. Root uses `unshare -n`; others try a user
# namespace (`unshare -rn`). Where neither is allowed the command runs on the host's network
# (said on stderr); the tests' socket audit (lib/agent_run.mjs) still fails any connection to
# an address other than loopback. Sets SF_NETNS=isolated|host for the tests to report.
set -euo pipefail
inner='ip link set lo up 2>/dev/null || true; SF_NETNS=isolated exec "$@"'
if unshare -n true 2>/dev/null; then
  exec unshare -n -- bash -c "$inner" bash "$@"
elif unshare -rn true 2>/dev/null; then
  exec unshare -rn -- bash -c "$inner" bash "$@"
fi
echo "[offline.sh] no network namespace available here: running on the host's network" >&2
SF_NETNS=host exec "$@"
