#!/usr/bin/env bash
# Every row of sparse_reduce_bench over many cells, from one command:
#
#   scripts/bench.sh [OUT_DIR [all|real|sim]]   (default BUILD_DIR/bench-results all)
#
# real: the runs under mpiexec; sim: the simulator's (deterministic, so they
# may run beside other work); all: both, then the tables and the plots.
# Builds sparse_reduce_bench (BUILD_DIR, default build/release), then runs:
#   p2_density.csv   P = 2, 2^21 doubles, +, uniform, density 0.0001 .. 1
#   p2_dist.csv      P = 2, 2^21, densities 0.001 / 0.01 / 0.1, zipf and identical
#   p2_wires.csv     P = 2, 2^21, density 0.01: every policy x wire format
#   p2_types.csv     P = 2, 2^21, density 0.01: float and int64, + and max
#   p2_size.csv      P = 2, density 0.01 and 0.001, 2^14 .. 2^23 doubles
#   p2_fem.csv       P = 2, FEM-like vectors (Hofmann and Rünger 2008),
#                    564 * 2^s nodes, s = 0 .. 12
#   p4.csv, p8.csv   P = 4 and 8 (oversubscribed on 2 cores: bytes and
#                    messages are exact, times are not), 2^21, 0.001 / 0.01 / 0.1
#   sim_ib.csv, sim_10g.csv
#                    the simulator, P = 64, 256, 1024 and 4096 at 2^18,
#                    densities 0.001 / 0.01 / 0.1, with this repository's
#                    tuning (doc/results/tuning.txt)
#   tables.md        every file as markdown tables (scripts/bench-tables.sh)
# and draws latency_vs_density.png, speedup_vs_size.png and fem.png in
# OUT_DIR with gnuplot (scripts/plot-bench.sh). Every result is checked
# against MPI_Reduce's. About 15 minutes on 2 cores; run it on an otherwise
# idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
source scripts/bench-run.sh
out=${1:-$build/bench-results}
parts=${2:-all}
mkdir -p "$out"
bench_build sparse_reduce_bench
bench=$build/benchmark/sparse_reduce_bench
log=$out/bench.log
: >"$log"

big=$((1 << 21))
if [[ $parts != sim ]]; then
rm -f "$out"/p*.csv
for d in 0.0001 0.0003 0.001 0.003 0.01 0.03 0.1 0.3 1; do
    run "$out/p2_density.csv" 2 --dim $big --density $d --quick
done
for dist in zipf identical; do
    for d in 0.001 0.01 0.1; do
        run "$out/p2_dist.csv" 2 --dim $big --density $d --dist $dist --quick
    done
done
run "$out/p2_wires.csv" 2 --dim $big --density 0.01
for t in float int64; do
    for op in sum max; do
        run "$out/p2_types.csv" 2 --dim $big --density 0.01 --type $t --op $op --quick
    done
done
for d in 0.01 0.001; do
    for e in 14 15 16 17 18 19 20 21 22 23; do
        run "$out/p2_size.csv" 2 --dim $((1 << e)) --density $d --quick --reps $((e < 20 ? 50 : 15))
    done
done
for s in 0 1 2 3 4 5 6 7 8 9 10 11 12; do
    run "$out/p2_fem.csv" 2 --dim $((564 << s)) --dist fem --quick --reps 30
done
run_oversubscribed "$out"
fi
if [[ $parts != real ]]; then
rm -f "$out"/sim_*.csv
for net in ib 10g; do
    for d in 0.001 0.01 0.1; do
        file=$out/sim_$net.csv header=1
        [[ -s $file ]] && header=0
        echo "$bench --simulate 64,256,1024,4096 --dim 262144 --density $d --net $net" | tee -a "$log" >&2
        "$bench" --simulate 64,256,1024,4096 --dim 262144 --density "$d" --net "$net" \
            --tuning doc/results/tuning.txt --header $header >>"$file" 2>>"$log"
    done
done
fi
scripts/bench-tables.sh "$out" >"$out/tables.md"
scripts/plot-bench.sh "$out"
echo "bench.sh: results and plots in $out"
