#!/usr/bin/env bash
# reduce of sparse vectors on shared memory (doc/benchmarks.md, "reduce"):
#
#   scripts/bench-floor.sh [ROUNDS [OUT_DIR]]   (default 5, doc/results/reduce)
#
#   p2_sparse.csv  P = 2, 2^21 doubles, +, uniform, densities 0.1 % .. 100 %:
#                  MPI_Reduce of the dense buffer, Boost.MPI (serialised sparse
#                  vectors), MPI_Gatherv + merge, the floor (a hand-written
#                  sparse reduce), sparse_reduce::reduce on Eigen::SparseVector
#                  (one-shot, automatic) and a plan's reduce on
#                  index_value_vector (automatic); ROUNDS rounds, the rows
#                  taking turns, each row a process of its own
#   p4.csv, p8.csv P = 4 and 8 (oversubscribed on 2 cores: bytes and messages
#                  exact, times not), 0.1 % / 1 % / 10 %, root P - 1, every row
#   huge.txt       huge_dim_bench: 5 entries per rank in a dimension of 2^40,
#                  every reduce and allreduce policy, P = 2, 4, 8
# and prints the tables of doc/benchmarks.md (scripts/reduce-tables.py).
# Every result is checked against MPI_Reduce's; a mismatch stops the script.
# About 8 minutes with 5 rounds; run it on an otherwise idle machine.
# BUILD_DIR: the build folder (default build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${1:-5}
out=${2:-doc/results/reduce}
mkdir -p "$out"
source scripts/bench-run.sh
bench_build sparse_reduce_bench huge_dim_bench
bench=$build/benchmark/sparse_reduce_bench
log=$out/bench.log
echo "# $(date -u '+%F %T UTC'), $(uptime | sed 's/.*load/load/')" >"$log"
rm -f "$out"/p2_sparse.csv "$out"/p4.csv "$out"/p8.csv "$out"/huge.txt

run_rounds "$out/p2_sparse.csv" "$rounds" mpi_reduce boost_serialized gatherv_merge floor \
    "oneshot automatic [Eigen]" "automatic [index_value_vector]"
run_oversubscribed "$out"
for np in 2 4 8; do
    over=()
    ((np > 2)) && over=(--oversubscribe)
    mpiexec -n $np "${over[@]}" "$build/benchmark/huge_dim_bench" --reps 20 >>"$out/huge.txt"
done
scripts/reduce-tables.py sparse "$out"
