#!/usr/bin/env bash
# Issue 15's shared-memory figures (doc/benchmarks.md, "The dense drop-in
# against MPI_Reduce and seed 003's pipeline"), from one command:
#
#   scripts/bench-dropin.sh [ROUNDS] [OUT_CSV]     (default 5, /tmp/bench-dropin.csv)
#
# P = 2, 2^21 doubles, +, uniform, densities 0.1% .. 100%. Each row runs in a
# process of its own (sparse_reduce_bench --only), the rows taking turns
# round after round, so a row is never timed after another row's allocations
# and a slow process shows as one outlier, not as a whole row. Prints, per
# density and row, the median over the rounds of each process's median of
# 30 calls, and the range. About 4 minutes with 5 rounds; run it on an
# otherwise idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${1:-5}
out=${2:-/tmp/bench-dropin.csv}
bench=build/release/benchmark/sparse_reduce_bench
cmake --build --preset release --target sparse_reduce_bench >/dev/null
: >"$out"
rows=("mpi_reduce" "seed003_pipeline" "automatic [span drop-in]" "oneshot automatic [span drop-in]")
for ((i = 0; i < rounds; i++)); do
    for d in 0.001 0.01 0.1 1; do
        for r in "${rows[@]}"; do # "seed003_pipeline" runs both of its rows
            mpiexec -n 2 "$bench" --dim $((1 << 21)) --density $d --quick --reps 30 --header 0 --only "$r" \
                2>/dev/null >>"$out"
        done
    done
done
python3 - "$out" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
times = defaultdict(list)
for r in csv.reader(open(sys.argv[1])):
    d = min((0.001, 0.01, 0.1, 1), key=lambda x: abs(float(r[4]) - x) / x)
    times[(r[0], d)].append(float(r[10]) / 1000)
names = ["mpi_reduce", "seed003_pipeline", "seed003_pipeline [P1 compresses]",
         "automatic [span drop-in]", "oneshot automatic [span drop-in]"]
print("| density | " + " | ".join(names) + " | drop-in (plan) / MPI_Reduce |")
print("|---" * (len(names) + 2) + "|")
for d in (0.001, 0.01, 0.1, 1):
    med = {n: statistics.median(times[(n, d)]) for n in names if times[(n, d)]}
    cells = [f"{med[n]:.2f} ms ({min(times[(n, d)]):.2f}–{max(times[(n, d)]):.2f})" if n in med else "" for n in names]
    ratio = med["automatic [span drop-in]"] / med["mpi_reduce"]
    print(f"| {d * 100:g}% | " + " | ".join(cells) + f" | {ratio:.2f} |")
EOF
