#!/usr/bin/env bash
# What a call costs to compile (doc/benchmarks.md, "Compile cost"):
#
#   scripts/bench-compile.sh [OUT_MD]     (default doc/results/compile_cost.md)
#
# Compiles and links the minimal programs of benchmark/compile_cost/ (one
# call each on Eigen::SparseVector<double>, one reduce of dense buffers,
# three representations, the umbrella header alone, and a Boost.MPI reduce
# of a std::vector<double> that includes the same Eigen headers; the
# automatic reduce again including only the collective's own header, both
# in the compiled mode, and there once more including only the compiled
# mode's front) with
#   BENCH_CXX -std=c++20 -O2 -I include -I /usr/include/eigen3 PROGRAM -lboost_mpi -lboost_serialization
# in ROUNDS rounds (below), and writes (and prints) a markdown table: CPU
# seconds of the compiler and linker (user + sys, /usr/bin/time), their peak
# memory (maximum resident set of any of them), both also as a multiple of
# the Boost.MPI program's, and the program's .text size (size -A; in the
# compiled mode it holds what the program links of the library).
# BENCH_CXX (environment): the compiler, default mpicxx; for g++ add MPI's
# flags, e.g.
#   BENCH_CXX="g++ $(mpicxx --showme:compile) $(mpicxx --showme:link)" scripts/bench-compile.sh
# About 7 minutes on 2 cores (ROUNDS=3); run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C
cxx=${BENCH_CXX:-mpicxx}
out=${1:-doc/results/compile_cost.md}
mkdir -p "$(dirname "$out")"
[[ -x /usr/bin/time ]] || { echo "bench-compile.sh: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
programs=(boost_mpi_reduce umbrella reduce_automatic reduce_own_headers compiled compiled_own_headers compiled_front
          three_representations reduce_binomial reduce_any reduce_dense plan allreduce reduce_scatter pattern_plan)
declare -A what=(
    [boost_mpi_reduce]="Boost.MPI reduce of std::vector<double>, Eigen headers included"
    [umbrella]="the umbrella header alone"
    [reduce_automatic]="one reduce, automatic"
    [reduce_own_headers]="the same, including only collective/reduce.hpp and repr/eigen.hpp"
    [compiled]="one reduce, automatic, compiled mode (SparseReduce::compiled)"
    [compiled_own_headers]="the same, including only collective/reduce.hpp and repr/eigen.hpp"
    [compiled_front]="the same, including only the compiled mode's front, sparse_reduce/compiled.hpp"
    [three_representations]="three reduces: Eigen::SparseVector, index_value_vector, dense buffers"
    [reduce_binomial]="one reduce, policy::binomial{}"
    [reduce_any]="one reduce, policy::any (a tree chosen at run time)"
    [reduce_dense]="one reduce of dense buffers (std::span drop-in), automatic"
    [plan]="make_plan + plan.reduce"
    [allreduce]="one allreduce"
    [reduce_scatter]="one reduce_scatter"
    [pattern_plan]="make_pattern_plan + plan.reduce"
)
# reduce_own_headers: reduce_automatic.cpp with OWN_HEADERS defined;
# compiled*: the same in the compiled mode (compiled_front: with
# COMPILED_FRONT defined), linked with the compiled mode's
# library, built from src/ beforehand (not counted: a project builds it once)
declare -A source=([reduce_own_headers]=reduce_automatic [compiled]=reduce_automatic
                   [compiled_own_headers]=reduce_automatic [compiled_front]=reduce_automatic)
declare -A defines=([reduce_own_headers]=-DOWN_HEADERS [compiled]=-DSPARSE_REDUCE_COMPILED
                    [compiled_own_headers]="-DSPARSE_REDUCE_COMPILED -DOWN_HEADERS"
                    [compiled_front]="-DSPARSE_REDUCE_COMPILED -DCOMPILED_FRONT")
declare -A libraries=([compiled]="$tmp/libsparse_reduce_compiled.a"
                      [compiled_own_headers]="$tmp/libsparse_reduce_compiled.a"
                      [compiled_front]="$tmp/libsparse_reduce_compiled.a")
echo "building the compiled mode's library (src/, not counted)" >&2
# shellcheck disable=SC2016 # $1 and $0 are the inner shell's
printf '%s\n' src/*.cpp | xargs -P 2 -I{} sh -c '$0 -std=c++20 -O2 -DSPARSE_REDUCE_COMPILED -I include -I /usr/include/eigen3 -c "$1" -o "$2/$(basename "$1" .cpp).o"' "$cxx" {} "$tmp"
ar rcs "$tmp/libsparse_reduce_compiled.a" "$tmp"/*.o
# ROUNDS rounds (default 3); each round compiles every program once, in a
# new order: a program that always ran after another would be timed on a
# machine in another state. Per program: the least CPU time of the rounds
# (this machine's CPU time moves by up to a third from run to run; the least
# holds best), the median, the peak memory and .text.
rounds=${ROUNDS:-3}
declare -A cpus mem
for ((r = 1; r <= rounds; r++)); do
    for p in $(printf '%s\n' "${programs[@]}" | shuf --random-source=<(yes "$r")); do
        # shellcheck disable=SC2086 # CXX may carry flags
        /usr/bin/time -o "$tmp/time" -f '%U %S %M' $cxx -std=c++20 -O2 ${defines[$p]:-} -I include -I /usr/include/eigen3 \
            "benchmark/compile_cost/${source[$p]:-$p}.cpp" -o "$tmp/$p" ${libraries[$p]:-} -lboost_mpi -lboost_serialization
        read -r u s m <"$tmp/time"
        cpus[$p]+="$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
        ((m > ${mem[$p]:-0})) && mem[$p]=$m
    done
done
least() { tr ' ' '\n' <<<"$1" | grep . | sort -g | head -1; }
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
base=$(least "${cpus[boost_mpi_reduce]}")
{
echo "$cxx -std=c++20 -O2 ($($cxx --version | head -1)), $(date -u '+%F %T UTC'), $rounds rounds"
echo
echo "| program | CPU s, least (median) | × Boost.MPI | peak memory MB | × Boost.MPI | .text KB |"
echo "|---|---|---|---|---|---|"
for p in "${programs[@]}"; do
    text=$(size -A "$tmp/$p" | awk '$1 == ".text" { print $2 }')
    cpu=$(least "${cpus[$p]}")
    awk -v w="${what[$p]}" -v c="$cpu" -v med="$(median "${cpus[$p]}")" -v b="$base" -v m="${mem[$p]}" \
        -v bm="${mem[boost_mpi_reduce]}" -v t="$text" \
        'BEGIN { printf "| %s | %.2f (%.2f) | %.2f | %.0f | %.2f | %.0f |\n", w, c, med, c / b, m / 1024, m / bm, t / 1024 }'
done
} | tee "$out"
