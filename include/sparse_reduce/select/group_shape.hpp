#pragma once
// The group shape of grouped allreduce (policy::grouped): which x * y groups
// of neighbouring ranks of an R x C mesh share one replica.
//
//   R x C = 4 x 4, groups 2 x 2        groups 1 x 4 (rows: contiguous ranks)
//    0  1 |  2  3                        0  1  2  3
//    4  5 |  6  7                       -----------
//   ------+------                        4  5  6  7
//    8  9 | 10 11                       -----------
//   12 13 | 14 15                        8  9 ...
//
// Square meshes use Chen and Lee's (n.d.) model as it stands: Prop. 3.7's optimal x for
// square x * x groups (model/group_replication.hpp). A non-commutative
// operation needs groups that are runs of consecutive ranks (1 x b, or a x C
// whole rows), so that folding within groups, then across them in group
// order, is rank order; there the model's general T(x, y) picks among those.
// Chen and Lee have no non-square meshes: there the target is the square model's
// best x for a square mesh of the same P, and the admissible shape whose size
// is nearest x^2 (then the squarest) is taken.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../model/group_replication.hpp"

namespace sparse_reduce {

struct mesh_shape {
    int rows = 1, cols = 1;
    bool wrapped = false; // periodic in both dimensions
    int size() const { return rows * cols; }
};

struct group_shape {
    int rows = 1, cols = 1;
    int size() const { return rows * cols; }
};

/// "rows x cols", e.g. "2x2".
inline std::string to_string(const group_shape& g) { return std::to_string(g.rows) + "x" + std::to_string(g.cols); }
/// "rows x cols", with " wrapped" for a periodic mesh.
inline std::string to_string(const mesh_shape& m)
{
    return std::to_string(m.rows) + "x" + std::to_string(m.cols) + (m.wrapped ? " wrapped" : "");
}

/// @cond INTERNAL
// Groups are runs of consecutive ranks, in rank order (row-major numbering).
inline bool contiguous_in_rank_order(const group_shape& g, const mesh_shape& m)
{
    return g.rows == 1 || g.cols == m.cols;
}

// Empty when g tiles m, else why not.
inline std::string check_group_shape(const group_shape& g, const mesh_shape& m)
{
    if (g.rows < 1 || g.cols < 1 || m.rows % g.rows != 0 || m.cols % g.cols != 0)
        return "grouped: groups of " + to_string(g) + " do not tile a " + to_string(m) + " mesh";
    return {};
}

inline replication::mesh_system mesh_system_of(const mesh_shape& m, bool bidirectional)
{
    using enum replication::mesh_system;
    return m.wrapped ? (bidirectional ? WS2 : WS1) : (bidirectional ? RS2 : RS1);
}

// p.N is ignored (taken from m).
inline group_shape choose_group_shape(const mesh_shape& m, bool bidirectional, replication::params p,
                                      bool contiguous_only)
{
    if (m.rows < 1 || m.cols < 1) detail::fail("grouped: a mesh needs positive sides, got " + to_string(m));
    const auto sys = mesh_system_of(m, bidirectional);
    std::vector<group_shape> shapes;
    for (int a = 1; a <= m.rows; ++a)
        for (int b = 1; b <= m.cols; ++b)
            if (m.rows % a == 0 && m.cols % b == 0 && (!contiguous_only || contiguous_in_rank_order({a, b}, m)))
                shapes.push_back({a, b});
    if (m.rows == m.cols) {
        p.N = m.rows;
        if (!contiguous_only) {
            const int x = replication::optimal_group_size(sys, p);
            return {x, x};
        }
        // T(x, y) is symmetric in the group's orientation: the model takes x <= y
        group_shape best{};
        double best_t = std::numeric_limits<double>::infinity();
        for (const auto& g : shapes) {
            const double t = replication::total_time(sys, std::min(g.rows, g.cols), std::max(g.rows, g.cols), p);
            if (t < best_t) best_t = t, best = g;
        }
        return best;
    }
    p.N = static_cast<int>(std::lround(std::sqrt(static_cast<double>(m.size()))));
    int x = 1;
    for (int c = 2; c <= p.N; ++c)
        if (replication::square_total_time(sys, c, p) < replication::square_total_time(sys, x, p)) x = c;
    const double target = std::log(static_cast<double>(x) * x);
    group_shape best{};
    double best_d = std::numeric_limits<double>::infinity();
    constexpr double squareness = 1e-3; // among shapes of one size, the squarest: a tie-break only
    for (const auto& g : shapes) {
        const double d = std::abs(std::log(static_cast<double>(g.size())) - target) +
                         squareness * std::abs(std::log(static_cast<double>(g.rows) / g.cols));
        if (d < best_d) best_d = d, best = g;
    }
    return best;
}
/// @endcond

} // namespace sparse_reduce
