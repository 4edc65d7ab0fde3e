#!/usr/bin/env bash
# The allreduce rows of doc/benchmarks.md, from one command:
#
#   scripts/bench-allreduce.sh [OUT_DIR]   (default doc/results/allreduce)
#
# Builds allreduce_bench (release preset), then:
#   p2.csv        P = 2, 2^18 doubles, +, uniform, density 0.0001 .. 1: times (median of 30)
#   p2_zipf.csv   the same with zipf supports
#   p4.csv, p8.csv  P = 4 and 8 (oversubscribed on 2 cores: bytes and
#                 messages are exact, times are not), 2^18, 0.001 / 0.01 / 0.1 / 1
# Every result is checked against MPI_Allreduce; the script fails on a mismatch.
# About 2 minutes on 2 cores; run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${1:-doc/results/allreduce}
mkdir -p "$out"
cmake --preset release >/dev/null
cmake --build --preset release -j2 --target allreduce_bench >/dev/null
bench=build/release/benchmark/allreduce_bench
{
    echo "# $(date -u '+%F %T UTC'), $(uptime | sed 's/.*load/load/')"
    mpiexec -n 2 "$bench" --csv "$out/p2.csv"
    mpiexec -n 2 "$bench" --dist zipf --density 0.001,0.01,0.1 --csv "$out/p2_zipf.csv"
    for np in 4 8; do
        mpiexec -n $np --oversubscribe "$bench" --density 0.001,0.01,0.1,1 --reps 3 --warmup 1 --csv "$out/p$np.csv"
    done
} | tee "$out/bench.log"
