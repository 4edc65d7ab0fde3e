#pragma once
// Test support shared by unit and MPI tests: random vectors with a given
// density and placement, the non-commutative affine-map operation, and the
// plain reference every kernel and collective is checked against: a fold
// over dense std::vectors.

#include <sparse_reduce/sparse_reduce.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sparse_reduce_test {

// x -> a*x + b over uint64 wrap-around arithmetic: associative, exact, not
// commutative. compose(f, g) applies f first, then g.
struct affine {
    std::uint64_t a = 1, b = 0;
    friend bool operator==(const affine&, const affine&) = default;
};
struct compose {
    affine operator()(const affine& f, const affine& g) const { return {g.a * f.a, g.a * f.b + g.b}; }
    affine identity() const { return {}; }
};

enum class placement { uniform, zipf, identical, disjoint };

// A value that is never the identity of op (and never -0.0 or NaN, so that a
// fold in any grouping gives the same bits as the reference where it must).
template <class T, class Op>
T random_value(std::mt19937_64& rng, const Op& op)
{
    const T id = sparse_reduce::identity<T>(op);
    for (;;) {
        T v;
        if constexpr (std::is_same_v<T, affine>) v = affine{rng() | 1, rng()};
        else if constexpr (std::is_same_v<T, std::uint8_t>) v = static_cast<T>(rng() & 1);
        else if constexpr (std::is_floating_point_v<T>) {
            // small integers keep sums exact in any order
            v = static_cast<T>(static_cast<int>(rng() % 64) - 32) / T(4);
        } else if constexpr (std::is_signed_v<T>) {
            v = static_cast<T>(static_cast<std::int32_t>(rng())); // sums of a few never overflow
        } else if constexpr (std::is_integral_v<T>) v = static_cast<T>(rng());
        bool zero = false; // (+0.0 or -0.0)
        if constexpr (std::is_floating_point_v<T>) zero = v == T(0);
        if (!sparse_reduce::detail::same_value(v, id) && !zero) return v;
    }
}

// std::uniform_real_distribution<double>(0, 1)(rng), draw for draw and bit
// for bit (libstdc++'s generate_canonical takes one 64-bit draw and divides
// by 2^64), without the logarithm it computes on every call in a build
// below -O2 (a tenth of a sanitizer run's time).
inline double uniform01(std::mt19937_64& rng)
{
    const double u = static_cast<double>(rng()) * 0x1p-64;
    return u < 1 ? u : std::nextafter(1.0, 0.0);
}

// Positions of the non-identity entries: each element independently with
// probability density (uniform), or drawn from a zipf law over the index
// space (skewed towards low indices).
// Bytes, not std::vector<bool>: at the tests' -Og its bit proxies took a
// fifth of the MPI tests' CPU.
inline std::vector<unsigned char> random_support(std::mt19937_64& rng, std::size_t n, double density, placement p,
                                                 int rank = 0, int ranks = 1)
{
    std::vector<unsigned char> s(n, 0);
    if (n == 0 || density <= 0) return s;
    if (density >= 1) {
        s.assign(n, 1);
        return s;
    }
    switch (p) {
    case placement::uniform:
    case placement::identical:
        for (std::size_t i = 0; i < n; ++i) s[i] = uniform01(rng) < density;
        break;
    case placement::disjoint:
        for (std::size_t i = static_cast<std::size_t>(rank); i < n; i += static_cast<std::size_t>(ranks))
            s[i] = uniform01(rng) < density * ranks;
        break;
    case placement::zipf: {
        const auto target = static_cast<std::size_t>(density * static_cast<double>(n) + 0.5);
        // inverse-CDF sampling of an approximate zipf(1.2) over 1..n
        const double sexp = 1.2, hmax = std::pow(static_cast<double>(n), 1 - sexp);
        for (std::size_t k = 0; k < target; ++k) {
            const double x = std::pow(1 + uniform01(rng) * (hmax - 1), 1 / (1 - sexp));
            s[std::min(n - 1, static_cast<std::size_t>(x) - 1)] = 1;
        }
        break;
    }
    }
    return s;
}

template <class T, class Op>
std::vector<T> random_dense(std::mt19937_64& rng, std::size_t n, double density, const Op& op,
                            placement p = placement::uniform, int rank = 0, int ranks = 1)
{
    const auto support = random_support(rng, n, density, p, rank, ranks);
    std::vector<T> v(n, sparse_reduce::identity<T>(op));
    for (std::size_t i = 0; i < n; ++i)
        if (support[i]) v[i] = random_value<T>(rng, op);
    return v;
}

// The reference: out[i] = op(a[i], b[i]), a on the left.
template <class T, class Op>
std::vector<T> dense_fold(const std::vector<T>& a, const std::vector<T>& b, const Op& op)
{
    std::vector<T> r(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) r[i] = static_cast<T>(op(a[i], b[i]));
    return r;
}

// Index of the first element that differs by bits, or -1.
template <class T>
long first_difference(const std::vector<T>& x, const std::vector<T>& y)
{
    if (x.size() != y.size()) return static_cast<long>(std::min(x.size(), y.size()));
    for (std::size_t i = 0; i < x.size(); ++i)
        if (!sparse_reduce::detail::same_value(x[i], y[i])) return static_cast<long>(i);
    return -1;
}

// Rank `rank`'s input of a collective test (uniform supports), and the
// serial fold of ranks 0 .. ranks - 1's inputs in rank order.
template <class T, class Op>
std::vector<T> rank_input(int rank, std::size_t n, double density, const Op& op, unsigned salt)
{
    std::mt19937_64 rng(salt * 7919u + static_cast<unsigned>(rank));
    return random_dense<T>(rng, n, density, op);
}

template <class T, class Op>
std::vector<T> rank_fold(int ranks, std::size_t n, double density, const Op& op, unsigned salt)
{
    std::vector<T> acc(n, sparse_reduce::identity<T>(op));
    for (int r = 0; r < ranks; ++r) acc = dense_fold(acc, rank_input<T>(r, n, density, op, salt), op);
    return acc;
}

} // namespace sparse_reduce_test
