#!/usr/bin/env bash
# The dense drop-in on shared memory (doc/benchmarks.md, "The dense drop-in"):
#
#   scripts/bench-dropin.sh [ROUNDS [OUT_DIR]]   (default 5, doc/results/reduce)
#
#   p2_dropin.csv  P = 2, 2^21 doubles, +, uniform, densities 0.1 % .. 100 %:
#                  MPI_Reduce, the RLE pipeline of Hofmann and Rünger 2008
#                  (a chain, zero runs encoded into the fold, 1 MiB blocks; as
#                  published, and with its first rank compressing too), and
#                  sparse_reduce on std::span buffers with zeros: a plan's
#                  reduce and the one-shot reduce (automatic); ROUNDS rounds,
#                  the rows taking turns, each row a process of its own
# and prints the table of doc/benchmarks.md (scripts/reduce-tables.py).
# Every result is checked against MPI_Reduce's; a mismatch stops the script.
# About 4 minutes with 5 rounds; run it on an otherwise idle machine.
# BUILD_DIR: the build folder (default build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rounds=${1:-5}
out=${2:-doc/results/reduce}
mkdir -p "$out"
source scripts/bench-run.sh
bench_build sparse_reduce_bench
bench=$build/benchmark/sparse_reduce_bench
log=$out/bench-dropin.log
echo "# $(date -u '+%F %T UTC'), $(uptime | sed 's/.*load/load/')" >"$log"
rm -f "$out"/p2_dropin.csv
# "RLE pipeline" runs both of its rows
run_rounds "$out/p2_dropin.csv" "$rounds" mpi_reduce "RLE pipeline" "automatic [span drop-in]" \
    "oneshot automatic [span drop-in]"
scripts/reduce-tables.py dropin "$out"
