#!/usr/bin/env bash
# Issue 13's measurements (doc/benchmarks.md, "The floor and the one-shot
# call"), from one command:
#
#   scripts/bench-floor.sh [OUT_DIR]      (default doc/results/floor)
#
#   p2_floor.csv  P = 2, 2^21 doubles, +, uniform, densities 0.1% .. 100%:
#                 MPI_Reduce, Boost.MPI, Gatherv, the floor, every plan and
#                 every one-shot row (Eigen in and out), 30 repetitions
#   p2_grid.csv   P = 2, C = 2^10, 2^14, 2^18, 2^21 x densities 0.1% .. 100%:
#                 the same rows (one-shot automatic against the best fixed
#                 one-shot policy, one-shot against a plan)
#   p4.csv, p8.csv  P = 4 and 8 (oversubscribed: bytes and messages exact,
#                 times not), 2^21, 0.1% / 1% / 10%, root P - 1
#   huge.txt      huge_dim_bench: 5 entries per rank in a dimension of 2^40,
#                 every policy, P = 2, 4, 8
#   tables.md     the CSV files as markdown tables (scripts/bench-tables.sh)
#   summary.md    the tables of doc/benchmarks.md (scripts/floor-tables.py)
# About 5 minutes on 2 cores; run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=${1:-doc/results/floor}
mkdir -p "$out"
rm -f "$out"/p*.csv "$out"/huge.txt

cmake --preset release >/dev/null
cmake --build --preset release -j2 --target sparse_reduce_bench huge_dim_bench >/dev/null
bench=build/release/benchmark/sparse_reduce_bench
log=$out/bench.log
: >"$log"

source scripts/bench-run.sh

big=$((1 << 21))
for d in 0.001 0.01 0.1 1; do
    run "$out/p2_floor.csv" 2 --dim $big --density $d --quick --reps 30
done
for e in 10 14 18; do
    for d in 0.001 0.01 0.1 1; do
        run "$out/p2_grid.csv" 2 --dim $((1 << e)) --density $d --quick --reps $((e < 18 ? 300 : 100))
    done
done
run_oversubscribed "$out"
for np in 2 4 8; do
    over=()
    ((np > 2)) && over=(--oversubscribe)
    mpiexec -n $np "${over[@]}" build/release/benchmark/huge_dim_bench --reps 20 | tee -a "$out/huge.txt"
done
scripts/bench-tables.sh "$out" >"$out/tables.md"
scripts/floor-tables.py "$out" >"$out/summary.md"
echo "bench-floor.sh: results in $out (summary.md: the tables of doc/benchmarks.md)"
