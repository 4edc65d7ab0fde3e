#!/usr/bin/env bash
# allreduce against MPI_Allreduce and allgather + coalesce (doc/benchmarks.md,
# "allreduce"; doc/allreduce.md), from one command:
#
#   scripts/bench-allreduce.sh [OUT_DIR [headline|sweep|all [ROUNDS]]]
#                              (default doc/results/allreduce all 5)
#
# headline: p2_c21.csv  P = 2, 2^21 doubles, +, uniform, densities 0.1 % ..
#           100 %: MPI_Allreduce of the dense buffer, allgather + coalesce
#           (what PyTorch and Horovod do for sparse tensors) and automatic,
#           sparse in and out (index_value_vector) and the dense drop-in;
#           ROUNDS rounds, each row a process of its own (the table: medians
#           over the rounds; how many times faster than MPI_Allreduce's
#           process in the same round). The CSV's vs_mpi_allreduce column is
#           allreduce_bench's own ratio: each repetition of the row over one
#           of MPI_Allreduce timed right before it in the same process.
# sweep:    p2.csv        P = 2, 2^18 doubles, density 0.0001 .. 1, every algorithm
#           p2_zipf.csv   the same with zipf supports
#           p4.csv, p8.csv  P = 4 and 8 (oversubscribed on 2 cores: bytes and
#                         messages are exact, times are not), 2^18, 0.001 .. 1
# then the tables (scripts/allreduce-tables.py). Every result is checked
# against MPI_Allreduce; the script fails on a mismatch. About 3 minutes for
# the headline with 5 rounds, 2 for the sweep; run it on an otherwise idle
# machine. BUILD_DIR: the build folder (default build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${1:-doc/results/allreduce}
parts=${2:-all}
rounds=${3:-5}
mkdir -p "$out"
source scripts/bench-run.sh
bench_build allreduce_bench
bench=$build/benchmark/allreduce_bench
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if [[ $parts != sweep ]]; then
    rm -f "$out/p2_c21.csv"
    for ((i = 0; i < rounds; i++)); do
        for row in MPI allgather automatic; do
            mpiexec -n 2 "$bench" --dim $((1 << 21)) --density 0.001,0.01,0.1,1 --only "$row" --csv "$tmp" >/dev/null ||
                { echo "bench-allreduce.sh: $row failed or mismatched" >&2; exit 1; }
            if [[ -s $out/p2_c21.csv ]]; then tail -n +2 "$tmp" >>"$out/p2_c21.csv"; else cp "$tmp" "$out/p2_c21.csv"; fi
        done
    done
fi
if [[ $parts != headline ]]; then
    {
        echo "# $(date -u '+%F %T UTC'), $(uptime | sed 's/.*load/load/')"
        mpiexec -n 2 "$bench" --csv "$out/p2.csv"
        mpiexec -n 2 "$bench" --dist zipf --density 0.001,0.01,0.1 --csv "$out/p2_zipf.csv"
        for np in 4 8; do
            mpiexec -n $np --oversubscribe "$bench" --density 0.001,0.01,0.1,1 --reps 3 --warmup 1 --csv "$out/p$np.csv"
        done
    } | tee "$out/bench.log"
fi
scripts/allreduce-tables.py "$out"
