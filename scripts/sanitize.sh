#!/usr/bin/env bash
# The sanitizer jobs (issue #20), run by .ci/run after scripts/test.sh:
#   asan  AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover)
#   tsan  ThreadSanitizer (never combined with ASan)
# Each builds only what its tests need (CMake presets asan / tsan: Debug, our code instrumented;
# the cached llama.cpp, gRPC, protobuf and SQLite are not), then runs every unit test and a fast
# subset of the integration tests (one test per API, the worker-kill test, the journal's kill and
# re-attach tests) against the sanitized `superfluid` (head and worker child) and `mkmodel`.
# Every report is written under build-<job>/sanitizer-logs/ (the worker's too, and those of a
# process whose exit a test does not check); any report fails the job and is printed.
#
# Usage: scripts/sanitize.sh [asan|tsan]...   (default: both, asan first)
# Environment: JOBS (build jobs, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
JOBS="${JOBS:-$(nproc)}"

UNIT_TARGETS=(util_test engine_test scheduler_test cache_test api_test http_test cluster_test mkmodel_test bench_test
  ollama_responses_test journal_test models_test events_test session_test launch_test)

# file : node --test-name-pattern (a regular expression over the test names).
INTEGRATION=(
  "api_cases.test.mjs:^B16 an object-form tool_choice is enforced"
  "api_cases_anthropic.test.mjs:^B03 streamed tool input equals non-streamed"
  "api_cases_responses.test.mjs:^B33 every SSE event carries the fields"
  "ollama.test.mjs:^/api/generate streamed and not give the same text"
  "lifecycle.test.mjs:^a worker killed twice mid-stream"
  "journal.test.mjs:^(20 concurrent streams, worker SIGKILLed|head SIGKILLed mid-stream)"
)

log() { echo "[sanitize] $*"; }

run_job() {
  local job=$1 dir="$ROOT/build-$1" t0=$SECONDS
  local logs="$dir/sanitizer-logs"
  log "$job: configure + build (${UNIT_TARGETS[*]} superfluid mkmodel)"
  # (set -e does not apply inside a function called from `||`: each step checks its own status.)
  cmake --preset "$job" >/dev/null || return 1
  cmake --build --preset "$job" -j "$JOBS" --target "${UNIT_TARGETS[@]}" superfluid mkmodel || return 1
  log "$job: built in $((SECONDS - t0)) s"

  rm -rf "$logs" && mkdir -p "$logs" || return 1
  case $job in
    asan)
      export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
      export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
      ;;
    tsan)
      export TSAN_OPTIONS="log_path=$logs/tsan:suppressions=$ROOT/tests/sanitizers/tsan.supp:halt_on_error=0:second_deadlock_stack=1"
      ;;
  esac

  local failed=0 t1=$SECONDS
  log "$job: unit tests"
  # Unit tests that run gRPC's server and client in-process (cluster's guest port, over TLS)
  # take TSan's ignore_noninstrumented_modules=1, as the integration subset does (see
  # tests/sanitizers/tsan.supp): without it, one test gave 114 reports, every access in
  # libgrpc, libabsl_*, libssl/libcrypto or libstdc++ code they call, none in a frame of ours.
  local grpc_units='^cluster_guest_port[.]'
  ctest --test-dir "$dir" -L unit -E "$grpc_units" -j "$JOBS" --output-on-failure || failed=1
  if [[ $job == tsan ]]; then
    TSAN_OPTIONS="$TSAN_OPTIONS:ignore_noninstrumented_modules=1" \
      ctest --test-dir "$dir" -L unit -R "$grpc_units" --output-on-failure || failed=1
  else
    ctest --test-dir "$dir" -L unit -R "$grpc_units" --output-on-failure || failed=1
  fi
  log "$job: unit tests in $((SECONDS - t1)) s"

  local t2=$SECONDS
  # gRPC's uninstrumented threads: see tests/sanitizers/tsan.supp.
  if [[ $job == tsan ]]; then TSAN_OPTIONS+=":ignore_noninstrumented_modules=1"; fi
  export SUPERFLUID_BIN="$dir/bin/superfluid" MKMODEL_BIN="$dir/bin/mkmodel"
  for entry in "${INTEGRATION[@]}"; do
    local file=${entry%%:*} pattern=${entry#*:} t=$SECONDS
    log "$job: integration $file /$pattern/"
    # A hang (a test process that never exits) fails this job in 15 minutes instead of using up
    # CI's whole budget; SIGKILL 10 s after the SIGTERM if it does not go.
    timeout -k 10 900 node --test --test-reporter=spec --test-name-pattern="$pattern" \
      "tests/integration/$file" || failed=1
    log "$job: $file in $((SECONDS - t)) s"
  done
  unset SUPERFLUID_BIN MKMODEL_BIN ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
  log "$job: integration tests in $((SECONDS - t2)) s"

  local reports
  reports=$(find "$logs" -type f | sort)
  if [[ -n $reports ]]; then
    failed=1
    for f in $reports; do
      log "$job: report $f ($(grep -c '^SUMMARY' "$f") findings; the first 300 lines)"
      head -n 300 "$f"
    done
  fi
  log "$job: $([[ $failed == 0 ]] && echo passed || echo FAILED) in $((SECONDS - t0)) s"
  return $failed
}

jobs=("$@")
((${#jobs[@]})) || jobs=(asan tsan)
status=0
for job in "${jobs[@]}"; do
  case $job in
    asan | tsan) run_job "$job" || status=1 ;;
    *) echo "usage: $0 [asan|tsan]..." >&2; exit 2 ;;
  esac
done
exit $status
