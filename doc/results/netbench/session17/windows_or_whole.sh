#!/usr/bin/env bash
# Session 17: sparse in/out (index_value_vector) on the shaped network, automatic
# (now weighing windows against whole messages at P > 2) beside binomial (whole
# messages, what automatic ran before at P = 8 with the network's tuning) and
# MPI_Reduce. From the worktree root, build/release built; as root.
set -u
cd "$(dirname "$0")/../../../.."
B=build/release/benchmark/sparse_reduce_bench
for RATE in ${RATES:-1gbit 10gbit}; do
  T=$PWD/doc/results/netbench/tuning-$RATE.txt
  for P in ${PS:-8}; do
    for D in ${DS:-0.1 0.3 1}; do
      for ROW in "automatic [index" "binomial [index" "mpi_reduce"; do
        [ "$ROW" = mpi_reduce ] && [ "$D" != 1 ] && continue # MPI_Reduce moves the dense vector at every density
        echo "## rate=$RATE P=$P d=$D row=$ROW load=$(cut -d' ' -f1 /proc/loadavg)"
        timeout 900 scripts/netbench.sh -p "$P" -r "$RATE" -- -x SPARSE_REDUCE_TUNING="$T" $B --dim 2097152 \
          --density "$D" --quick --reps 9 --warmup 1 --header 0 --only "$ROW" 2>/dev/null
      done
    done
  done
done
