#!/usr/bin/env bash
# Kill soak (issue #20; not part of the test suite): N kill -9s (default 100), alternating the
# worker and the head, under 24 concurrent streams of every API (tests/soak/soak.mjs). Prints
# "lost L, duplicated D, mismatched M" and exits non-zero unless all are 0. Needs a build
# (build/bin/superfluid, build/bin/mkmodel; override with SUPERFLUID_BIN / MKMODEL_BIN).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-100}"
export SUPERFLUID_BIN="${SUPERFLUID_BIN:-$PWD/build/bin/superfluid}"
export MKMODEL_BIN="${MKMODEL_BIN:-$PWD/build/bin/mkmodel}"
exec node tests/soak/soak.mjs "$N"
