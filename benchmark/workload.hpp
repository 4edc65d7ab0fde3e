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
//   fem        Hofmann and Rünger's (2008) FEM data, modelled: mesh nodes numbered level by
//              level of adaptive refinement (564 coarse nodes, the count
//              doubling per level); rank r owns a subdomain, i.e. in every
//              level one contiguous run of 6-11% of that level's nodes
//              starting at r/P of it (fraction and jitter drawn per rank).
//              Runs of different ranks overlap only at subdomain borders:
//              non-identically distributed, clustered, RLE-friendly.
//              The density argument is ignored.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <sparse_reduce/model/merged_size.hpp>
#include <sparse_reduce/repr/index_value_vector.hpp>

namespace sparse_reduce::bench {

enum class placement { uniform, zipf, identical, disjoint, fem };

inline const char* to_string(placement p)
{
    switch (p) {
    case placement::uniform: return "uniform";
    case placement::zipf: return "zipf";
    case placement::identical: return "identical";
    case placement::fem: return "fem";
    default: return "disjoint";
    }
}
// A comma-separated list of numbers ("0.001,0.01", "64,1024"), as T.
template <class T>
std::vector<T> parse_numbers(const std::string& s)
{
    std::vector<T> v;
    std::istringstream is(s);
    for (std::string item; std::getline(is, item, ',');) {
        if constexpr (std::is_floating_point_v<T>) v.push_back(static_cast<T>(std::stod(item)));
        else v.push_back(static_cast<T>(std::stoll(item)));
    }
    return v;
}

inline placement parse_placement(const std::string& s)
{
    if (s == "zipf") return placement::zipf;
    if (s == "identical") return placement::identical;
    if (s == "disjoint") return placement::disjoint;
    if (s == "fem") return placement::fem;
    return placement::uniform;
}

// Ascending support of rank r.
inline std::vector<std::uint32_t> support(std::size_t dimension, double density, placement p, int rank, int ranks,
                                          std::uint64_t seed = 1, const zipf_profile* zipf = nullptr)
{
    std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(p == placement::identical ? 0 : rank));
    std::vector<std::uint32_t> s;
    if (p == placement::fem) {
        std::uniform_real_distribution<double> u(0, 1);
        const double share = 0.06 + 0.05 * u(rng);
        const double start = (static_cast<double>(rank) + 0.5 * u(rng)) / static_cast<double>(ranks);
        for (std::size_t lo = 0, hi = std::min<std::size_t>(dimension, 564); lo < dimension;
             lo = hi, hi = std::min(dimension, 2 * hi)) {
            const std::size_t len = hi - lo, run = std::max<std::size_t>(1, static_cast<std::size_t>(share * static_cast<double>(len)));
            const std::size_t first = static_cast<std::size_t>(start * static_cast<double>(len));
            for (std::size_t k = 0; k < run && k < len; ++k) s.push_back(static_cast<std::uint32_t>(lo + (first + k) % len));
            std::sort(s.end() - static_cast<std::ptrdiff_t>(std::min(run, len)), s.end()); // the run may wrap
        }
        return s;
    }
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
