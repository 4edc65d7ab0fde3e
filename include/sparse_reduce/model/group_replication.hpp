#pragma once
// Group-replicated shared data on linear arrays, rings and N x N meshes
// (Chen and Lee, n.d., "Replication of uniformly accessed shared data for
// large-scale data-parallel algorithms"; doc/references.md). doc/allreduce.md
// has the equations with every symbol; this header follows its numbering.
//
// P = N^2 PEs form groups of x * y PEs (y >= x, x and y divide N); each
// group holds one replica of the M shared data spread over its members.
// Updating sends every partial result to the member that owns the datum
// (T_ux, Props 3.1-3.4); integrating combines the replicas of all groups and
// broadcasting returns them to every PE (T_Ix, Eq. 1 and Prop 3.5). Times are
// normalised by the time to move one datum between adjacent PEs during
// integration; T_x and T_m are one datum's transfer in an updating band and
// one modification, in that unit.
//
// Three printing errors of the seed are corrected here, each so that the
// seed's own later equations hold (doc/allreduce.md, "Errata"):
//   - Eq. (1) lacks the factor 1/x of its own derivation y (1 - xy/N^2) s,
//     s = M / (2xy): with it, T_r at x = y is Eq. (3);
//   - the first max of the wrapped T_Ix reads s2 y / (2x) where Eq. (2)'s
//     split balances it only as s2 / (2x);
//   - Gamma_odd needs "+" to be the root of Delta_odd's discriminant.
// And Prop. 3.7's "Delta < 0: x_e = 2 (x_o = 1)" is not the minimum when the
// cubic has three real roots (small T_m, small N_a T_x): seed_group_size()
// keeps the rule, optimal_group_size() takes the cubic's positive root
// whatever Delta's sign, and only it always equals brute-force search.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>
#include <string>
#include <vector>

#include "../error.hpp"

namespace sparse_reduce::replication {

// How many directions a link carries at a time: beta = 2 for uni-, 1 for bi-directional.
enum class link { uni = 1, bi = 2 };

// The seed's four systems: RS (regular mesh) and WS (wrapped-around mesh),
// index 1 uni-, 2 bi-directional links.
enum class mesh_system { RS1, RS2, WS1, WS2 };

inline constexpr mesh_system all_mesh_systems[] = {mesh_system::RS1, mesh_system::RS2, mesh_system::WS1,
                                                   mesh_system::WS2};

constexpr bool wrapped(mesh_system s) { return s == mesh_system::WS1 || s == mesh_system::WS2; }
constexpr link links_of(mesh_system s)
{
    return s == mesh_system::RS2 || s == mesh_system::WS2 ? link::bi : link::uni;
}
constexpr double beta(link l) { return l == link::uni ? 2.0 : 1.0; }
constexpr double beta(mesh_system s) { return beta(links_of(s)); }
// Eq. (3)'s alpha: beta on a regular mesh, beta / 2 on a wrapped one (1, 2, 0.5, 1 for RS2, RS1, WS2, WS1).
constexpr double alpha(mesh_system s) { return wrapped(s) ? beta(s) / 2 : beta(s); }

inline std::string to_string(mesh_system s)
{
    switch (s) {
    case mesh_system::RS1: return "RS1";
    case mesh_system::RS2: return "RS2";
    case mesh_system::WS1: return "WS1";
    case mesh_system::WS2: return "WS2";
    }
    detail::fail("to_string: not a mesh_system (", static_cast<int>(s), ")");
}
inline std::ostream& operator<<(std::ostream& os, mesh_system s) { return os << to_string(s); }

// One problem on one N x N mesh. Times in the unit above.
struct params {
    int N = 8;        // PEs per mesh side (P = N^2)
    double N_a = 1;   // accesses per shared datum per PE
    double T_x = 1;   // one datum between adjacent PEs in an updating band
    double T_m = 0.1; // one modification

