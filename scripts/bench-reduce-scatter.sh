#!/usr/bin/env bash
# reduce_scatter against MPI_Reduce_scatter and a hand-written sparse
# reduce_scatter (doc/benchmarks.md, "reduce_scatter"), from one command:
#
#   scripts/bench-reduce-scatter.sh [ROUNDS [OUT_DIR]]   (default 5, doc/results/reduce_scatter)
#
#   p2.csv   P = 2, 2^21 doubles, +, uniform, densities 0.1 % .. 100 %, block
#            ranges: MPI_Reduce_scatter of the dense buffer, the floor
#            (MPI_Alltoallv of index/value pairs + merge), and
#            sparse_reduce::reduce_scatter on index_value_vector, on
#            Eigen::SparseVector and on a dense std::span input; ROUNDS
#            processes, the rows taking turns call by call within each
#   p4.csv, p8.csv  P = 4 and 8, one process (oversubscribed on 2 cores:
#            times are not meaningful; payload bytes are exact)
# then the table (scripts/reduce-scatter-tables.py). Every result is checked
# against MPI_Reduce_scatter's; a mismatch stops the script. About half a minute
# with 5 rounds; run it on an otherwise idle machine.
# BUILD_DIR: the build folder (default build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${1:-5}
out=${2:-doc/results/reduce_scatter}
mkdir -p "$out"
source scripts/bench-run.sh
bench_build reduce_scatter_bench
bench=$build/benchmark/reduce_scatter_bench
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
rm -f "$out"/p2.csv "$out"/p4.csv "$out"/p8.csv
for ((i = 0; i < rounds; i++)); do
    mpiexec -n 2 "$bench" --csv "$tmp" >/dev/null || { echo "bench-reduce-scatter.sh: failed or mismatched" >&2; exit 1; }
    if [[ -s $out/p2.csv ]]; then tail -n +2 "$tmp" >>"$out/p2.csv"; else cp "$tmp" "$out/p2.csv"; fi
done
for np in 4 8; do
    mpiexec -n $np --oversubscribe "$bench" --density 0.001,0.01,0.1 --reps 3 --warmup 1 --csv "$out/p$np.csv" >/dev/null ||
        { echo "bench-reduce-scatter.sh: P = $np failed or mismatched" >&2; exit 1; }
done
scripts/reduce-scatter-tables.py "$out"
