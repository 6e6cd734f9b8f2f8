#!/usr/bin/env bash
# Prints which llama.cpp backend flavor this machine builds (issue #41): one of
#   cpu     ggml's CPU backend only
#   vulkan  CPU + Vulkan (any Vulkan 1.2 GPU: AMD, Intel, NVIDIA; Mesa's lavapipe in CI)
#   cuda    CPU + CUDA (NVIDIA, needs nvcc)
#   metal   CPU + Metal (Apple silicon)
# SUPERFLUID_GPU picks one; unset or `auto`: metal on macOS, cuda where nvcc is on PATH and an
# NVIDIA GPU is present (/dev/nvidia0; a toolkit alone, as on a build box, is not enough: the
# CUDA backend takes an hour to compile on 2 cores), vulkan
# where its build inputs are (vulkan.hpp, glslc, SPIR-V headers: scripts/setup.sh installs them
# on Debian/Ubuntu), else cpu. Every flavor keeps the CPU backend, and serve runs on the CPU
# where no GPU device is found, so a vulkan build on a machine without a GPU behaves as cpu.
# Usage: scripts/gpu-flavor.sh [--can-install]  (--can-install: answer as if setup.sh's apt
# packages were there; setup.sh asks this before installing them)
set -euo pipefail
can_install=0
[[ ${1:-} == --can-install ]] && can_install=1

flavor=${SUPERFLUID_GPU:-auto}
case $flavor in
  cpu | vulkan | cuda | metal) echo "$flavor"; exit 0 ;;
  auto) ;;
  *) echo "SUPERFLUID_GPU=$flavor: expected auto, cpu, vulkan, cuda or metal" >&2; exit 2 ;;
esac
if [[ $(uname -s) == Darwin ]]; then
  echo metal
elif command -v nvcc >/dev/null && [[ -e /dev/nvidia0 ]]; then
  echo cuda
elif ((can_install)) && command -v apt-get >/dev/null; then
  echo vulkan
elif [[ -f /usr/include/vulkan/vulkan.hpp ]] && command -v glslc >/dev/null; then
  echo vulkan
else
  echo cpu
fi
