#pragma once
// How big partial results get: the expected number of non-identity entries
// of the union of k supports in dimension C.
//
//   uniform   every index in a support of n entries independently with
//             probability n / C:        C * (1 - prod (1 - n_i / C))
//   zipf      index j (0-based) with probability p_j = min(1, lambda * w_j),
//             w_j = (j + 1)^-s, lambda chosen so that sum p_j = n: supports
//             crowd the low indices (shared nodes of a mesh, popular
//             features), and unions grow far slower than uniform ones:
//                                       sum_j 1 - prod (1 - p_ij)
//   disjoint  no two supports overlap:  min(C, sum n_i), the upper bound
//
// zipf_profile evaluates the zipf sums over buckets (exact for the first
// 256 indices, then geometric buckets 2% wide) in a few microseconds, and
// samples supports from the very same law, so the model can be checked
// against measured unions (test_model.cpp).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "../error.hpp"

namespace sparse_reduce {

/// How the supports of the ranks' inputs overlap, for the model's merged
/// sizes: uniform, zipf or disjoint (the header comment gives each law).
enum class merge_model { uniform, zipf, disjoint };

/// @cond INTERNAL
inline constexpr double default_zipf_exponent = 1.0;

class zipf_profile {
public:
    explicit zipf_profile(std::size_t dimension, double exponent = default_zipf_exponent)
        : dimension_(dimension), s_(exponent)
    {
        std::size_t a = 0;
        while (a < dimension) {
            const std::size_t b =
                a < exact_prefix ? a + 1 : std::min<std::size_t>(dimension, static_cast<std::size_t>(static_cast<double>(a) * bucket_growth) + 1);
            double w = 0;
            if (b - a <= summed_width)
                for (std::size_t j = a; j < b; ++j) w += weight(j);
            else // the integral of (x + 1)^-s over [a, b): the sum to far below 1e-4
                w = s_ == 1 ? std::log((static_cast<double>(b) + 0.5) / (static_cast<double>(a) + 0.5))
                            : (std::pow(static_cast<double>(b) + 0.5, 1 - s_) - std::pow(static_cast<double>(a) + 0.5, 1 - s_)) / (1 - s_);
            buckets_.push_back({a, b, w / static_cast<double>(b - a)});
            a = b;
        }
    }

    std::size_t dimension() const { return dimension_; }
    double exponent() const { return s_; }
    double weight(std::size_t j) const { return std::pow(static_cast<double>(j) + 1, -s_); }

    // lambda such that a support has n expected entries.
    double lambda_for(double n) const
    {
        if (n <= 0) return 0;
        if (n >= static_cast<double>(dimension_)) return 1 / weight(dimension_ - 1);
        double lo = 0, hi = 1;
        while (expected(hi) < n) hi *= 2;
        for (int it = 0; it < bisection_steps; ++it) {
            const double mid = 0.5 * (lo + hi);
            (expected(mid) < n ? lo : hi) = mid;
        }
        return 0.5 * (lo + hi);
    }

    // Expected entries of the union of supports with these expected sizes.
    double union_entries(std::span<const double> nnz) const
    {
        std::vector<double> lambdas;
        for (double n : nnz) lambdas.push_back(lambda_for(n));
        double u = 0;
        for (const auto& b : buckets_) {
            double empty = 1;
            for (double l : lambdas) empty *= 1 - std::min(1.0, l * b.w);
            u += static_cast<double>(b.hi - b.lo) * (1 - empty);
        }
        return u;
    }
    // The union of k supports of n expected entries each.
    double union_entries(double k, double n) const { return union_entries_at(k, lambda_for(n)); }
    double union_entries_at(double k, double l) const
    {
        double u = 0;
        for (const auto& b : buckets_)
            u += static_cast<double>(b.hi - b.lo) * -std::expm1(k * std::log1p(-std::min(1.0 - 1e-16, l * b.w)));
        return std::min(u, static_cast<double>(dimension_));
    }

