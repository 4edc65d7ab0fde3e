#!/usr/bin/env bash
# The one test command of SparseReduce (CI runs it through .ci/run).
#
# Steps:
#   1. install-deps   scripts/install-deps.sh (no-op when everything is there)
#      layout         scripts/check-layout.sh (header length, include layers)
#   2. release        configure, build and run every CTest test (preset
#                     check: the release build in build/check, its benchmarks
#                     and examples at the tests' -Og) but the unit tests,
#                     which step 3 runs
#   3. sanitize       ASan+UBSan build of unit_tests, ctest -L unit (preset asan)
#   4. fuzz           clang libFuzzer build of fuzz_decoders, smoke ctest, then
#                     ${SPARSE_REDUCE_FUZZ_SECONDS:-60} s of fuzzing on two workers
#   5. install        install build/check to a temp prefix; build the
#                     consumer with find_package and pkg-config against it
#                     (each also in the compiled mode) and with FetchContent
#                     from this checkout, run each (4, 3, 2, 2, 2 ranks);
#                     build the Doxygen API reference (target docs)
#   6. bench-smoke    only with SPARSE_REDUCE_BENCH_SMOKE=1: a very short
#                     kernel_bench run
#
# For local iteration: SPARSE_REDUCE_SKIP_SANITIZE=1 skips step 3,
# SPARSE_REDUCE_SKIP_FUZZ=1 skips step 4. CI sets neither.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
export LC_NUMERIC=C

# Open MPI: allow running as root (CI, containers) and more ranks than cores.
# No OMPI_MCA_btl_vader_single_copy_mechanism override: on this machine CMA
# works and Open MPI prints no warnings without it.
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# The point-to-point layer Open MPI selects on one host anyway (ob1), named so
# that no launch probes the others (cm, ucx): 0.2 s less per mpiexec, of
# about 0.45, over some 120 launches. A caller's own choice is kept.
export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}

FUZZ_SECONDS=${SPARSE_REDUCE_FUZZ_SECONDS:-60}
LOG_DIR=$ROOT/build/test-logs
mkdir -p "$LOG_DIR"

# --------------------------------------------------------------------------
# Step bookkeeping: every step is announced, timed and listed at the end, also
# when a step fails (set -e exits, the EXIT trap prints the summary).
# --------------------------------------------------------------------------
step_names=()
step_secs=()
step_results=()
current_step=""
step_start=""
script_start=$EPOCHREALTIME
temp_dirs=()

seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

step_begin() {
    current_step=$1
    step_start=$EPOCHREALTIME
    echo
    echo "== $1 =="
}

step_end() {
    local secs
    secs=$(seconds_since "$step_start")
    step_names+=("$current_step")
    step_secs+=("$secs")
    step_results+=("passed")
    echo "== $current_step: passed in ${secs} s =="
    current_step=""
}

step_skip() {
    echo
    echo "== $1: skipped ($2) =="
    step_names+=("$1")
    step_secs+=("-")
    step_results+=("skipped")
}

finish() {
    local rc=$? i passed=0 failed=0 skipped=0
    if [[ -n "$current_step" ]]; then
        step_names+=("$current_step")
        step_secs+=("$(seconds_since "$step_start")")
        step_results+=("FAILED")
    fi
    if ((${#temp_dirs[@]})); then
        rm -rf -- "${temp_dirs[@]}"
    fi
    echo
    echo "== summary =="
    for i in "${!step_names[@]}"; do
        printf '  %-14s %-8s %8s s\n' "${step_names[$i]}" "${step_results[$i]}" "${step_secs[$i]}"
        case ${step_results[$i]} in
            passed) passed=$((passed + 1)) ;;
            skipped) skipped=$((skipped + 1)) ;;
            *) failed=$((failed + 1)) ;;
        esac
    done
    printf '  %-14s %-8s %8s s\n' "total" "" "$(seconds_since "$script_start")"
    if ((rc != 0)); then
        # shellcheck disable=SC2016 # the quotes are literal text, $current_step expands
        echo "test.sh: FAILED (exit code $rc)${current_step:+ in step '$current_step'}; logs in build/test-logs/"
        ((failed > 0)) || failed=1
    else
        echo "test.sh: all steps passed"
    fi
    echo "steps: $passed passed, $failed failed, $skipped skipped"
    exit "$rc"
}
trap finish EXIT

is_open_mpi() { mpiexec --version 2>&1 | grep -qE 'Open MPI|OpenRTE'; }

# --------------------------------------------------------------------------
# 1. dependencies
# --------------------------------------------------------------------------
step_begin "install-deps"
scripts/install-deps.sh
step_end

# The layout: no header over 600 lines, no folder-level include cycle, every
# include goes down the layers (scripts/check-layout.sh says which).
step_begin "layout"
scripts/check-layout.sh
step_end

