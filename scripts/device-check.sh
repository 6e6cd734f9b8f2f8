#!/usr/bin/env bash
# The GPU device check (issue #41): on an NVIDIA machine that has nvcc, CMake and a C++ compiler
# but none of our Debian build dependencies and no network, build the CUDA flavor, write a
# random-weight GGUF of Qwen3-32B's shape at Q4_K_M, and run `bench priority` and
# `bench throughput` (c1, c8) against the CUDA llama-server built from the same tree, printing
# the ratios.
#
# Two halves, because the GPU machine reaches nothing:
#
#   scripts/device-check.sh pack     here (Debian 12 with apt and npm): writes .device/
#       deps.tgz       our build dependencies (gRPC, protobuf, OpenSSL, SQLite, curl, CLI11,
#                      Boost's headers, pkgconf; no GoogleTest: the tests are not built there,
#                      -DSUPERFLUID_TESTS=OFF) downloaded as Debian 12 .deb files with the
#                      libraries they need beyond glibc and the compiler's own, unpacked under
#                      one prefix and pruned (no docs, static libraries, or Boost headers the
#                      HTTP server does not include: the .debs themselves, ~37 MB, do not fit
#                      beside the tree in the 64 MiB a device run may carry)
#       llama-src.tgz  the pinned llama.cpp with the cuda flavor's patches (llama-cpp.sh
#                      --export-src), so the device needs neither npm nor git
#       MANIFEST       the packages and versions, and both archives' sha256
#   scripts/device-check.sh [all]    there: the four phases below, each skipped when done
#   scripts/device-check.sh build|model|bench|report   one phase
#
# Nothing is installed into /: the dependencies are unpacked under $SF_DEVICE_WORK/prefix and
# the binaries find their libraries by RPATH. With the device tool:
#   run(command="bash scripts/device-check.sh", carry=[".device"], timeout_s=600)
#
# Environment:
#   SF_DEVICE_WORK   work folder there (default /tmp/sf-device: prefix, llama.cpp cache, build,
#                    the 19 GB model, raw bench output)
#   OUT              where the small results go (default: bench/results/device-check); report
#                    copies there at most 8 files, each well under 16 MiB
#   JOBS             build jobs (default: nproc)
#   SF_DEVICE_FLAVOR cuda (default); cpu tries the build phase on a machine without a GPU (how
#                    the script was tried: a Debian 12 chroot with only build-essential, cmake
#                    and ninja, docs/gpu.md)
#
# Phase times on the target (16 cores, H100) are not measured yet: no machine was lent in the
# session that wrote this (README, "GPU device check").
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PACK=$ROOT/.device
WORK=${SF_DEVICE_WORK:-/tmp/sf-device}
RESULTS=${OUT:-$ROOT/bench/results/device-check}
JOBS=${JOBS:-$(nproc)}
FLAVOR=${SF_DEVICE_FLAVOR:-cuda}
MODEL=$WORK/qwen3-32b-q4_k_m.gguf
ARCH_LIB=usr/lib/x86_64-linux-gnu

log() { echo "[device-check] $*" >&2; }
die() { log "$*"; exit 1; }
phase_start() { PHASE_T0=$SECONDS; log "== $1"; }
phase_end() { log "== $1 done in $((SECONDS - PHASE_T0)) s"; }

# The packages CMakeLists.txt and src/CMakeLists.txt find (scripts/setup.sh installs the same).
ROOTS=(libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libssl-dev
  libsqlite3-dev libcurl4-openssl-dev libcli11-dev libboost1.74-dev)
# What every glibc system with a C++ compiler has; not carried (a newer copy is there). pkgconf
# is carried: gRPC's CMake config finds re2 through pkg-config.
BASE_RE='^(gcc-[0-9]+-base|lib(asan|atomic|gomp|itm|lsan|quadmath|tsan|ubsan)[0-9]+|libc6(-dev)?|libc-dev-bin|libcrypt(1|-dev)|libgcc-[0-9]+-dev|libgcc-s1|libstdc\+\+(6|-[0-9]+-dev)|libnsl(2|-dev)|libtirpc.*|linux-libc-dev|rpcsvc-proto|libdb5\.3)$'

