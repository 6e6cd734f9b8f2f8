#!/usr/bin/env bash
# Fetches the pinned llama.cpp (v0.5.0, commit de3ff815) from the npm registry and
# builds the targets Superfluid needs, once per machine, into a cache directory keyed
# by version and build flags. Prints the directory on stdout (last line).
#
# Source: `npm pack node-llama-cpp@3.22.1` ships llama.cpp as llama/gitRelease.bundle
# (see ../shared/ENGINE-NOTES.md). Both checksums are verified before use.
#
# Environment:
#   SUPERFLUID_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-~/.cache}/superfluid)
#   SUPERFLUID_GPU        backend flavor: auto (default), cpu, vulkan, cuda, metal
#                         (scripts/gpu-flavor.sh says which auto picks; each flavor is cached apart)
#   JOBS                  parallel build jobs (default: nproc)
set -euo pipefail

NPM_PKG="node-llama-cpp@3.22.1"
TGZ_NAME="node-llama-cpp-3.22.1.tgz"
TGZ_SHA256="a0d9dd80eacd2ab1cfe71aee57ac8a806487fd70b3d2a38fbec637752d9e5c5f"
BUNDLE_SHA256="5f5d1105d5df040738d87b8290e5d17e7362131cdcfdb0831618e0ea528b4a51"
COMMIT="de3ff815ea7d559ee917f063901b8986f038abc6"

CACHE_ROOT="${SUPERFLUID_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/superfluid}"
JOBS="${JOBS:-$(nproc)}"

FLAVOR="$(bash "$(dirname "$0")/gpu-flavor.sh")"

# Offline-safe, no AMX (the VMs here advertise AMX but refuse it: SIGILL on quantized
# weights), AVX2 baseline so binaries run on any recent x86-64. The flavor adds its backend
# beside the CPU one.
CMAKE_FLAGS=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON
  -DLLAMA_BUILD_COMMON=ON
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_TOOLS=ON
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_APP=OFF
  -DLLAMA_BUILD_UI=OFF
  -DLLAMA_USE_PREBUILT_UI=OFF
  -DLLAMA_OPENSSL=OFF
  -DLLAMA_TOOLS_INSTALL=OFF
  -DGGML_NATIVE=OFF
  -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_OPENMP=OFF
  -DGGML_CCACHE=ON
)
# Every flavor: flash attention over a KV pool shared by several sequences visits only each
# token's own cells (ggml_flash_attn_ext_set_ranges), and the pool's used cells are readable
# (llama_memory_n_cells_used). docs/ARCHITECTURE.md, "KV memory", says why.
PATCHES=("$(dirname "$0")/patches/llama-kq-ranges.patch")
case $FLAVOR in
  vulkan)
    # Debian 12's Vulkan headers (1.3.239) and glslc (2023.2) are older than the pinned tree
    # assumes: the patch guards the two places that need newer ones (docs/gpu.md says which).
    CMAKE_FLAGS+=(-DGGML_VULKAN=ON)
    PATCHES+=("$(dirname "$0")/patches/llama-vulkan-old-toolchain.patch")
    ;;
  cuda) CMAKE_FLAGS+=(-DGGML_CUDA=ON) ;;
  metal) CMAKE_FLAGS+=(-DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON) ;;
esac
TARGETS=(llama llama-common llama-common-base cpp-httplib llama-server llama-bench)

FLAGS_KEY="$(printf '%s\n' "${CMAKE_FLAGS[@]}" "${TARGETS[@]}" "$(c++ --version | head -1)" \
  $( ((${#PATCHES[@]})) && cat "${PATCHES[@]}" | sha256sum) | sha256sum | cut -c1-12)"
DIR="$CACHE_ROOT/llama.cpp-${COMMIT:0:8}-$FLAGS_KEY"
[[ $FLAVOR == cpu ]] || DIR="$CACHE_ROOT/llama.cpp-${COMMIT:0:8}-$FLAVOR-$FLAGS_KEY"

log() { echo "[llama-cpp] $*" >&2; }

if [[ -f "$DIR/.complete" ]]; then
  log "cached build: $DIR"
  echo "$DIR"
  exit 0
fi

mkdir -p "$CACHE_ROOT/dl"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if [[ -f "$DIR/.complete" ]]; then echo "$DIR"; exit 0; fi

TGZ="$CACHE_ROOT/dl/$TGZ_NAME"
if [[ ! -f "$TGZ" ]] || ! echo "$TGZ_SHA256  $TGZ" | sha256sum -c --quiet - 2>/dev/null; then
  log "fetching $NPM_PKG from the npm registry"
  rm -f "$TGZ"
  (cd "$CACHE_ROOT/dl" && npm pack --silent "$NPM_PKG" >/dev/null)
fi
echo "$TGZ_SHA256  $TGZ" | sha256sum -c --quiet - || { log "checksum mismatch for $TGZ"; exit 1; }

rm -rf "$DIR" "$DIR.tmp"
mkdir -p "$DIR.tmp"
tar -xzf "$TGZ" -C "$DIR.tmp" package/llama/gitRelease.bundle
BUNDLE="$DIR.tmp/package/llama/gitRelease.bundle"
echo "$BUNDLE_SHA256  $BUNDLE" | sha256sum -c --quiet - || { log "bundle checksum mismatch"; exit 1; }
git -c advice.detachedHead=false clone -q "$BUNDLE" "$DIR.tmp/src"
[[ "$(git -C "$DIR.tmp/src" rev-parse HEAD)" == "$COMMIT" ]] || { log "unexpected commit"; exit 1; }
for p in "${PATCHES[@]}"; do
  log "applying $(basename "$p")"
  git -C "$DIR.tmp/src" apply "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"
done
rm -rf "$DIR.tmp/package"

log "configuring the $FLAVOR flavor (flags key $FLAGS_KEY)"
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)
cmake -S "$DIR.tmp/src" -B "$DIR.tmp/build" "${GEN[@]}" "${CMAKE_FLAGS[@]}" >&2
log "building ${TARGETS[*]} with $JOBS jobs (about 7 min on 2 cores cold, under 1 min with a warm ccache)"
start=$(date +%s)
cmake --build "$DIR.tmp/build" -j "$JOBS" --target "${TARGETS[@]}" >&2
log "built in $(( $(date +%s) - start )) s"
printf '%s\n' "${CMAKE_FLAGS[@]}" > "$DIR.tmp/flags.txt"
echo "$FLAVOR" > "$DIR.tmp/flavor.txt"
mv "$DIR.tmp" "$DIR"
touch "$DIR/.complete"
echo "$DIR"