# --------------------------------------------------------------------------
# 2. release build, all tests
# --------------------------------------------------------------------------
step_begin "release"
# The release build in its own directory (build/check, not a user's
# build/release): its benchmarks and examples are built and run to check
# them, so at the tests' -Og, which compiles them in 40 % of -O3's time
# (tests, benchmarks and examples: 560 s of CPU against 910 at -O1).
# The unit tests run in the sanitizer step (step 3), under ASan and UBSan;
# built here too only when that step is skipped.
unit_tests_here=OFF
[[ "${SPARSE_REDUCE_SKIP_SANITIZE:-0}" == 1 ]] && unit_tests_here=ON
cmake --preset check -DSPARSE_REDUCE_BUILD_UNIT_TESTS=$unit_tests_here
cmake --build --preset check -j2
ctest --preset check 2>&1 | tee "$LOG_DIR/ctest-release.log"
step_end

# --------------------------------------------------------------------------
# 3. sanitizers (unit tests only: ASan under Open MPI's launcher is noisy)
# --------------------------------------------------------------------------
if [[ "${SPARSE_REDUCE_SKIP_SANITIZE:-0}" == 1 ]]; then
    step_skip "sanitize" "SPARSE_REDUCE_SKIP_SANITIZE=1"
else
    step_begin "sanitize"
    export ASAN_OPTIONS=detect_leaks=1
    export UBSAN_OPTIONS=print_stacktrace=1
    cmake --preset asan
    cmake --build --preset asan -j2 --target unit_tests
    ctest --preset asan 2>&1 | tee "$LOG_DIR/ctest-asan.log"
    step_end
fi

# --------------------------------------------------------------------------
# 4. fuzzing
# --------------------------------------------------------------------------
if [[ "${SPARSE_REDUCE_SKIP_FUZZ:-0}" == 1 ]]; then
    step_skip "fuzz" "SPARSE_REDUCE_SKIP_FUZZ=1"
else
    step_begin "fuzz"
    cmake --preset fuzz
    cmake --build --preset fuzz -j2 --target fuzz_decoders
    ctest --preset fuzz 2>&1 | tee "$LOG_DIR/ctest-fuzz.log"

    corpus=$ROOT/build/fuzz/corpus
    artifacts=$ROOT/build/fuzz/artifacts
    mkdir -p "$corpus" "$artifacts"
    corpus_dirs=("$corpus") # new inputs are written to the first directory only
    if [[ -d test/fuzz/corpus ]]; then
        corpus_dirs+=("$ROOT/test/fuzz/corpus")
    fi
    fuzz_log=$LOG_DIR/fuzz_decoders.log
    # Two workers (libFuzzer's fork mode, one per core, sharing the corpus),
    # each fuzzing half the time: FUZZ_SECONDS of fuzzing in half the wall time.
    echo "fuzzing fuzz_decoders for ${FUZZ_SECONDS} s on two workers (corpus ${corpus#"$ROOT"/}, log ${fuzz_log#"$ROOT"/})"
    if ! build/fuzz/fuzz_decoders -fork=2 \
            -max_total_time="$(((FUZZ_SECONDS + 1) / 2))" -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$artifacts/" \
            "${corpus_dirs[@]}" >"$fuzz_log" 2>&1; then
        tail -n 120 "$fuzz_log"
        echo "fuzz_decoders FAILED; reproducer(s) in build/fuzz/artifacts/:"
        ls -l "$artifacts"
        echo "replay with: build/fuzz/fuzz_decoders build/fuzz/artifacts/<file>"
        exit 1
    fi
    grep -E '^#[0-9]+: cov' "$fuzz_log" | tail -n 1
    grep -E '^INFO: (fuzzed for|exiting)' "$fuzz_log" || tail -n 10 "$fuzz_log"
    echo "corpus now holds $(find "$corpus" -type f | wc -l) inputs"
    step_end
fi

# --------------------------------------------------------------------------
# 5. install; the consumer (example/consumer/main.cpp, one checked reduce)
#    built three ways: find_package and pkg-config against the install (and
#    both in the compiled mode), FetchContent from this checkout; the API
#    reference (Doxygen)
# --------------------------------------------------------------------------
step_begin "install"
prefix=$(mktemp -d "${TMPDIR:-/tmp}/sparse_reduce-prefix.XXXXXX")
consumers=$(mktemp -d "${TMPDIR:-/tmp}/sparse_reduce-consumers.XXXXXX")
temp_dirs+=("$prefix" "$consumers")
cmake --install build/check --prefix "$prefix"
for installed in share/doc/SparseReduce/LICENSE share/pkgconfig/sparse_reduce.pc bin/sparse_reduce_tune \
                 lib/libsparse_reduce_compiled.a lib/pkgconfig/sparse_reduce_compiled.pc; do
    if [[ ! -e "$prefix/$installed" ]]; then
        echo "cmake --install did not install $installed" >&2
        exit 1
    fi
