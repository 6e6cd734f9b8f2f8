set -x
M=/tmp/b39/bench.gguf
for r in 3 4 5; do
  for v in new old; do
    /tmp/b39/sf-$v bench priority --model $M --against llama-server --server-defaults --peer-parallel 8 --peer-ctx-size 8192 --runs 1 --out /tmp/b39/prio-$v-$r --no-progress
  done
done
