#pragma once
// The data benchmarks, the tuner and the grid run on: rank r's sparse vector
// for a dimension, density and placement, the same for a given seed on any
// number of processes (so real runs and simulations see identical inputs).
//
//   uniform    every index with probability density
//   zipf       zipf_profile's law (model/merged_size.hpp): supports crowd
//              the low indices, unions grow slowly
//   identical  every rank the same support
//   disjoint   rank r only at indices = r mod P

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <sparse_reduce/model/merged_size.hpp>
#include <sparse_reduce/repr/index_value_vector.hpp>

namespace sparse_reduce::bench {

enum class placement { uniform, zipf, identical, disjoint };

inline const char* to_string(placement p)
{
    switch (p) {
    case placement::uniform: return "uniform";
    case placement::zipf: return "zipf";
    case placement::identical: return "identical";
    default: return "disjoint";
    }
}
inline placement parse_placement(const std::string& s)
{
    if (s == "zipf") return placement::zipf;
    if (s == "identical") return placement::identical;
    if (s == "disjoint") return placement::disjoint;
    return placement::uniform;
}

// Ascending support of rank r.
inline std::vector<std::uint32_t> support(std::size_t dimension, double density, placement p, int rank, int ranks,
                                          std::uint64_t seed = 1, const zipf_profile* zipf = nullptr)
{
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(p == placement::identical ? 0 : rank));
    std::vector<std::uint32_t> s;
    if (density >= 1) {
        for (std::size_t i = 0; i < dimension; ++i)
            if (p != placement::disjoint || i % static_cast<std::size_t>(ranks) == static_cast<std::size_t>(rank))
                s.push_back(static_cast<std::uint32_t>(i));
        return s;
    }
    if (p == placement::zipf) {
        if (zipf) return zipf->sample(rng, density * static_cast<double>(dimension));
        return zipf_profile(dimension).sample(rng, density * static_cast<double>(dimension));
    }
    const std::size_t step = p == placement::disjoint ? static_cast<std::size_t>(ranks) : 1;
    const std::size_t first = p == placement::disjoint ? static_cast<std::size_t>(rank) : 0;
    const double q = std::min(1.0, density * static_cast<double>(step));
    if (q <= 0) return s;
    std::uniform_real_distribution<double> u(0, 1);
    const double log_q = std::log1p(-std::min(q, 1 - 1e-12));
    for (std::size_t k = 0;;) { // geometric skips over the candidates first, first + step, ...
        k += static_cast<std::size_t>(std::floor(std::log(1 - u(rng)) / log_q));
        const std::size_t i = first + k * step;
        if (i >= dimension) break;
        s.push_back(static_cast<std::uint32_t>(i));
        ++k;
    }
    return s;
}

// Values in [0.5, 1.5): never the identity of + (sums stay well-conditioned).
inline index_value_vector<double> sparse_input(std::size_t dimension, double density, placement p, int rank, int ranks,
                                               std::uint64_t seed = 1, const zipf_profile* zipf = nullptr)
{
    auto idx = support(dimension, density, p, rank, ranks, seed, zipf);
    std::vector<double> val(idx.size());
    std::mt19937_64 rng(seed * 7919 + static_cast<std::uint64_t>(rank));
    std::uniform_real_distribution<double> u(0.5, 1.5);
    for (auto& v : val) v = u(rng);
    return index_value_vector<double>(dimension, idx, val);
}

inline std::vector<double> dense_input(std::size_t dimension, double density, placement p, int rank, int ranks,
                                       std::uint64_t seed = 1, const zipf_profile* zipf = nullptr)
{
    const auto sv = sparse_input(dimension, density, p, rank, ranks, seed, zipf);
    std::vector<double> d(dimension, 0.0);
    for (std::size_t k = 0; k < sv.nnz(); ++k) d[sv.indices()[k]] = sv.values()[k];
    return d;
}

} // namespace sparse_reduce::bench
