#!/usr/bin/env bash
# Measures CI from cold (issue #43): clones the committed HEAD into a fresh folder and runs its
# .ci/run with an empty cache root (SUPERFLUID_CACHE_DIR: the llama.cpp build, the agents),
# an empty ccache and an empty npm cache, all under that folder, then prints the wall time of
# each stage (.ci/run's table). Debian packages already installed stay installed (the machine
# is not reset): the apt step is the one part this cannot make cold.
#
# Usage: scripts/ci-cold.sh [DIR]   (default: a new folder under /tmp; kept afterwards, with
#                                    ci.log, for the per-stage logs; delete it when done)
set -uo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$(mktemp -d /tmp/sf-ci-cold.XXXXXX)}
mkdir -p "$DIR"
rm -rf "$DIR/src" "$DIR/cache" "$DIR/ccache" "$DIR/npm"
git clone -q "$SRC" "$DIR/src" || exit 1
echo "[ci-cold] $(git -C "$DIR/src" log -1 --format='%h %s') in $DIR"
export SUPERFLUID_CACHE_DIR=$DIR/cache CCACHE_DIR=$DIR/ccache npm_config_cache=$DIR/npm
t0=$SECONDS
(cd "$DIR/src" && bash .ci/run) >"$DIR/ci.log" 2>&1
rc=$?
grep '^\[ci\]   ' "$DIR/ci.log"
echo "[ci-cold] .ci/run exit $rc after $((SECONDS - t0)) s; log: $DIR/ci.log"
exit $rc
