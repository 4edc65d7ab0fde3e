#!/usr/bin/env bash
# A/B on the shaped network: base (HEAD before) vs new, P hosts, rate, density, rows; rounds alternate.
cd /work/main
P=${P:-8}; RATE=${RATE:-1gbit}; D=${D:-0.1}; ROUNDS=${ROUNDS:-3}; REPS=${REPS:-9}
T=$PWD/doc/results/netbench/tuning-1gbit.txt
for k in $(seq 1 $ROUNDS); do
  for v in base new; do
    if [ $v = base ]; then b=/tmp/ab-base/build/benchmark/sparse_reduce_bench; else b=build/release/benchmark/sparse_reduce_bench; fi
    for tun in default net; do
      x=""; [ $tun = net ] && x="-x SPARSE_REDUCE_TUNING=$T"
      echo "## round=$k build=$v tuning=$tun P=$P rate=$RATE d=$D load=$(cut -d' ' -f1 /proc/loadavg)"
      timeout 900 scripts/netbench.sh -p $P -r $RATE -- $x $b --dim 2097152 --density $D --quick --reps $REPS --warmup 1 --header 0 --only "automatic" 2>/dev/null
    done
  done
  echo "## round=$k mpi_reduce load=$(cut -d' ' -f1 /proc/loadavg)"
  timeout 900 scripts/netbench.sh -p $P -r $RATE -- build/release/benchmark/sparse_reduce_bench --dim 2097152 --density $D --quick --reps $REPS --warmup 1 --header 0 --only "mpi_reduce" 2>/dev/null
done
echo DONE
