set -x
M=/tmp/rec/bench.gguf
for r in 1 2; do
  for v in old new; do
    /tmp/rec/sf-$v bench priority --model $M --server-defaults --runs 1 --out /tmp/b41/prio-$v-$r --no-progress
    /tmp/rec/sf-$v bench throughput --model $M --server-defaults --concurrency 1 --concurrency 8 --runs 1 --out /tmp/b41/tp-$v-$r --no-progress
  done
done