done

# The consumers are built without optimisation: they check the packaging.
# Each way is one compile, so the five build side by side (logs in
# build/test-logs/consumer-WAY.log, printed if that way fails).
consumer_find_package() {
    cmake -S example/consumer -B "$consumers/find_package" -DCMAKE_PREFIX_PATH="$prefix"
    found_dir=$(sed -n 's/^SparseReduce_DIR:PATH=//p' "$consumers/find_package/CMakeCache.txt")
    if [[ "$found_dir" != "$prefix/lib/cmake/SparseReduce" ]]; then
        echo "consumer found SparseReduce in '$found_dir', not in the fresh install $prefix" >&2
        return 1
    fi
    cmake --build "$consumers/find_package"
}
# The compiled mode (SparseReduce::compiled from the same install).
consumer_compiled() {
    cmake -S example/consumer -B "$consumers/compiled" -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_COMPILED=ON
    cmake --build "$consumers/compiled"
}
# FETCHCONTENT_SOURCE_DIR_SPARSEREDUCE: FetchContent takes this checkout as
# the source, no download. As a subproject SparseReduce must not look for
# Boost.Test or Google Benchmark.
consumer_fetchcontent() {
    cmake -S example/consumer/fetchcontent -B "$consumers/fetchcontent" \
        -DFETCHCONTENT_SOURCE_DIR_SPARSEREDUCE="$ROOT"
    if grep -E '^(boost_unit_test_framework|benchmark)_DIR' "$consumers/fetchcontent/CMakeCache.txt"; then
        echo "SparseReduce as a subproject looked for Boost.Test or Google Benchmark" >&2
        return 1
    fi
    cmake --build "$consumers/fetchcontent"
}
consumer_pkgconfig() {
    mkdir -p "$consumers/pkgconfig"
    PKG_CONFIG_PATH="$prefix/share/pkgconfig" \
        make -C example/consumer/pkgconfig BUILD="$consumers/pkgconfig" CXXFLAGS=-O0
}
consumer_pkgconfig_compiled() {
    mkdir -p "$consumers/pkgconfig_compiled"
    PKG_CONFIG_PATH="$prefix/share/pkgconfig:$prefix/lib/pkgconfig" \
        make -C example/consumer/pkgconfig BUILD="$consumers/pkgconfig_compiled" CXXFLAGS=-O0 PKG=sparse_reduce_compiled
}
ways=(find_package compiled fetchcontent pkgconfig pkgconfig_compiled)
pids=()
for way in "${ways[@]}"; do
    echo "-- consumer: $way (log build/test-logs/consumer-$way.log)"
    (set -e; "consumer_$way") >"$LOG_DIR/consumer-$way.log" 2>&1 &
    pids+=($!)
done
consumers_failed=0
for i in "${!ways[@]}"; do
    if ! wait "${pids[$i]}"; then
        cat "$LOG_DIR/consumer-${ways[$i]}.log"
        echo "the ${ways[$i]} consumer did not build" >&2
        consumers_failed=1
    fi
done
((consumers_failed == 0))

oversubscribe=()
if is_open_mpi; then oversubscribe=(--oversubscribe); fi
for run in find_package:4 compiled:3 fetchcontent:2 pkgconfig:2 pkgconfig_compiled:2; do
    way=${run%:*} np=${run#*:}
    consumer_out=$(mpiexec -n "$np" "${oversubscribe[@]}" "$consumers/$way/consumer")
    echo "$way: $consumer_out"
    if [[ "$consumer_out" != *"consumer: $np ranks"*": OK" ]]; then
        echo "the $way consumer did not reduce correctly on $np ranks" >&2
        exit 1
    fi
done

# The API reference from the public headers (about 1 s): a malformed doc
# comment fails the build.
cmake --build --preset check --target docs
step_end

# --------------------------------------------------------------------------
# 6. optional benchmark smoke run
# --------------------------------------------------------------------------
if [[ "${SPARSE_REDUCE_BENCH_SMOKE:-0}" != 1 ]]; then
    step_skip "bench-smoke" "set SPARSE_REDUCE_BENCH_SMOKE=1 to run"
elif [[ ! -x build/check/benchmark/kernel_bench ]]; then
    step_skip "bench-smoke" "build/check/benchmark/kernel_bench was not built"
else
    step_begin "bench-smoke"
    build/check/benchmark/kernel_bench --benchmark_min_time=0.01 --benchmark_filter=.
    step_end
fi
