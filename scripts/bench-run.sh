# Sourced by the scripts/bench*.sh scripts.
#
# BUILD_DIR (environment): the build folder, default build/release; configured
# with the release preset when it has no CMakeCache.txt yet.
build=${BUILD_DIR:-build/release}

# bench_build TARGET...: configures $build if needed and builds the targets.
bench_build() {
    [[ -f $build/CMakeCache.txt ]] || cmake --preset release -B "$build" >/dev/null
    cmake --build "$build" -j2 --target "$@" >/dev/null
}

# network_tuning RATE P: the tuning file of the network of scripts/netbench.sh
# at RATE for P hosts, tuning-RATE-pP.txt where it exists, else
# tuning-RATE.txt, in TUNING_DIR (environment; default doc/results/netbench),
# as an absolute path (the ranks read it from their namespaces).
network_tuning() {
    local dir=${TUNING_DIR:-doc/results/netbench}
    [[ $dir == /* ]] || dir=$PWD/$dir
    if [[ -f $dir/tuning-$1-p$2.txt ]]; then echo "$dir/tuning-$1-p$2.txt"; else echo "$dir/tuning-$1.txt"; fi
}

# run FILE NP ARGS...: runs $bench on NP ranks and appends its CSV rows (one
# header per file) to FILE, the command and the tables to $log.
run() {
    local file=$1 np=$2
    shift 2
    local header=1
    [[ -s $file ]] && header=0
    # --oversubscribe only where needed: with it Open MPI neither binds nor
    # busy-polls, and P = 2 runs 1.5-2x slower
    local over=()
    ((np > 2)) && over=(--oversubscribe)
    echo "mpiexec -n $np ${over[*]} $bench $* --header $header" | tee -a "$log" >&2
    mpiexec -n "$np" "${over[@]}" "$bench" "$@" --header "$header" >>"$file" 2>>"$log"
}

# run_rounds FILE ROUNDS ROW...: P = 2, 2^21 doubles, +, uniform, densities
# 0.1 %, 1 %, 10 %, 100 %; each row of sparse_reduce_bench in a process of its
# own (--only ROW, 30 timed calls after 3 warm-up calls), the rows taking
# turns, round after round, so every row sees the same states of the machine
# and a slow process shows as one outlier, not as a whole row. CSV rows
# without a header, appended to FILE.
run_rounds() {
    local file=$1 rounds=$2 i d row
    shift 2
    for ((i = 0; i < rounds; i++)); do
        for d in 0.001 0.01 0.1 1; do
            for row in "$@"; do
                mpiexec -n 2 "$bench" --dim $((1 << 21)) --density $d --quick --reps 30 --header 0 --only "$row" \
                    2>>"$log" >>"$file" || { echo "failed: $row at density $d (see $log)" >&2; return 1; }
            done
        done
    done
}

# run_oversubscribed OUT: P = 4 and 8 at 2^21, 0.1% / 1% / 10%, root P - 1,
# into OUT/p4.csv and OUT/p8.csv (bytes and messages exact, times not).
run_oversubscribed() {
    local np d
    for np in 4 8; do
        for d in 0.001 0.01 0.1; do
            run "$1/p$np.csv" $np --dim $((1 << 21)) --density $d --quick --reps 5 --warmup 1 --root $((np - 1))
        done
    done
}
