#!/usr/bin/env bash
# Installs everything Superfluid needs on Debian 12 / Ubuntu and builds it:
#   1. Debian packages (compilers incl. clang-14 for libFuzzer, CMake, gRPC, protobuf, SQLite, OpenSSL, curl, CLI11, GoogleTest, Node.js)
#   2. the pinned llama.cpp (v0.5.0 from the npm registry), built once per machine and backend
#      flavor into ~/.cache/superfluid (scripts/llama-cpp.sh; the CPU and Vulkan backends by
#      default on Debian, SUPERFLUID_GPU picks another: scripts/gpu-flavor.sh)
#   3. this project (CMake preset `default` → build/bin/superfluid, build/bin/mkmodel)
#   4. the npm SDKs the client tests use (tests/clients), playwright-core for the browser
#      tests of /ui (tests/ui; the browser is Debian's chromium)
# Safe to re-run: every step is skipped when already done.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake ninja-build ccache pkg-config git ca-certificates curl
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev libssl-dev libcurl4-openssl-dev libcli11-dev libgtest-dev libgmock-dev
  libboost1.74-dev  # Boost.Beast/Asio (header-only): the head's event-driven HTTP server
  bsdutils  # script(1): the terminal-chat test runs `superfluid run` on a pseudo-terminal
  sqlite3  # journal checks in the cluster and retry-resume tests read journal.db
  strace iproute2 util-linux  # tests/agents: connect() audit, a network namespace (unshare);
                              # cluster.test.mjs: ip netns + veth + bridge per guest
  nftables  # cluster.test.mjs: a half-open link (a guest's packets to the head dropped)
  tcpdump   # capturing the head-guest link (what crosses it is TLS, never a prompt in clear)
  e2fsprogs  # journal_disk.test.mjs: a small ext4 on a loop device that fills up / turns read-only
  chromium  # the /ui page's browser test (tests/ui, driven by playwright-core)
  clang-14 libclang-rt-14-dev)  # libFuzzer for the fuzz targets (tests/fuzz, scripts/fuzz.sh)

# The llama.cpp backend flavor (scripts/gpu-flavor.sh; SUPERFLUID_GPU=cpu|vulkan|cuda|metal):
# vulkan, the default on Debian/Ubuntu without an NVIDIA GPU, builds from Debian's Vulkan
# headers, glslc and SPIR-V headers, and Mesa's drivers bring lavapipe (Vulkan on the CPU, the
# device CI's GPU tests run on; ggml leaves it alone unless GGML_VK_VISIBLE_DEVICES names it).
FLAVOR="$(bash scripts/gpu-flavor.sh --can-install)"
export SUPERFLUID_GPU=$FLAVOR  # llama-cpp.sh and CMake's call of it build that one
if [[ $FLAVOR == vulkan ]]; then
  PACKAGES+=(libvulkan-dev glslc spirv-headers mesa-vulkan-drivers)
fi

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The npm installs (network and unpacking: the SDKs, playwright-core, ~2.4 GB of agents) run
# beside the compiles (CPU); their output is printed only if one fails.
npm_log=$(mktemp)
(
  set -e
  if [[ ! -d tests/clients/node_modules/openai ]]; then
    echo "[setup] installing the npm SDKs for the client tests"
    (cd tests/clients && npm ci --no-audit --no-fund --silent)
  fi
  if [[ ! -d tests/ui/node_modules/playwright-core ]]; then
    echo "[setup] installing playwright-core for the browser tests"
    (cd tests/ui && npm ci --no-audit --no-fund --silent)
  fi
  echo "[setup] coding agents for tests/agents (cached per machine)"
  bash scripts/agents.sh >/dev/null
) >"$npm_log" 2>&1 &
npm_pid=$!
# A failed compile ends this script: the installs end with it.
trap 'kill "$npm_pid" 2>/dev/null || true' EXIT

echo "[setup] llama.cpp, $FLAVOR flavor (cached per machine and flavor)"
bash scripts/llama-cpp.sh >/dev/null

echo "[setup] building superfluid"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"

if ! wait "$npm_pid"; then
  cat "$npm_log" >&2
  echo "[setup] the npm installs failed (above)" >&2
  exit 1
fi
cat "$npm_log"
rm -f "$npm_log"
echo "[setup] done: build/bin/superfluid"
