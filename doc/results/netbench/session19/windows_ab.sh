#!/usr/bin/env bash
# The windowed root writes sparse outputs in place (session 19): A/B of
# sparse_reduce_bench built from the commit before the change (BASE, a
# build directory) and from this tree (build/release), sparse in/out
# (automatic [index_value_vector]: windows at P > 2 where the model
# prefers them) beside the drop-in and MPI_Reduce, on the shaped network
# of scripts/netbench.sh; session 18's script with these rows. As root,
# from the repository's top:
#   BASE=/path/to/base/build/release P=4 RATES=10gbit DS=1 ROUNDS=2 doc/results/netbench/session19/windows_ab.sh
#   BASE=... P=8 RATES=1gbit DS=0.1 TUNING=doc/results/netbench/tuning-1gbit-p8.txt doc/results/netbench/session19/windows_ab.sh
set -euo pipefail
P=${P:-4} ROUNDS=${ROUNDS:-2} EXTRA="automatic [span drop-in]" exec "$(dirname "$0")/../session18/pieces_ab.sh"
