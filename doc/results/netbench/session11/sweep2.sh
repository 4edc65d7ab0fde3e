#!/usr/bin/env bash
cd /work/main
b=build/release/benchmark/sparse_reduce_bench
for d in 1 0.1; do
  echo "## P=8 rate=1gbit d=$d row=automatic load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p 8 -r 1gbit -- $b --dim 2097152 --density $d --quick --reps 9 --warmup 1 --header 0 --only "automatic [index" 2>/dev/null
done
echo "## P=4 rate=1gbit d=1 row=automatic load=$(cut -d' ' -f1 /proc/loadavg)"
timeout 900 scripts/netbench.sh -p 4 -r 1gbit -- $b --dim 2097152 --density 1 --quick --reps 9 --warmup 1 --header 0 --only "automatic [index" 2>/dev/null
for seg in 131072 1048576; do
  echo "## P=2 rate=10gbit d=1 seg=$seg load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p 2 -r 10gbit -- $b --dim 2097152 --density 1 --quick --reps 15 --warmup 1 --header 0 --segment $seg --only "binomial" 2>/dev/null
done
echo "## P=2 rate=10gbit d=1 mpi load=$(cut -d' ' -f1 /proc/loadavg)"
timeout 900 scripts/netbench.sh -p 2 -r 10gbit -- $b --dim 2097152 --density 1 --quick --reps 15 --warmup 1 --header 0 --only "mpi_reduce" 2>/dev/null
echo DONE
