#!/usr/bin/env bash
# reduce over a network of P hosts on this machine (doc/benchmarks.md, "A
# network of P hosts"): network namespaces, a bridge and tc tbf links
# (scripts/netbench.sh), one rank per host, Open MPI over TCP.
#
#   scripts/bench-network.sh [ROUNDS [OUT_CSV]]   (default 3, doc/results/network/reduce.csv)
#
# MPI_Reduce of the dense buffer, sparse_reduce on index_value_vector in and
# out (a plan, automatic) and the dense drop-in (std::span in and out, a plan,
# automatic), 2^21 doubles, +, uniform supports, root 0, at P = 2, 4, 8: 1 %,
# 10 % and 100 % at 1 Gbit/s and 100 % at 10 Gbit/s. One mpirun per row (9
# timed calls after 1 warm-up), the rows taking turns, ROUNDS rounds; then
# the table (per cell the median over the rounds; in brackets how many times
# faster than MPI_Reduce, the median over the rounds of the ratio in the same
# round). With more hosts than the machine's 2 cores the ranks share cores
# (netbench.sh lets idle ranks sleep); the 1 Gbit/s links dominate the time.
# TUNING_DIR holds the network's tuning files for automatic (tuning-RATE.txt,
# and tuning-RATE-pP.txt where one exists for P; default doc/results/netbench).
# As root (network namespaces), from anywhere; about 2 minutes per round; run
# it on an otherwise idle machine. BUILD_DIR: the build folder (default
# build/release). The namespaces are deleted when each run ends.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_NUMERIC=C
rounds=${1:-3}
out=${2:-doc/results/network/reduce.csv}
((EUID == 0)) || { echo "bench-network.sh: needs root (network namespaces)" >&2; exit 77; }
mkdir -p "$(dirname "$out")"
source scripts/bench-run.sh
bench_build sparse_reduce_bench
bench=$PWD/$build/benchmark/sparse_reduce_bench
[[ $build == /* ]] && bench=$build/benchmark/sparse_reduce_bench
echo "rate,P,round,tuning,load,algorithm,wire,ranks,dim,density,dist,type,op,root,min_us,median_us,max_us,bytes,messages,lower_bound_us,ratio_to_bound,speedup_vs_mpi_reduce,check,ratio_to_floor,minflt_per_call" >"$out"
cell() { # rate P density round
    local tune row line load
    tune=$(network_tuning "$1" "$2")
    for row in mpi_reduce "automatic [index_value_vector]" "automatic [span drop-in]"; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        line=$(scripts/netbench.sh -p "$2" -r "$1" -- -x SPARSE_REDUCE_TUNING="$tune" "$bench" --dim 2097152 \
            --density "$3" --quick --reps 9 --warmup 1 --header 0 --only "$row" 2>/dev/null | grep -F "$row,") ||
            { echo "bench-network.sh: $row at $1, P = $2, density $3 failed" >&2; exit 1; }
        echo "$1,$2,$4,${tune#$PWD/},$load,$line" >>"$out"
    done
}
for ((i = 0; i < rounds; i++)); do
    for P in 2 4 8; do
        for d in 0.01 0.1 1; do cell 1gbit "$P" "$d" "$i"; done
        cell 10gbit "$P" 1 "$i"
    done
done
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["check"] != "ok"]
if bad:
    sys.exit(f"{len(bad)} rows differ from MPI_Reduce")
t = {}
for r in rows:
    d = min((0.01, 0.1, 1.0), key=lambda x: abs(float(r["density"]) - x) / x)
    t.setdefault((r["rate"], int(r["P"]), d), {}).setdefault(r["algorithm"], {})[r["round"]] = r
n = len({r["round"] for r in rows})
print(f"2^21 doubles, +, uniform, root 0; ms, the median of {n} rounds of 9 calls; in brackets how many times "
      "faster than MPI_Reduce; MB: bytes sent, all ranks (the sparse row's / the drop-in's)\n")
print("| link | P | density | MPI_Reduce | sparse in/out | drop-in | MB sparse / drop-in (MPI_Reduce: 16.8 × (P − 1)) |")
print("|---|---|---|---|---|---|---|")
def med(x): return statistics.median(x)
def ms(x): return f"{x:.0f}" if x >= 100 else f"{x:.3g}"
for key in sorted(t, key=lambda k: (k[0] != "1gbit", k[1], k[2])):
    c = t[key]
    mpi = c["mpi_reduce"]
    def cell(name):
        x = c[name]
        time = med(float(r["median_us"]) for r in x.values()) / 1000
        speed = med(float(mpi[k]["median_us"]) / float(r["median_us"]) for k, r in x.items() if k in mpi)
        return f"{ms(time)} ({speed:.2f}×)" if speed < 10 else f"{ms(time)} ({speed:.0f}×)"
    mb = " / ".join(f"{med(float(r['bytes']) for r in c[n].values()) / 1e6:.3g}"
                    for n in ("automatic [index_value_vector]", "automatic [span drop-in]"))
    rate = key[0].replace("gbit", " Gbit/s")
    print(f"| {rate} | {key[1]} | {key[2] * 100:g} % | {ms(med(float(r['median_us']) for r in mpi.values()) / 1000)} | "
          f"{cell('automatic [index_value_vector]')} | {cell('automatic [span drop-in]')} | {mb} |")
PY