    // A support drawn from the law: ascending indices, each j independently
    // with probability min(1, lambda * w_j) (geometric skips over a bucket's
    // largest probability, thinned to the exact one), so about n of them.
    template <class URBG>
    std::vector<std::uint32_t> sample(URBG& rng, double n) const
    {
        std::vector<std::uint32_t> out;
        const double l = lambda_for(n);
        const auto u = [&rng] { return canonical(rng); };
        for (const auto& b : buckets_) {
            const double pmax = std::min(1.0, l * weight(b.lo));
            if (pmax <= 0) break;
            if (pmax >= 1) { // certain at the top, probable just below: one draw each
                for (std::size_t j = b.lo; j < b.hi; ++j)
                    if (u() < std::min(1.0, l * weight(j))) out.push_back(static_cast<std::uint32_t>(j));
                continue;
            }
            const double log_q = std::log1p(-pmax);
            for (std::size_t j = b.lo;;) {
                j += static_cast<std::size_t>(std::floor(std::log(1 - u()) / log_q));
                if (j >= b.hi) break;
                if (u() * pmax < l * weight(j)) out.push_back(static_cast<std::uint32_t>(j));
                ++j;
            }
        }
        return out;
    }

private:
    // A uniform draw from [0, 1): the 53 bits of a double from as many of
    // the generator's words as they take, as std::generate_canonical does
    // (the same numbers from the standard engines), without <random> in
    // every translation unit that includes the model.
    template <class URBG>
    static double canonical(URBG& rng)
    {
        const double range = static_cast<double>(URBG::max() - URBG::min()) + 1.0;
        const int bits = std::max(1, static_cast<int>(std::log2(range)));
        double sum = 0, scale = 1;
        for (int k = std::max(1, (53 + bits - 1) / bits); k > 0; --k) {
            sum += static_cast<double>(rng() - URBG::min()) * scale;
            scale *= range;
        }
        const double x = sum / scale;
        return x < 1 ? x : std::nextafter(1.0, 0.0);
    }

    static constexpr std::size_t exact_prefix = 256; // the first indices: a bucket each
    static constexpr double bucket_growth = 1.02;    // after them: buckets 2% wider than where they start
    static constexpr std::size_t summed_width = 64;  // a bucket this narrow sums its weights, a wider one integrates
    static constexpr int bisection_steps = 60;       // lambda_for: the bracket halved to a double's precision
    struct bucket {
        std::size_t lo, hi;
        double w; // mean weight over [lo, hi)
    };
    double expected(double lambda) const
    {
        double e = 0;
        for (const auto& b : buckets_) e += static_cast<double>(b.hi - b.lo) * std::min(1.0, lambda * b.w);
        return e;
    }

    std::size_t dimension_;
    double s_;
    std::vector<bucket> buckets_;
};

// Expected entries of the union of supports with the given sizes.
inline double merged_entries(std::span<const double> nnz, double dimension, merge_model m)
{
    if (dimension <= 0) return 0;
    if (m == merge_model::disjoint) {
        double s = 0;
        for (double n : nnz) s += n;
        return std::min(s, dimension);
    }
    if (m == merge_model::zipf) return zipf_profile(static_cast<std::size_t>(dimension)).union_entries(nnz);
    double log_empty = 0; // log of the probability that an index is in no support
    for (double n : nnz) {
        if (n >= dimension) return dimension;
        log_empty += std::log1p(-n / dimension);
    }
    return dimension * -std::expm1(log_empty);
}

// The union of k supports of n entries each.
inline double merged_entries(double k, double n, double dimension, merge_model m)
{
    if (dimension <= 0 || k <= 0) return 0;
    switch (m) {
    case merge_model::disjoint: return std::min(dimension, k * n);
    case merge_model::zipf: return zipf_profile(static_cast<std::size_t>(dimension)).union_entries(k, n);
    case merge_model::uniform:
        if (n >= dimension) return dimension;
        return dimension * -std::expm1(k * std::log1p(-n / dimension));
    }
    detail::fail("merged_entries: not a merge_model (", static_cast<int>(m), ")");
}
/// @endcond

/// k -> expected entries of the union of k supports of n entries each, for
/// one workload: the zipf profile and its lambda are built once, results
/// are remembered (a chain of 4096 ranks asks for 4096 sizes).
class merged_size_fn {
public:
    merged_size_fn(double n, double dimension, merge_model m) : n_(n), dim_(dimension), m_(m)
    {
        if (m == merge_model::zipf && dimension > 0) {
            zipf_ = std::make_shared<const zipf_profile>(static_cast<std::size_t>(dimension));
            lambda_ = zipf_->lambda_for(n);
        }
    }
    double operator()(double k) const
    {
        if (!zipf_) return merged_entries(k, n_, dim_, m_);
        auto [it, fresh] = memo_.try_emplace(static_cast<long long>(k), 0.0);
        if (fresh) it->second = zipf_->union_entries_at(k, lambda_);
        return it->second;
    }

private:
    double n_, dim_;
    merge_model m_;
    std::shared_ptr<const zipf_profile> zipf_;
    double lambda_ = 0;
    mutable std::unordered_map<long long, double> memo_;
};

} // namespace sparse_reduce
