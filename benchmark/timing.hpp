#pragma once
// Timing for the MPI benchmarks, OSU style: warm-up, then repetitions each
// started together (barrier) and timed as the slowest rank's time; the
// figures are min / median / max over repetitions.

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include <sparse_reduce/simulate.hpp>
#include <sparse_reduce/policy.hpp>
#include <sparse_reduce/select/sreduce.hpp>
#include <sparse_reduce/select/tree_table.hpp>

#include "workload.hpp"

namespace sparse_reduce::bench {

struct stats {
    double min = 0, median = 0, max = 0;
};

inline stats summarize(std::vector<double> t)
{
    if (t.empty()) return {};
    std::sort(t.begin(), t.end());
    return {t.front(), t[t.size() / 2], t.back()};
}

// Times f() collectively on comm: the slowest rank per repetition.
inline stats time_collective(MPI_Comm comm, int warmup, int reps, const std::function<void()>& f)
{
    for (int i = 0; i < warmup; ++i) f();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        MPI_Barrier(comm);
        const double start = MPI_Wtime();
        f();
        double mine = MPI_Wtime() - start, slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
        t.push_back(slowest);
    }
    return summarize(t);
}

// Times several collectives in interleaved rounds, each round running every
// f once (each timed as in time_collective), so that every f sees the same
// state of the machine. Rows that run the same code must not be ranked by
// their order, nor by their neighbours (each round runs the rows in a new
// random order, the same on every rank: a row that always followed one
// moving 16 MB read its own from a cold cache, twice as slow as its twin
// elsewhere in the list), and the root's merge gets faster over hundreds of
// calls as the branch predictor learns repeated supports
// (doc/benchmarks.md). Each timed
// call of fs[k] follows `settle` untimed calls of it: a one-shot reduce keeps
// the last call's policy in the communicator's cache, so a row's first call
// after another row's rebuilds it (about 1.5 us), which a user's loop with
// one policy never does.
inline std::vector<stats> time_interleaved(MPI_Comm comm, int warmup, int reps,
                                           const std::vector<std::function<void()>>& fs, int settle = 0)
{
    for (int i = 0; i < warmup; ++i)
        for (const auto& f : fs) f();
    std::vector<std::vector<double>> t(fs.size());
    std::vector<std::size_t> order(fs.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::mt19937 shuffle_rng(12345); // the same order on every rank
    for (int i = 0; i < reps; ++i) {
        std::shuffle(order.begin(), order.end(), shuffle_rng);
        for (const std::size_t k : order) {
            for (int s = 0; s < settle; ++s) fs[k]();
            MPI_Barrier(comm);
            const double start = MPI_Wtime();
            fs[k]();
            double mine = MPI_Wtime() - start, slowest = 0;
            MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
            t[k].push_back(slowest);
        }
    }
    std::vector<stats> s;
    for (auto& v : t) s.push_back(summarize(std::move(v)));
    return s;
}

// The fixed policies automatic is compared with: a policy per row of the
// tree table (select/tree_table.hpp), k_ary with k = fixed_k.
inline constexpr int fixed_k = 4;
template <class Row>
typename Row::policy_type fixed_policy(const Row&)
{
    typename Row::policy_type p{};
    if constexpr (requires { p.k; }) p.k = fixed_k;
    return p;
}

// The table's algorithms, by name, in its order.
inline constexpr auto fixed_algorithms = [] {
    std::array<algorithm, detail::tree_algorithms.size()> a{};
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = detail::tree_algorithms[i].id;
    return a;
}();

// f(policy) for a fixed algorithm.
template <class F>
auto with_policy(algorithm a, F&& f)
{
    std::invoke_result_t<F&, policy::binomial> result{};
    detail::for_each_tree_row([&](const auto& row) {
        if (row.id == a) result = f(fixed_policy(row));
    });
    return result;
}

// P simulated ranks' inputs for a cell.
inline std::vector<index_value_vector<double>> simulated_inputs(int p, std::size_t c, double density, placement pl,
                                                                std::uint64_t seed = 1)
{
    const zipf_profile zipf(pl == placement::zipf ? c : 1);
    std::vector<index_value_vector<double>> in;
    in.reserve(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) in.push_back(sparse_input(c, density, pl, r, p, seed, &zipf));
    return in;
}

} // namespace sparse_reduce::bench
