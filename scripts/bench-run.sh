# Sourced by scripts/bench.sh and scripts/bench-floor.sh (needs $bench, $log).
#
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
