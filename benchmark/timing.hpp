#pragma once
// Timing for the MPI benchmarks, OSU style: warm-up, then repetitions each
// started together (barrier) and timed as the slowest rank's time; the
// figures are min / median / max over repetitions.

#include <algorithm>
#include <functional>
#include <vector>

#include <mpi.h>

#include <sparse_reduce/exec/simulator.hpp>
#include <sparse_reduce/policy.hpp>
#include <sparse_reduce/select/sreduce.hpp>

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

// The fixed policies automatic is compared with, by name.
inline constexpr algorithm fixed_algorithms[] = {algorithm::binomial, algorithm::k_ary, algorithm::binary,
                                                 algorithm::chain, algorithm::two_tree};

// f(policy) for a fixed algorithm (k_ary with k = 4).
template <class F>
decltype(auto) with_policy(algorithm a, F&& f)
{
    switch (a) {
    case algorithm::binomial: return f(policy::binomial{});
    case algorithm::k_ary: return f(policy::k_ary{.k = 4});
    case algorithm::binary: return f(policy::binary{});
    case algorithm::chain: return f(policy::chain{});
    default: return f(policy::two_tree{});
    }
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
