// Runs sparse_reduce::reduce in the simulator: P virtual ranks in this one
// process, real data, a modelled network. No MPI launcher needed.
//
//   simulate P DIMENSION DENSITY [binomial|k_ary|binary|chain|optimal_binary|two_tree]
//            [alpha_us] [GB_per_s]
//
// e.g. simulate 4096 1048576 0.001 binomial 1.5 12   (InfiniBand-class)
//      simulate 64 1048576 0.01 two_tree 20 1.2      (10 GbE)

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/simulate.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s P DIMENSION DENSITY [policy] [alpha_us] [GB_per_s]\n", argv[0]);
        return 2;
    }
    const int p = std::atoi(argv[1]);
    const std::size_t n = std::strtoull(argv[2], nullptr, 10);
    const double density = std::atof(argv[3]);
    const std::string policy = argc > 4 ? argv[4] : "binomial";
    sr::network_model net;
    if (argc > 5) net.alpha = std::atof(argv[5]) * 1e-6;
    if (argc > 6) net.beta = 1.0 / (std::atof(argv[6]) * 1e9);

    // Every rank: about density * n entries at uniform random positions.
    std::vector<sr::index_value_vector<double>> inputs;
    const auto per_rank = static_cast<std::size_t>(density * static_cast<double>(n));
    for (int r = 0; r < p; ++r) {
        std::mt19937_64 rng(static_cast<std::uint64_t>(r) + 1);
        std::vector<std::uint32_t> idx(per_rank);
        std::vector<double> val(per_rank, 1.0);
        for (auto& i : idx) i = static_cast<std::uint32_t>(rng() % n);
        inputs.push_back(sr::index_value_vector<double>::from_unsorted(n, idx, val, std::plus<>{}));
    }
    const std::span<const sr::index_value_vector<double>> in(inputs);
    sr::index_value_vector<double> out;
    const auto start = std::chrono::steady_clock::now();
    sr::simulation_result res;
    try {
        if (policy == "binomial") res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::binomial{}, net);
        else if (policy == "k_ary") res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::k_ary{}, net);
        else if (policy == "binary") res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::binary{}, net);
        else if (policy == "chain") res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::chain{}, net);
        else if (policy == "optimal_binary")
            res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::optimal_binary{}, net);
        else if (policy == "two_tree") res = sr::simulate_reduce(in, out, std::plus<>{}, 0, sr::policy::two_tree{}, net);
        else {
            std::fprintf(stderr, "unknown policy '%s'\n", policy.c_str());
            return 2;
        }
    } catch (const sr::error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: P=%d dimension=%zu density=%g alpha=%.3gus bandwidth=%.3gGB/s\n", res.algorithm.c_str(), p, n,
                density, net.alpha * 1e6, 1e-9 / net.beta);
    std::printf("  modelled time %.6f s, bytes %zu in %zu messages, critical path %zu bytes\n", res.time,
                res.bytes_total, res.messages_total, res.critical_path_bytes);
    std::printf("  result %zu entries; simulated in %.2f s\n", out.nnz(), wall);
    return 0;
}
