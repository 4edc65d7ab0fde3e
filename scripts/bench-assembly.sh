#!/usr/bin/env bash
# Distributed vector assembly (assembly_bench): PETSc's VecSetValues +
# VecAssembly, with and without VEC_SUBSET_OFF_PROC_ENTRIES, against a
# hand-written sparse reduce_scatter (the floor) and
# sparse_reduce::reduce_scatter, from one command:
#
#   scripts/bench-assembly.sh [--matrix] [-p P] [-r RATE] [ROUNDS [OUT_DIR]]   (default 5, doc/results/assembly)
#
#   p2.csv      P = 2 on shared memory, 2^21 doubles, uniform supports,
#               densities 0.1 %, 1 %, 10 %: ROUNDS processes of 30
#               repetitions each, the rows taking turns within each
#   net-pP.csv  with -p P: also P hosts on this machine (scripts/netbench.sh,
#               links of RATE, default 1gbit), one rank each, Open MPI over
#               TCP, the library reading the network's tuning file
#               (SPARSE_REDUCE_TUNING: tuning-RATE[-pP].txt of TUNING_DIR,
#               default doc/results/netbench); ROUNDS processes of 10
#               repetitions. Needs root
#   matrix-p2.csv  with --matrix: also matrix assembly (matrix_assembly_bench,
#               P1 elements on a 1001 x 1001 grid), PETSc's MatSetValues +
#               MatAssembly and MatSetValuesCOO against the fixed-pattern
#               plan, P = 2 on shared memory: ROUNDS processes of 10
#               repetitions (about 10 s each)
# then per file and density the median over the rounds of each row's median
# and of its ratio to PETSc's faster row. Every result is checked against
# the floor's; a mismatch stops the script. Without PETSc (install it with
# scripts/install-deps.sh --petsc, then reconfigure) the PETSc rows are
# absent and the ratios are to the floor. About 10 s per round at P = 2; run
# it on an otherwise idle machine. BUILD_DIR: the build folder (default
# build/release).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
hosts='' rate=1gbit matrix=0
# --matrix is long, so taken out before getopts
args=()
for a in "$@"; do
    if [[ $a == --matrix ]]; then matrix=1; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
while getopts p:r: opt; do
    case $opt in
    p) hosts=$OPTARG ;;
    r) rate=$OPTARG ;;
    *) sed -n '7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
rounds=${1:-5}
out=${2:-doc/results/assembly}
[[ -z $hosts ]] || ((EUID == 0)) || { echo "bench-assembly.sh: -p needs root (network namespaces)" >&2; exit 77; }
mkdir -p "$out"
out=$(cd "$out" && pwd) # the ranks of a network run write it from their namespaces
source scripts/bench-run.sh
bench_build assembly_bench
bench=$PWD/$build/benchmark/assembly_bench
[[ $build == /* ]] && bench=$build/benchmark/assembly_bench
((matrix)) && bench_build matrix_assembly_bench
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# append FILE: the round's rows, one header per file
append() { if [[ -s $1 ]]; then tail -n +2 "$tmp" >>"$1"; else cp "$tmp" "$1"; fi; }

files=("$out/p2.csv")
rm -f "$out/p2.csv"
for ((i = 0; i < rounds; i++)); do
    mpiexec -n 2 "$bench" --reps 30 --csv "$tmp" >/dev/null || { echo "bench-assembly.sh: failed or mismatched" >&2; exit 1; }
    append "$out/p2.csv"
done
if [[ -n $hosts ]]; then
    files+=("$out/net-p$hosts.csv")
    rm -f "$out/net-p$hosts.csv"
    for ((i = 0; i < rounds; i++)); do
        scripts/netbench.sh -p "$hosts" -r "$rate" -- -x SPARSE_REDUCE_TUNING="$(network_tuning "$rate" "$hosts")" \
            "$bench" --reps 10 --warmup 2 --csv "$tmp" >/dev/null ||
            { echo "bench-assembly.sh: P = $hosts on the network failed or mismatched" >&2; exit 1; }
        append "$out/net-p$hosts.csv"
    done
fi
if ((matrix)); then
    rm -f "$out/matrix-p2.csv"
    for ((i = 0; i < rounds; i++)); do
        mpiexec -n 2 "${bench%/*}/matrix_assembly_bench" --reps 10 --csv "$tmp" >/dev/null ||
            { echo "bench-assembly.sh: matrix assembly failed or mismatched" >&2; exit 1; }
        append "$out/matrix-p2.csv"
    done
fi

python3 - "${files[@]}" <<'PY'
import csv, statistics, sys
for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    print(f"\n## {path}: P = {rows[0]['P']}, D = {rows[0]['D']}")
    for d in dict.fromkeys(r["density"] for r in rows):
        bases = " or ".join(sorted({r["ratio_to"] for r in rows if r["density"] == d}))
        print(f"\ndensity {d}, ratios to {bases} (the faster in each round)\n")
        print("| row | median ms | ratio | bytes |\n|---|---:|---:|---:|")
        for name in dict.fromkeys(r["row"] for r in rows if r["density"] == d):
            cell = [r for r in rows if r["density"] == d and r["row"] == name]
            ms = statistics.median(float(r["median_ms"]) for r in cell)
            ratio = statistics.median(float(r["ratio"]) for r in cell)
            print(f"| {name} | {ms:.3f} | {ratio:.2f}x | {cell[0]['bytes']} |")
PY
if ((matrix)); then
    python3 - "$out/matrix-p2.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bases = " or ".join(sorted({r["ratio_to"] for r in rows}))
print(f"\n## {sys.argv[1]}: P = {rows[0]['P']}, n = {rows[0]['n']} ({rows[0]['unknowns']} unknowns), "
      f"{rows[0]['coo_per_rank_max']} COO entries per rank at most\n\nratios to {bases} (the faster in each round)\n")
print("| row | setup ms | median ms | ratio | bytes |\n|---|---:|---:|---:|---:|")
for name in dict.fromkeys(r["row"] for r in rows):
    cell = [r for r in rows if r["row"] == name]
    setup = statistics.median(float(r["setup_ms"]) for r in cell)
    ms = statistics.median(float(r["median_ms"]) for r in cell)
    ratio = statistics.median(float(r["ratio"]) for r in cell)
    print(f"| {name} | {setup:.1f} | {ms:.3f} | {ratio:.2f}x | {cell[0]['bytes'] or '-'} |")
PY
fi