pack() {
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || die "pack needs apt-get and dpkg-deb (Debian 12)"
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$PACK" "$tmp/debs" "$tmp/prefix"
  local pkgs
  pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances "${ROOTS[@]}" | grep -v '^[ <]' | sort -u | grep -Ev "$BASE_RE")
  log "downloading $(wc -w <<<"$pkgs") Debian packages"
  (cd "$tmp/debs" && apt-get download $pkgs >/dev/null)
  for d in "$tmp"/debs/*.deb; do dpkg-deb -x "$d" "$tmp/prefix"; done
  local p=$tmp/prefix
  rm -rf "$p"/usr/share/{doc,man,locale,lintian,bug,bash-completion}
  find "$p" -name '*.a' -delete
  # Boost: the top-level folders that the HTTP server's sources include, transitively
  # (src/http/event_server.cpp is the only includer), and the top-level headers.
  local used
  used=$(grep -rl '#include <boost/' "$ROOT/src" | while read -r f; do
    c++ -std=c++20 -M -MG -I"$ROOT/src" -isystem "$p/usr/include" "$f"
  done | tr ' \\' '\n\n' | sed -n 's|.*/include/boost/\([^/]*\)/.*|\1|p' | sort -u)
  [[ -n $used ]] || die "no Boost headers found in use (c++ -M failed?)"
  for e in "$p"/usr/include/boost/*/; do
    grep -qx "$(basename "$e")" <<<"$used" || rm -rf "$e"
  done
  tar -czf "$PACK/deps.tgz" -C "$p" .
  SUPERFLUID_GPU=cuda bash "$ROOT/scripts/llama-cpp.sh" --export-src "$PACK/llama-src.tgz"
  {
    echo "# scripts/device-check.sh pack, $(date -u +%FT%TZ), $(. /etc/os-release && echo "$PRETTY_NAME")"
    (cd "$PACK" && sha256sum deps.tgz llama-src.tgz)
    for d in "$tmp"/debs/*.deb; do echo "# $(basename "$d")"; done
  } >"$PACK/MANIFEST"
  log "wrote $PACK: $(du -sh "$PACK" | cut -f1) (deps.tgz $(du -h "$PACK/deps.tgz" | cut -f1), llama-src.tgz $(du -h "$PACK/llama-src.tgz" | cut -f1))"
  log "the tree that travels with it: $(git -C "$ROOT" ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) bytes (the limit is 64 MiB in all)"
}

# Checks what the device machine must have, and unpacks the carried dependencies once.
prepare() {
  [[ -f $PACK/deps.tgz && -f $PACK/llama-src.tgz ]] || die "no $PACK/deps.tgz: run 'scripts/device-check.sh pack' here first and carry .device"
  (cd "$PACK" && grep -v '^#' MANIFEST | sha256sum -c --quiet -) || die "$PACK does not match its MANIFEST"
  local missing=()
  for t in cmake c++ tar gzip; do command -v $t >/dev/null || missing+=("$t"); done
  [[ $FLAVOR != cuda ]] || command -v nvcc >/dev/null || missing+=(nvcc)
  ((${#missing[@]} == 0)) || die "missing on this machine: ${missing[*]}"
  [[ $FLAVOR != cuda || -e /dev/nvidia0 ]] || die "no NVIDIA GPU (/dev/nvidia0)"
  mkdir -p "$WORK"
  local P=$WORK/prefix
  if [[ ! -f $P/.complete ]]; then
    rm -rf "$P" && mkdir -p "$P"
    tar -xzf "$PACK/deps.tgz" -C "$P"
    # The .pc files say prefix=/usr: point them at the prefix.
    find "$P" -name '*.pc' -exec sed -i "s|=/usr\b|=$P/usr|" {} +
    touch "$P/.complete"
  fi
  # protoc and the gRPC plugin are Debian's executables: they get the prefix's libraries, the
  # build's compilers and linkers do not.
  mkdir -p "$WORK/bin"
  for t in protoc grpc_cpp_plugin; do
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$P/$ARCH_LIB" "$P/usr/bin/$t" >"$WORK/bin/$t"
    chmod +x "$WORK/bin/$t"
  done
  # pkg-config (Debian's pkgconf) that sees only the prefix's .pc files.
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s PKG_CONFIG_LIBDIR=%s exec %s "$@"\n' "$P/$ARCH_LIB" \
    "$P/$ARCH_LIB/pkgconfig:$P/usr/share/pkgconfig" "$P/usr/bin/pkgconf" >"$WORK/bin/pkg-config"
  chmod +x "$WORK/bin/pkg-config"
}

build() {
  phase_start "build ($FLAVOR flavor of llama.cpp, then superfluid and mkmodel, $JOBS jobs)"
  prepare
  local P=$WORK/prefix llama
  llama=$(SUPERFLUID_GPU=$FLAVOR SUPERFLUID_CACHE_DIR=$WORK/cache SUPERFLUID_LLAMA_SRC_TGZ=$PACK/llama-src.tgz \
    JOBS=$JOBS bash "$ROOT/scripts/llama-cpp.sh" | tail -1)
  local gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  # The prefix's multiarch headers (openssl/opensslconf.h) are not on the compiler's own path as
  # /usr/include/x86_64-linux-gnu is; its libraries are found at run time by DT_RPATH.
  local rpath="-Wl,--disable-new-dtags,-rpath,$P/$ARCH_LIB"
  cmake -S "$ROOT" -B "$WORK/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DSUPERFLUID_LLAMA_DIR="$llama" -DCMAKE_PREFIX_PATH="$P/usr" -DSUPERFLUID_TESTS=OFF \
    -DProtobuf_PROTOC_EXECUTABLE="$WORK/bin/protoc" -DGRPC_CPP_PLUGIN="$WORK/bin/grpc_cpp_plugin" \
    -DPKG_CONFIG_EXECUTABLE="$WORK/bin/pkg-config" \
    -DCMAKE_CXX_FLAGS="-isystem $P/usr/include/x86_64-linux-gnu" \
    -DCMAKE_C_FLAGS="-isystem $P/usr/include/x86_64-linux-gnu" \
    -DCMAKE_EXE_LINKER_FLAGS="$rpath" -DCMAKE_SHARED_LINKER_FLAGS="$rpath" >"$WORK/cmake.log" 2>&1 ||
    { tail -40 "$WORK/cmake.log"; die "configuring superfluid failed ($WORK/cmake.log)"; }
  cmake --build "$WORK/build" -j "$JOBS" --target superfluid mkmodel >"$WORK/build.log" 2>&1 ||
    { tail -40 "$WORK/build.log"; die "building superfluid failed ($WORK/build.log)"; }
  "$WORK/build/bin/superfluid" --version
  phase_end build
}

model() {
  phase_start "model ($MODEL)"
  [[ -x $WORK/build/bin/mkmodel ]] || die "no $WORK/build/bin/mkmodel: run the build phase first"
  [[ -f $MODEL ]] || "$WORK/build/bin/mkmodel" --preset qwen3-32b --quant q4_k_m --out "$MODEL"
  ls -l "$MODEL"
  phase_end model
}

bench() {
  phase_start "bench (priority; throughput c1, c8; both against llama-server, default flags)"
  local sf=$WORK/build/bin/superfluid
  [[ -x $sf && -f $MODEL ]] || die "run the build and model phases first"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$sf" bench priority --model "$MODEL" --against llama-server --no-progress \
    --out "$WORK/bench/priority" >"$WORK/bench-priority.log" 2>&1 ||
    { tail -30 "$WORK/bench-priority.log"; die "bench priority failed"; }
  "$sf" bench throughput --model "$MODEL" --against llama-server --no-progress \
    --concurrency 1 8 --no-journal-cost --out "$WORK/bench/throughput" >"$WORK/bench-throughput.log" 2>&1 ||
    { tail -30 "$WORK/bench-throughput.log"; die "bench throughput failed"; }
  phase_end bench
}

# Copies the reports (markdown and JSON per scenario, the version line) to $RESULTS and prints
# the markdown: the ratios are in its tables.
report() {
  mkdir -p "$RESULTS"
  "$WORK/build/bin/superfluid" --version >"$RESULTS/version.txt" 2>&1 || true
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>"$RESULTS/version.txt" 2>&1 || true
  for s in priority throughput; do
    for f in report.md results.json; do
      [[ -f $WORK/bench/$s/$f ]] && cp "$WORK/bench/$s/$f" "$RESULTS/$s-$f"
    done
    [[ -f $RESULTS/$s-report.md ]] && cat "$RESULTS/$s-report.md"
  done
  log "results in $RESULTS"
}

case ${1:-all} in
  pack) pack ;;
  build) build ;;
  model) model ;;
  bench) bench ;;
  report) report ;;
  all)
    T0=$SECONDS
    [[ -x $WORK/build/bin/superfluid ]] || build
    model
    bench
    report
    log "all phases in $((SECONDS - T0)) s"
    ;;
  *) die "usage: scripts/device-check.sh [pack|all|build|model|bench|report]" ;;
esac
