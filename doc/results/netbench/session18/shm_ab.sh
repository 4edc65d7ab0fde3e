#!/usr/bin/env bash
# Dense whole messages in pieces (session 18) on shared memory, P = 2: A/B of
# sparse_reduce_bench built from the commit before the change (BASE, a build
# directory) and from this tree, sparse in/out (automatic
# [index_value_vector]: whole messages at P = 2), processes alternating.
#   BASE=/path/to/base/build/release DS="1 0.7 0.1" ROUNDS=4 doc/results/netbench/session18/shm_ab.sh
set -euo pipefail
: "${BASE:?BASE=the base build directory}"
DS=${DS:-1 0.7 0.1}
ROUNDS=${ROUNDS:-4}
for d in $DS; do
    for round in $(seq "$ROUNDS"); do
        echo "# density $d round $round load $(cut -d' ' -f1 /proc/loadavg)"
        for build in "$BASE" "$PWD/build/release"; do
            tag=$([[ $build == "$BASE" ]] && echo base || echo new)
            mpiexec -n 2 "$build/benchmark/sparse_reduce_bench" --dim 2097152 --density "$d" --quick --reps 15 --warmup 2 \
                --header 0 --only "automatic [index_value_vector]" 2>/dev/null | grep -F "automatic [index_value_vector]" |
                grep , | sed "s/^/$tag,/"
        done
    done
done
