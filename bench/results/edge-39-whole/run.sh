#!/usr/bin/env bash
# Issue #39 as a whole: the tree before its first commit (0c7160e, the parent of cfef532) and
# after (HEAD of this session), interleaved, our default flags, the bench model, llama-server
# beside each run (-c 65536 -np 8: --server-defaults --peer-parallel 8 --peer-ctx-size 8192).
# sf-old / sf-new are the two `superfluid` binaries, built from those trees on this machine.
set -x
D=${D:-/tmp/b39w}
M=$D/bench.gguf
for r in 1 2 3; do
  for v in old new; do
    $D/sf-$v bench priority --model $M --against llama-server --server-defaults --peer-parallel 8 --peer-ctx-size 8192 --runs 1 --out $D/prio-$v-$r --no-progress
  done
done
for r in 1 2; do
  for v in new old; do
    $D/sf-$v bench throughput --model $M --against llama-server --server-defaults --peer-parallel 8 --peer-ctx-size 8192 --concurrency 1 --concurrency 8 --no-journal-cost --runs 1 --out $D/tp-$v-$r --no-progress
  done
done
