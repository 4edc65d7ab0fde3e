#pragma once
// The branching factor of a reduction tree (Heikkinen, n.d.; doc/references.md).
//
// n items reduced by a tree of branching factor b take ln n / ln b steps; a
// step costs a fixed overhead o plus x per item it receives (transfer plus
// combine), so
//
//   T(b) = (ln n / ln b) * (o + b * x)
//
// dT/db = 0  <=>  b (ln b - 1) = o / x = r, solved in closed form by
// b = r / W(r / e) with W the principal branch of the Lambert function:
// r -> 0 gives b -> e (no overhead: the "e is optimal" tournament), r = 1
// gives 3.59, r = 10 gives 8.63, r = 1000 gives 226.
//
// A real tree has whole levels: best_k_ary picks the integer k in [2, n]
// minimising ceil(log_k n) * (o + k * x), so a flat tree (k = n, one level)
// wins once the overhead dominates everything else.

#include <cmath>
#include <limits>
#include <numbers>

namespace sparse_reduce {

/// @cond INTERNAL
// W0(z) for z >= -1/e: Halley's iteration from a log-based start.
inline double lambert_w0(double z)
{
    constexpr double e = std::numbers::e;
    constexpr int max_steps = 64;       // Halley's method converges in a handful: a bound, never reached
    constexpr double tolerance = 1e-15; // relative step at which w is at a double's precision
    if (z < -1 / e) return std::numeric_limits<double>::quiet_NaN();
    if (z == 0) return 0;
    double w = z < 1 ? (z > -0.25 ? z * (1 - z) : -1 + std::sqrt(2 * (1 + e * z))) // series at 0, branch point
                     : std::log(z) - (z > 3 ? std::log(std::log(z)) : 0);
    for (int it = 0; it < max_steps; ++it) {
        const double ew = std::exp(w), f = w * ew - z;
        const double step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2));
        w -= step;
        if (std::abs(step) <= tolerance * (1 + std::abs(w))) break;
    }
    return w;
}

// Steps times step cost of a tree of branching factor b over n items.
inline double k_ary_time(double b, double n, double overhead, double per_item)
{
    return std::log(n) / std::log(b) * (overhead + b * per_item);
}

// The continuous optimum: b (ln b - 1) = overhead / per_item.
inline double k_ary_continuous_optimum(double overhead, double per_item)
{
    constexpr double e = std::numbers::e;
    if (per_item <= 0) return std::numeric_limits<double>::infinity();
    const double r = overhead / per_item;
    if (r <= 0) return e;
    return r / lambert_w0(r / e);
}

// Levels of a k-ary tree over n ranks: ceil(log_k n), in integers.
inline int k_ary_levels(long long n, long long k)
{
    int levels = 0;
    for (long long reach = 1; reach < n; reach *= k) ++levels;
    return levels;
}

// The integer branching factor of least levels * (overhead + k * per_item).
inline int best_k_ary(int n, double overhead, double per_item)
{
    if (n <= 2) return 2;
    int best = 2;
    double best_time = std::numeric_limits<double>::infinity();
    constexpr double tie = 1e-12; // a larger k must win by more than rounding: ties go to the smaller
    for (int k = 2; k <= n; ++k) {
        const double t = k_ary_levels(n, k) * (overhead + k * per_item);
        if (t < best_time * (1 - tie)) {
            best_time = t;
            best = k;
        }
    }
    return best;
}
/// @endcond

} // namespace sparse_reduce
