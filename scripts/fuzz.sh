#!/usr/bin/env bash
# The libFuzzer targets (issue #20; tests/fuzz/): builds them in the `asan` preset's tree
# (clang-14 -O1, ASan + UBSan, our code with libFuzzer's coverage instrumentation; llama.cpp
# linked from the cache), so after scripts/sanitize.sh asan only the fuzz mains are compiled
# (issue #43), and runs each target for SECONDS (default 60), starting from its seeds
# (tests/fuzz/seeds/, read-only) and the corpus kept in build-asan/corpus/<target>/ (grown by
# earlier runs; a missing one starts from the seeds). A crash, a sanitizer report, a leak, an
# input slower than 10 s or one needing over 2 GB leaves its input in
# build-asan/artifacts/<target>/ and fails the run. Prints a table:
# target, executions, corpus size, findings.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (.ci/run: scripts/fuzz.sh 10)
# Environment: JOBS (build jobs, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-60}
shift || true
JOBS="${JOBS:-$(nproc)}"
BUILD=$ROOT/build-asan

# target : seed folder under tests/fuzz/seeds
ALL=(fuzz_openai_request:requests fuzz_responses_request:requests fuzz_anthropic_request:requests
  fuzz_ollama_request:requests fuzz_config:config fuzz_session_ids:session_ids
  fuzz_chat_output:chat_output fuzz_hub_listing:hub_listing fuzz_disk_entry:disk_entry
  fuzz_journal_salvage:journal)

selected=()
for entry in "${ALL[@]}"; do
  if (($# == 0)) || [[ " $* " == *" ${entry%%:*} "* ]]; then selected+=("$entry"); fi
done
((${#selected[@]})) || { echo "fuzz.sh: no such target: $*" >&2; exit 2; }

log() { echo "[fuzz] $*"; }
t0=$SECONDS
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$JOBS" --target "${selected[@]%%:*}"
log "built in $((SECONDS - t0)) s"

status=0
table=()
for entry in "${selected[@]}"; do
  target=${entry%%:*} seeds=$ROOT/tests/fuzz/seeds/${entry#*:}
  corpus=$BUILD/corpus/$target artifacts=$BUILD/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  # JSON inputs get the dictionary (field names, and nesting tokens that add depth in one
  # mutation); session ids, disk entries and journal pages are not JSON.
  dict=()
  case ${entry#*:} in requests | config | chat_output | hub_listing) dict=(-dict="$ROOT/tests/fuzz/json.dict") ;; esac
  log "$target: ${SECONDS_EACH} s"
  out=$BUILD/$target.log
  # libFuzzer exits non-zero on a finding; the artifacts folder says which.
  "$BUILD/fuzz/$target" "$corpus" "$seeds" "${dict[@]}" -max_total_time="$SECONDS_EACH" \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$out" 2>&1 || true
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out" | grep -o '[0-9]*$' || echo 0)
  corp=$(ls "$corpus" | wc -l)
  found=$(ls "$artifacts" | wc -l)
  table+=("$(printf '%-24s %12s %8s %8s' "$target" "$execs" "$corp" "$found")")
  if ((found > 0)) || ! grep -q 'stat::number_of_executed_units' "$out"; then
    status=1
    log "$target: FAILED ($found findings in $artifacts); the log's tail:"
    tail -n 60 "$out"
  fi
done

printf '%-24s %12s %8s %8s\n' target executions corpus findings
printf '%s\n' "${table[@]}"
log "$( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - t0)) s"
exit $status
