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
#   SUPERFLUID_CUDA_ARCHS cuda flavor: CMAKE_CUDA_ARCHITECTURES (default: native, the GPUs present;
#                         ggml's default list of every architecture takes several times longer)
#   SUPERFLUID_LLAMA_SRC_TGZ  build from this source archive instead of the npm package: one that
#                         `llama-cpp.sh --export-src` wrote (the pinned tree with this flavor's
#                         patches applied), for machines without npm or git (scripts/device-check.sh)
#
# Usage: llama-cpp.sh                      build (or find) the cached build, print its directory
#        llama-cpp.sh --export-src FILE    write the patched source of this flavor to FILE (.tgz):
#                                          the targets' sources only (no docs, tests, vocabularies
#                                          beyond the one mkmodel embeds, other backends), ~8 MB
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
  cuda) CMAKE_FLAGS+=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${SUPERFLUID_CUDA_ARCHS:-native}") ;;
  metal) CMAKE_FLAGS+=(-DGGML_METAL=ON -DGGML_METAL_EMBED_LIBRARY=ON) ;;
esac
TARGETS=(llama llama-common llama-common-base cpp-httplib llama-server llama-bench)

FLAGS_KEY="$(printf '%s\n' "${CMAKE_FLAGS[@]}" "${TARGETS[@]}" "$(c++ --version | head -1)" \
  $( ((${#PATCHES[@]})) && cat "${PATCHES[@]}" | sha256sum) | sha256sum | cut -c1-12)"
DIR="$CACHE_ROOT/llama.cpp-${COMMIT:0:8}-$FLAGS_KEY"
[[ $FLAVOR == cpu ]] || DIR="$CACHE_ROOT/llama.cpp-${COMMIT:0:8}-$FLAVOR-$FLAGS_KEY"

log() { echo "[llama-cpp] $*" >&2; }

PATCH_SUM="$( ((${#PATCHES[@]})) && cat "${PATCHES[@]}" | sha256sum | cut -c1-64)"
SRC_MARK="llama.cpp $COMMIT patches $PATCH_SUM"

# fetch_source DEST: the pinned tree, checksums verified, this flavor's patches applied.
fetch_source() {
  local dest=$1 tgz="$CACHE_ROOT/dl/$TGZ_NAME"
  mkdir -p "$CACHE_ROOT/dl"
  if [[ ! -f "$tgz" ]] || ! echo "$TGZ_SHA256  $tgz" | sha256sum -c --quiet - 2>/dev/null; then
    log "fetching $NPM_PKG from the npm registry"
    rm -f "$tgz"
    (cd "$CACHE_ROOT/dl" && npm pack --silent "$NPM_PKG" >/dev/null)
  fi
  echo "$TGZ_SHA256  $tgz" | sha256sum -c --quiet - || { log "checksum mismatch for $tgz"; exit 1; }
  tar -xzf "$tgz" -C "$dest" package/llama/gitRelease.bundle
  local bundle="$dest/package/llama/gitRelease.bundle"
  echo "$BUNDLE_SHA256  $bundle" | sha256sum -c --quiet - || { log "bundle checksum mismatch"; exit 1; }
  git -c advice.detachedHead=false clone -q "$bundle" "$dest/src"
  [[ "$(git -C "$dest/src" rev-parse HEAD)" == "$COMMIT" ]] || { log "unexpected commit"; exit 1; }
  for p in "${PATCHES[@]}"; do
    log "applying $(basename "$p")"
    git -C "$dest/src" apply "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"
  done
  rm -rf "$dest/package"
}

if [[ ${1:-} == --export-src ]]; then
  out=$(realpath -m "${2:?usage: llama-cpp.sh --export-src FILE}")
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  fetch_source "$tmp"
  echo "$SRC_MARK" >"$tmp/src/.superfluid-src"
  # What the targets build from: no docs, tests, examples, Python, other backends' sources, and
  # of models/ only the vocabulary and chat template that mkmodel embeds.
  keep=()
  for e in "$tmp"/src/* "$tmp/src/.superfluid-src"; do
    case ${e##*/} in docs | tests | benches | examples | gguf-py | media | models | pocs) ;; *) keep+=("${e##*/}") ;; esac
  done
  tar -czf "$out" -C "$tmp/src" --exclude=.git --exclude=./tools/server/webui \
    --exclude='./ggml/src/ggml-'{vulkan,sycl,cann,opencl,musa,hip,webgpu,zdnn,zendnn,hexagon,openvino,virtgpu,et} \
    "${keep[@]/#/./}" ./models/ggml-vocab-qwen2.gguf ./models/templates/Qwen-Qwen3-0.6B.jinja
  log "wrote $out ($(du -h "$out" | cut -f1), the $FLAVOR flavor's patched source)"
  exit 0
fi

if [[ -f "$DIR/.complete" ]]; then
  log "cached build: $DIR"
  echo "$DIR"
  exit 0
fi

mkdir -p "$CACHE_ROOT/dl"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if [[ -f "$DIR/.complete" ]]; then echo "$DIR"; exit 0; fi

rm -rf "$DIR" "$DIR.tmp"
mkdir -p "$DIR.tmp"
if [[ -n ${SUPERFLUID_LLAMA_SRC_TGZ:-} ]]; then
  log "source from $SUPERFLUID_LLAMA_SRC_TGZ"
  mkdir -p "$DIR.tmp/src"
  tar -xzf "$SUPERFLUID_LLAMA_SRC_TGZ" -C "$DIR.tmp/src"
  [[ "$(cat "$DIR.tmp/src/.superfluid-src" 2>/dev/null)" == "$SRC_MARK" ]] ||
    { log "$SUPERFLUID_LLAMA_SRC_TGZ is not this flavor's patched tree (want: $SRC_MARK)"; exit 1; }
else
  fetch_source "$DIR.tmp"
fi

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
