#!/usr/bin/env bash
# What a call costs to compile (doc/benchmarks.md, "Compile cost"):
#
#   scripts/bench-compile.sh [OUT_MD]     (default doc/results/compile_cost.md)
#
# Compiles and links, one after another, the minimal programs of
# benchmark/compile_cost/ (one call each on Eigen::SparseVector<double>, one
# reduce of dense buffers, the umbrella header alone, and a Boost.MPI reduce
# of a std::vector<double> that includes the same Eigen headers; the automatic
# reduce again including only the collective's own header) with
#   BENCH_CXX -std=c++20 -O2 -I include -I /usr/include/eigen3 PROGRAM -lboost_mpi -lboost_serialization
# twice each, and writes (and prints) a markdown table of the better run: CPU seconds of
# the compiler and linker (user + sys, /usr/bin/time), their peak memory
# (maximum resident set of any of them) and the program's .text size
# (size -A). BENCH_CXX (environment): the compiler, default mpicxx; for g++ add
# MPI's flags, e.g.
#   BENCH_CXX="g++ $(mpicxx --showme:compile) $(mpicxx --showme:link)" scripts/bench-compile.sh
# About 3 minutes on 2 cores; run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C
cxx=${BENCH_CXX:-mpicxx}
out=${1:-doc/results/compile_cost.md}
mkdir -p "$(dirname "$out")"
[[ -x /usr/bin/time ]] || { echo "bench-compile.sh: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
programs=(boost_mpi_reduce umbrella reduce_automatic reduce_own_headers reduce_binomial reduce_dense plan allreduce reduce_scatter)
declare -A what=(
    [boost_mpi_reduce]="Boost.MPI reduce of std::vector<double>, Eigen headers included"
    [umbrella]="the umbrella header alone"
    [reduce_automatic]="one reduce, automatic"
    [reduce_own_headers]="the same, including only collective/reduce.hpp and repr/eigen.hpp"
    [reduce_binomial]="one reduce, policy::binomial{}"
    [reduce_dense]="one reduce of dense buffers (std::span drop-in), automatic"
    [plan]="make_plan + plan.reduce"
    [allreduce]="one allreduce"
    [reduce_scatter]="one reduce_scatter"
)
# reduce_own_headers: reduce_automatic.cpp with OWN_HEADERS defined
declare -A source=([reduce_own_headers]=reduce_automatic)
declare -A defines=([reduce_own_headers]=-DOWN_HEADERS)
{
echo "$cxx -std=c++20 -O2 ($($cxx --version | head -1)), $(date -u '+%F %T UTC'), load $(cut -d' ' -f1 /proc/loadavg) before"
echo
echo "| program | CPU s (user + sys) | peak memory MB | .text KB |"
echo "|---|---|---|---|"
for p in "${programs[@]}"; do
    best=""
    for run in 1 2; do
        # shellcheck disable=SC2086 # CXX may carry flags
        /usr/bin/time -o "$tmp/time" -f '%U %S %M' $cxx -std=c++20 -O2 ${defines[$p]:-} -I include -I /usr/include/eigen3 \
            "benchmark/compile_cost/${source[$p]:-$p}.cpp" -o "$tmp/$p" -lboost_mpi -lboost_serialization
        read -r u s m <"$tmp/time"
        cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        if [[ -z $best ]] || awk -v a="$cpu" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best="$cpu $m"; fi
    done
    text=$(size -A "$tmp/$p" | awk '$1 == ".text" { print $2 }')
    read -r cpu m <<<"$best"
    printf '| %s | %s | %.0f | %.0f |\n' "${what[$p]}" "$cpu" "$(awk -v m="$m" 'BEGIN { print m / 1024 }')" \
        "$(awk -v t="$text" 'BEGIN { print t / 1024 }')"
done
} | tee "$out"
