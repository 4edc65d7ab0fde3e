#!/usr/bin/env bash
# P = 2, 10 Gbit/s, 100%, 2^21 doubles: MPI_Reduce; automatic (drop-in and sparse in/out) with this network's tuning file; the
# drop-in with the built-in tuning. The rows take turns, 3 rounds. Output: run10.txt (CSV rows of sparse_reduce_bench).
cd "$(dirname "$0")/../../../.."
b=build/release/benchmark/sparse_reduce_bench
T=$PWD/doc/results/netbench/tuning-10gbit.txt
for round in 1 2 3; do
  for cfg in mpi tuned builtin; do
    case $cfg in
      mpi) x=""; only=mpi_reduce ;;
      tuned) x="-x SPARSE_REDUCE_TUNING=$T"; only=automatic ;;
      builtin) x=""; only="automatic [span" ;;
    esac
    echo "## round=$round cfg=$cfg load=$(cut -d' ' -f1 /proc/loadavg)"
    timeout 600 scripts/netbench.sh -p 2 -r 10gbit -- $x $b --dim 2097152 --density 1 --quick --reps 11 --warmup 1 --header 0 --only "$only" 2>/dev/null
  done
done
