#!/usr/bin/env bash
# Issue 15's network rows in one run (session 23): MPI_Reduce, sparse in/out
# (automatic [index_value_vector]) and the drop-in (automatic [span drop-in])
# at P = 2, 4, 8; 1 %, 10 %, 100 % at 1 Gbit/s and 100 % at 10 Gbit/s; one
# mpirun per row, 9 repetitions after 1 warm-up, the 1-minute load before
# each cell. TUNING_DIR holds the network's tuning files (tuning-RATE.txt, and
# tuning-RATE-pP.txt where one exists for P). As root, from the repository's
# top, on an otherwise idle machine (about 10 minutes):
#   doc/results/netbench/session23/done_when.sh > OUT.txt
set -euo pipefail
bench=$PWD/build/release/benchmark/sparse_reduce_bench
dir=${TUNING_DIR:-doc/results/netbench}
[[ $dir == /* ]] || dir=$PWD/$dir
tuning() { # rate P
    if [[ -f $dir/tuning-$1-p$2.txt ]]; then echo "$dir/tuning-$1-p$2.txt"; else echo "$dir/tuning-$1.txt"; fi
}
cell() { # rate P density
    local tune; tune=$(tuning "$1" "$2")
    echo "# rate $1 P $2 density $3 tuning ${tune#$PWD/} load $(cut -d' ' -f1 /proc/loadavg)"
    for row in mpi_reduce "automatic [index_value_vector]" "automatic [span drop-in]"; do
        scripts/netbench.sh -p "$2" -r "$1" -- -x SPARSE_REDUCE_TUNING="$tune" "$bench" --dim 2097152 --density "$3" \
            --quick --reps 9 --warmup 1 --header 0 --only "$row" 2>/dev/null | grep -F "$row," || echo "$row,FAILED"
    done
}
for P in 2 4 8; do
    for d in 0.01 0.1 1; do cell 1gbit "$P" "$d"; done
    cell 10gbit "$P" 1
done
