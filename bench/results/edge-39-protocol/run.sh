#!/usr/bin/env bash
# Issue #39: this session's changes before (e6c3964) and after (HEAD), interleaved, default flags,
# the bench model, llama-server beside each run (its own defaults too; --server-defaults).
set -x
M=/tmp/b39/bench.gguf
for r in 1 2; do
  for v in old new; do
    /tmp/b39/sf-$v bench priority --model $M --against llama-server --server-defaults --peer-parallel 8 --peer-ctx-size 8192 --runs 1 --out /tmp/b39/prio-$v-$r --no-progress
    /tmp/b39/sf-$v bench throughput --model $M --against llama-server --server-defaults --peer-parallel 8 --peer-ctx-size 8192 --concurrency 1 --concurrency 8 --no-journal-cost --runs 1 --out /tmp/b39/tp-$v-$r --no-progress
  done
done
