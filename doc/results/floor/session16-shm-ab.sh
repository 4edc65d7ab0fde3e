#!/usr/bin/env bash
source /tmp/env.sh
cd /tmp
for k in 1 2 3; do
  for d in ${DS:-0.1 0.3}; do
    for v in base new; do
      if [ $v = base ]; then B=/tmp/ab-base/build/benchmark; else B=/work/main/build/release/benchmark; fi
      echo "## round=$k d=$d build=$v reduce load=$(cut -d' ' -f1 /proc/loadavg)"
      timeout 600 mpiexec -n 2 --bind-to none $B/sparse_reduce_bench --dim 2097152 --density $d --quick --reps 30 --header 0 --only automatic 2>/dev/null | cut -d, -f1,2,11,13,14
      echo "## round=$k d=$d build=$v allreduce"
      timeout 600 mpiexec -n 2 --bind-to none $B/allreduce_bench --dim 262144 --density $d --repr dense --reps 200 --only automatic 2>/dev/null | tail -2 | head -1
    done
  done
done
echo DONE
