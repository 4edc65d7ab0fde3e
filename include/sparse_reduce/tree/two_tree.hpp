#pragma once
/** @file
 two_trees, the two binary trees that share the windows. Include `<sparse_reduce/sparse_reduce.hpp>`.

 two_tree (Sanders, Speck and Träff 2009): two binary trees over all ranks,
 each folding in rank order, built so that the inner nodes of one are the
 leaves of the other. The executor sends the windows of the index space
 alternately through them, so each rank receives in one tree while it sends
 in the other and a large vector moves at close to full bandwidth.

 Tree A is an in-order tree whose leaves are exactly the even ranks (every
 interval starts at an even rank and is split at an odd one). Tree B:
 @verbatim
   P even: A mirrored (r -> P-1-r); its leaves are the odd ranks.
   P odd:  the same construction over ranks 1..P-1 (leaves: the odd ranks),
           with rank 0 folded in first by rank 1, the one rank that is inner
           in both trees.
 @endverbatim

 @verbatim
   P = 8     A (top 3)              B (top 4)
                  3                     4
               /     \               /     \
              1       5             2       6
             / \     / \           / \     / \
            0   2   4   7         0   3   5   7
                        |         |
                        6         1
 @endverbatim

 Both trees preserve rank order. For a root other than a tree's top, that
 top forwards its half of the result (non-commutative operations); for
 commutative ones both trees are rotated by the same shift, which keeps the
 inner/leaf split, so tree A's top lands on the root and only B forwards.
*/

#include <array>
#include <span>
#include <vector>

#include "tree.hpp"

namespace sparse_reduce {
namespace detail {

// In-order tree over [0, n) whose leaves are the even positions.
inline tree even_leaf_tree(int n)
{
    return build_interval_tree(n, [](int lo, int hi, int, std::vector<interval>& out) {
        if (hi - lo == 1) return lo;
        int m = lo + (hi - lo - 1) / 2; // the middle, moved to an odd position (lo is even)
        if ((m - lo) % 2 == 0) m = m + 1 < hi ? m + 1 : m - 1;
        out.push_back({lo, m});
        if (m + 1 < hi) out.push_back({m + 1, hi});
        return m;
    });
}

// Renames rank v to label[v] (a bijection that keeps every subtree
// contiguous, or any bijection when order does not matter) and restores
// rank-ordered children.
inline tree relabel(const tree& t, int size, std::span<const int> label, bool order_preserving)
{
    auto map = [&](int v) { return label[static_cast<std::size_t>(v)]; };
    tree r;
    r.size = size;
    r.parent.assign(static_cast<std::size_t>(size), -1);
    r.children.assign(static_cast<std::size_t>(size), {});
    r.self_position.assign(static_cast<std::size_t>(size), 0);
    for (int v = 0; v < t.size; ++v) {
        const auto d = static_cast<std::size_t>(map(v));
        const int up = t.parent[static_cast<std::size_t>(v)];
        r.parent[d] = up < 0 ? -1 : map(up);
        for (int c : t.children[static_cast<std::size_t>(v)]) r.children[d].push_back(map(c));
        std::sort(r.children[d].begin(), r.children[d].end());
        r.self_position[d] = static_cast<int>(std::count_if(r.children[d].begin(), r.children[d].end(),
                                                            [&](int c) { return c < map(v); }));
    }
    r.top = r.destination = static_cast<std::size_t>(t.top) < label.size() ? map(t.top) : -1; // (no ranks: no top)
    r.order_preserving = order_preserving;
    return r;
}

} // namespace detail

/// The two trees over P ranks, serving `root`; the executor sends alternate windows through them.
/// @param size        P, the number of ranks
/// @param root        the rank that receives the result
/// @param commutative whether the tree may be rotated onto the root (else it
///                    keeps rank order and its top forwards to the root)
/// @throws sparse_reduce::error for an invalid root
inline std::array<tree, 2> two_trees(int size, int root, bool commutative)
{
    if (root < 0 || root >= std::max(size, 1))
        detail::fail("invalid root ", root, " for a communicator of size ", size);
    tree a = detail::even_leaf_tree(size), b;
    std::vector<int> label(static_cast<std::size_t>(size));
    if (size % 2 == 0) {
        for (int r = 0; r < size; ++r) label[static_cast<std::size_t>(r)] = size - 1 - r;
        b = detail::relabel(a, size, label, true);
    } else {
        for (int r = 0; r + 1 < size; ++r) label[static_cast<std::size_t>(r)] = r + 1;
        b = detail::relabel(detail::even_leaf_tree(size - 1), size, label, true);
        if (size > 1) {
            b.parent[0] = 1;
            b.children[1].insert(b.children[1].begin(), 0);
            b.self_position[1] += 1;
        } else {
            b.top = b.destination = 0;
        }
    }
    std::array<tree, 2> t{a, b};
    if (commutative && size > 0 && a.top != root) {
        const int shift = root - a.top;
        for (int r = 0; r < size; ++r) label[static_cast<std::size_t>(r)] = ((r + shift) % size + size) % size;
        for (auto& x : t) x = detail::relabel(x, size, label, false);
    }
    for (auto& x : t) {
        x.destination = root;
        x.name = "two_tree";
    }
    return t;
}

} // namespace sparse_reduce
