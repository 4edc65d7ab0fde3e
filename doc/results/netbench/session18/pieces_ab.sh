#!/usr/bin/env bash
# Dense whole messages in pieces (session 18): A/B of sparse_reduce_bench
# built from the commit before the change (BASE, a build directory) and
# from this tree (build/release), sparse in/out (automatic
# [index_value_vector], whole messages at P = 2) beside MPI_Reduce, on the
# shaped network of scripts/netbench.sh. Processes alternate base / new.
# As root, from the repository's top:
#   BASE=/path/to/base/build/release RATES="10gbit 1gbit" DS="1 0.7" ROUNDS=3 doc/results/netbench/session18/pieces_ab.sh
# Also P (ranks, 2), TUNING (a tuning file instead of tuning-RATE.txt) and
# EXTRA (one more row of the new build, e.g. "automatic [span drop-in]").
set -euo pipefail
: "${BASE:?BASE=the base build directory}"
RATES=${RATES:-10gbit}
DS=${DS:-1}
ROUNDS=${ROUNDS:-3}
P=${P:-2}
for rate in $RATES; do
    tune=$PWD/${TUNING:-doc/results/netbench/tuning-${rate}.txt}
    for d in $DS; do
        for round in $(seq "$ROUNDS"); do
            echo "# P $P rate $rate density $d round $round tuning ${tune#$PWD/} load $(cut -d' ' -f1 /proc/loadavg)"
            run() { # tag build row
                scripts/netbench.sh -p "$P" -r "$rate" -- -x SPARSE_REDUCE_TUNING="$tune" "$2/benchmark/sparse_reduce_bench" \
                    --dim 2097152 --density "$d" --quick --reps 9 --warmup 1 --header 0 --only "$3" 2>/dev/null |
                    grep -F "$3" | grep , | sed "s/^/$1,/"
            }
            run base "$BASE" "automatic [index_value_vector]"
            run new "$PWD/build/release" "automatic [index_value_vector]"
            if [ -n "${EXTRA:-}" ]; then run new "$PWD/build/release" "$EXTRA"; fi
            run mpi "$PWD/build/release" "mpi_reduce"
        done
    done
done
