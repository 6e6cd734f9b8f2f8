#!/usr/bin/env bash
# Interleaved before/after benches of the worker-client seam, each against llama-server.
set -u
cd /tmp/rec
for round in 1 2; do
  for sc in throughput priority; do
    for v in before after; do
      [[ $round == 2 ]] && v2=$([[ $v == before ]] && echo after || echo before) || v2=$v
      echo "== round $round $sc $v2 $(date -u +%T)"
      /tmp/rec/$v2/superfluid bench $sc --model /tmp/rec/bench.gguf --against llama-server --runs 1 \
        --out /tmp/rec/out/$v2-$sc-$round --no-progress > /tmp/rec/out/$v2-$sc-$round.log 2>&1
      echo "   exit $?"
    done
  done
done
echo "== done $(date -u +%T)"
