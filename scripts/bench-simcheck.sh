#!/usr/bin/env bash
# The simulator against the shaped network (doc/selection.md, "Validation on
# the shaped network"): binomial, chain and two_tree, sparse in/out
# (index_value_vector, adaptive wire: whole messages), 2^21 doubles, 1 %,
# 10 %, 100 %, P = 2, 4, 8 at 1 Gbit/s; one mpirun per cell, 11 repetitions
# after 1 warm-up, the 1-minute load before each cell. Then the predictions
# with the tuning files (tuning-1gbit-pP.txt where it exists, else
# tuning-1gbit.txt) of TUNING_DIR (default doc/results/netbench).
# PREDICT_ONLY=1 skips the measurement. As root, from the repository's top,
# on an otherwise idle machine (about 10 minutes):
#   TUNING_DIR=doc/results/netbench/tuned scripts/bench-simcheck.sh > doc/results/netbench/simcheck.txt
set -euo pipefail
bench=build/release/benchmark/sparse_reduce_bench
dir=${TUNING_DIR:-doc/results/netbench}
tuning() { if [[ -f $dir/tuning-1gbit-p$1.txt ]]; then echo "$dir/tuning-1gbit-p$1.txt"; else echo "$dir/tuning-1gbit.txt"; fi; }
if [[ -z ${PREDICT_ONLY:-} ]]; then
    echo "# measured: P density tree min_us,median_us,max_us,bytes,messages load"
    for P in 2 4 8; do
        for d in 0.01 0.1 1; do
            for tree in binomial chain two_tree; do
                load=$(cut -d' ' -f1 /proc/loadavg)
                row=$(scripts/netbench.sh -p "$P" -r 1gbit -- "$bench" --dim 2097152 --density "$d" --quick --reps 11 \
                    --warmup 1 --header 0 --only "$tree [index_value_vector]" 2>/dev/null | grep "^$tree \[index_value_vector\]," | head -1)
                echo "P$P $d $tree $(cut -d, -f10-14 <<<"$row") load $load"
            done
        done
    done
fi
echo "# predicted with $dir: algorithm,wire,P,dim,density,dist,network,modelled_us,bytes,messages"
for P in 2 4 8; do
    for d in 0.01 0.1 1; do
        "$bench" --simulate "$P" --net tuning --tuning "$(tuning "$P")" --sim-out sparse --dim 2097152 --density "$d" \
            --header 0 2>/dev/null | grep -E "^(binomial|chain|two_tree)," | cut -d, -f1-10
    done
done
