#!/usr/bin/env bash
cd /work/main
b=build/release/benchmark/sparse_reduce_bench
for d in 1 0.1; do
  echo "## P=8 rate=1gbit d=$d tuned automatic load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p 8 -r 1gbit -- -x SPARSE_REDUCE_TUNING=$PWD/doc/results/netbench/tuning-1gbit.txt $b --dim 2097152 --density $d --quick --reps 9 --warmup 1 --header 0 --only "automatic" 2>/dev/null
  echo "## P=8 rate=1gbit d=$d mpi load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p 8 -r 1gbit -- $b --dim 2097152 --density $d --quick --reps 9 --warmup 1 --header 0 --only "mpi_reduce" 2>/dev/null
done
echo DONE
