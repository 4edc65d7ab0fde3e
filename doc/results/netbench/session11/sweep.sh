#!/usr/bin/env bash
cd /work/main
b=build/release/benchmark/sparse_reduce_bench
for P in 2 4 8; do
  for d in 0.01 0.1 1; do
    for r in mpi_reduce automatic; do
      echo "## P=$P rate=1gbit d=$d row=$r load=$(cut -d' ' -f1 /proc/loadavg)"
      timeout 900 scripts/netbench.sh -p $P -r 1gbit -- $b --dim 2097152 --density $d --quick --reps 9 --warmup 1 --header 0 --only "$r" 2>/dev/null
    done
  done
done
for d in 1; do for r in mpi_reduce automatic; do
  echo "## P=2 rate=10gbit d=$d row=$r load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p 2 -r 10gbit -- $b --dim 2097152 --density $d --quick --reps 9 --warmup 1 --header 0 --only "$r" 2>/dev/null
done; done
echo DONE