    friend std::ostream& operator<<(std::ostream& os, const params& p)
    {
        return os << "{N=" << p.N << ", N_a=" << p.N_a << ", T_x=" << p.T_x << ", T_m=" << p.T_m << "}";
    }
};

// ceil((x^2 - 1) / 4), exact in integers: the most packets any link carries
// in one direction when x PEs in a line each send one to every other.
constexpr long long quarter_ceil(long long x) { return (x * x - 1 + 3) / 4; }

// ---- updating: T_ux, for packets of s data ----

// Prop. 3.1: x PEs in a linear array.
constexpr double update_time_linear(int x, double s, double T_x, link l)
{
    return beta(l) * static_cast<double>(quarter_ceil(x)) * s * T_x;
}
// Prop. 3.3: x PEs in a ring (every packet the short way, ties split).
constexpr double update_time_ring(int x, double s, double T_x, link l) { return update_time_linear(x, s, T_x, l) / 2; }
// Props. 3.2 (regular) and 3.4 (wrapped): an x * y group, y >= x; the rows'
// transfers and the columns' run at once, so x rows' worth of the longer side.
constexpr double update_time_mesh(mesh_system sys, int x, int y, double s, double T_x)
{
    const double t = beta(sys) * x * static_cast<double>(quarter_ceil(y)) * s * T_x;
    return wrapped(sys) ? t / 2 : t;
}
// The packet size on a mesh: N_a M / (N_b x y).
constexpr double packet_size(double N_a, double M, double N_b, int x, int y) { return N_a * M / (N_b * x * y); }

// ---- integration and broadcasting: T_Ix, normalised by M ----

// Eq. (1), regular mesh, with its derivation's 1/x (see above).
constexpr double integration_time_regular(mesh_system sys, int x, int y, int N)
{
    const double b = beta(sys), n2 = static_cast<double>(N) * N;
    return b / (2.0 * x) * (1 - x * static_cast<double>(y) / n2) + b / 2 * (1 - 1 / n2);
}

// The wrapped mesh with the replica split s1 : 1 - s1 between "vertical then
// horizontal" and "horizontal then vertical".
constexpr double integration_time_wrapped(mesh_system sys, int x, int y, int N, double s1)
{
    const double b = beta(sys), n = N, s2 = 1 - s1;
    return std::max(b * s1 / (2.0 * y) * (1 - x / n), b * s2 / (2.0 * x) * (1 - y / n)) +
           std::max(b * s1 / (2 * n) * (1 - y / n), b * s2 / (2 * n) * (1 - x / n)) + b / 4 * (1 - 1 / (n * n));
}
// Eq. (2): the split s11 of Prop. 3.5 (s21 = 1 - s11). A group spanning the
// whole mesh (x = y = N) integrates nothing; any split will do.
constexpr double wrapped_split(int x, int y, int N)
{
    const double a = static_cast<double>(y) * (N - y), c = static_cast<double>(x) * (N - x);
    return a + c > 0 ? a / (a + c) : 0.5;
}
// Prop. 3.5: the least wrapped T_Ix.
constexpr double integration_time_wrapped(mesh_system sys, int x, int y, int N)
{
    return integration_time_wrapped(sys, x, y, N, wrapped_split(x, y, N));
}

// ---- the total: T_r and T_w (Sec. 3.3), and T_o of Eq. (3) ----

inline void check_group(int x, int y, int N)
{
    if (N < 1 || x < 1 || y < x || y > N)
        detail::fail("group ", x, "x", y, " on a ", N, "x", N, " mesh: need 1 <= x <= y <= N");
}

// N_b (T_um + T_ux) + T_Im + T_Ix for an x * y group, normalised by M.
inline double total_time(mesh_system sys, int x, int y, const params& p)
{
    check_group(x, y, p.N);
    const double n2 = static_cast<double>(p.N) * p.N;
    const double update = update_time_mesh(sys, x, y, p.N_a / (static_cast<double>(x) * y), p.T_x); // N_b s / M
    const double integrate =
        wrapped(sys) ? integration_time_wrapped(sys, x, y, p.N) : integration_time_regular(sys, x, y, p.N);
    return update + integrate + p.N_a * p.T_m + (1 / (static_cast<double>(x) * y) - 1 / n2) * p.T_m;
}

// Eq. (3): x = y (Prop. 3.6).
constexpr double square_total_time(mesh_system sys, int x, const params& p)
{
    const double n2 = static_cast<double>(p.N) * p.N, xd = x;
    return alpha(sys) * (static_cast<double>(quarter_ceil(x)) * p.N_a * p.T_x / xd +
                         0.5 * ((1 / xd - xd / n2) + (1 - 1 / n2))) +
           p.N_a * p.T_m + (1 / (xd * xd) - 1 / n2) * p.T_m;
}

// ---- Prop. 3.7: the optimal x ----
//
// ceil((x^2-1)/4) is x^2/4 for even x and (x^2-1)/4 for odd x, so T_o is a
// smooth convex function on each parity; dT_o/dx = 0 is the depressed cubic
//   x^3 + p x - q = 0,  K = N^2 N_a T_x - 2,  q = 8 N^2 T_m / (alpha K),
//   p_even = -2 N^2 / K,  p_odd = N^2 (N_a T_x - 2) / K.
// Delta >= 0 is "one real root" (Cardano, the seed's x_e and x_o).

struct cubic_terms {
    double delta_even, delta_odd, gamma_even, gamma_odd;
};
inline cubic_terms prop37_terms(mesh_system sys, const params& p)
{
    const double a = alpha(sys), n2 = static_cast<double>(p.N) * p.N, k = n2 * p.N_a * p.T_x - 2;
    const double u = p.N_a * p.T_x - 2, tm2 = p.T_m * p.T_m;
    cubic_terms t{};
    t.delta_even = 54 * p.N_a * n2 * p.T_x * tm2 - a * a * n2 - 108 * tm2;
    t.delta_odd = 432 * k * tm2 + a * a * n2 * u * u * u;
    const double g_even = 4 * tm2 / (a * a) - 2 * n2 / (27 * k);
    const double g_odd = 4 * tm2 / (a * a) + n2 * u * u * u / (108 * k);
    t.gamma_even = g_even >= 0 ? std::sqrt(g_even) : std::numeric_limits<double>::quiet_NaN();
    t.gamma_odd = g_odd >= 0 ? std::sqrt(g_odd) : std::numeric_limits<double>::quiet_NaN();
    return t;
}

// The seed's x_e and x_o, verbatim apart from Gamma_odd's sign.
struct seed_roots {
    double x_e, x_o;
};
inline seed_roots prop37_roots(mesh_system sys, const params& p)
{
    const double a = alpha(sys), n2 = static_cast<double>(p.N) * p.N, k = n2 * p.N_a * p.T_x - 2;
    const cubic_terms t = prop37_terms(sys, p);
    const double scale = std::cbrt(2 * n2 / k), c = 2 * p.T_m / a;
    seed_roots r{};
    r.x_e = t.delta_even >= 0 ? scale * (std::cbrt(c + t.gamma_even) + std::cbrt(c - t.gamma_even)) : 2;
    r.x_o = t.delta_odd >= 0 ? scale * (std::cbrt(c + t.gamma_odd) + std::cbrt(c - t.gamma_odd)) : 1;
    return r;
}

// The seed's x_opt: of floor and ceil of x_e and x_o (within [1, N]), the
// one of least T_o. Meant for K > 0 (N^2 N_a T_x > 2). Ignores that x must
// divide N, as the seed does.
inline int seed_group_size(mesh_system sys, const params& p)
{
    const seed_roots r = prop37_roots(sys, p);
    int best = 1;
    double best_t = std::numeric_limits<double>::infinity();
    for (double v : {std::ceil(r.x_e), std::floor(r.x_e), std::ceil(r.x_o), std::floor(r.x_o)}) {
        if (std::isnan(v)) continue; // K <= 0: no root (T_o falls all the way; the rule does not apply)
        const int x = static_cast<int>(std::clamp(v, 1.0, static_cast<double>(p.N)));
        const double t = square_total_time(sys, x, p);
        if (t < best_t) best_t = t, best = x;
    }
    return best;
}

// The positive root of x^3 + p x - q = 0 (q > 0 has exactly one; q = 0 the
// largest, sqrt(-p), or 0). Cardano for one real root, the trigonometric
// form for three.
inline double positive_cubic_root(double p, double q)
{
    const double disc = q * q / 4 + p * p * p / 27;
    if (disc >= 0) {
        const double s = std::sqrt(disc);
        return std::cbrt(q / 2 + s) + std::cbrt(q / 2 - s);
    }
    const double m = 2 * std::sqrt(-p / 3); // p < 0 here
    const double theta = std::acos(std::clamp(-3 * q / (p * m), -1.0, 1.0)) / 3;
    return m * std::cos(theta); // the largest of the three
}

// Where T_o is least on the even and on the odd branch as smooth functions
// (infinity: decreasing all the way, K <= 0).
struct branch_minima {
    double even, odd;
};
inline branch_minima continuous_minima(mesh_system sys, const params& p)
{
    const double a = alpha(sys), n2 = static_cast<double>(p.N) * p.N, k = n2 * p.N_a * p.T_x - 2;
    if (k <= 0) return {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    const double q = 8 * n2 * p.T_m / (a * k);
    return {positive_cubic_root(-2 * n2 / k, q), positive_cubic_root(n2 * (p.N_a * p.T_x - 2) / k, q)};
}

// The admissible group sides: x = y dividing N.
inline std::vector<int> admissible_group_sizes(int N)
{
    std::vector<int> out;
    for (int x = 1; x <= N; ++x)
        if (N % x == 0) out.push_back(x);
    return out;
}

// The optimal admissible x: on each parity, T_o is convex, so its least
// admissible value lies at the admissible neighbours of the branch minimum.
inline int optimal_group_size(mesh_system sys, const params& p)
{
    if (p.N < 1) detail::fail("a mesh needs N >= 1, got ", p.N);
    const branch_minima m = continuous_minima(sys, p);
    const std::vector<int> xs = admissible_group_sizes(p.N);
    int best = 1;
    double best_t = std::numeric_limits<double>::infinity();
    const auto consider = [&](int x) {
        const double t = square_total_time(sys, x, p);
        if (t < best_t || (t == best_t && x < best)) best_t = t, best = x;
    };
    for (int parity : {0, 1}) {
        const double target = parity == 0 ? m.even : m.odd;
        int below = 0, above = 0; // the nearest admissible x of this parity on either side
        for (int x : xs) {
            if (x % 2 != parity) continue;
            if (x <= target) below = x;
            if (x >= target && !above) above = x;
        }
        if (below) consider(below);
        if (above) consider(above);
    }
    return best;
}

} // namespace sparse_reduce::replication
