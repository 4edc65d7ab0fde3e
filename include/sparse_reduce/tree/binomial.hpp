#pragma once
/** @file
 binomial_tree, the binomial reduction tree. Include `<sparse_reduce/sparse_reduce.hpp>`.

 Binomial tree. Node lo of interval [lo, hi) receives from lo+1, lo+2,
 lo+4, ... each heading the next power-of-two slice; depth ceil(log2 P).
 Rooted at 0 the slices are contiguous, so the fold is in rank order.

 @verbatim
   P = 8:            0
                 /  |   \
                1   2     4
                    |    / \
                    3   5   6
                            |
                            7
 @endverbatim

 The Sreduce draft's (n.d.) §4.1 local pipelining is the executor's: a rank whose partial
 result has grown sends it in pieces (see exec/).
*/

#include "tree.hpp"

namespace sparse_reduce {

/// The binomial tree over P ranks, serving `root`.
/// @param size        P, the number of ranks
/// @param root        the rank that receives the result
/// @param commutative whether the tree may be rotated onto the root (else it
///                    keeps rank order and its top forwards to the root)
/// @throws sparse_reduce::error for an invalid root
inline tree binomial_tree(int size, int root, bool commutative)
{
    tree t = detail::build_interval_tree(size, [](int lo, int hi, int, std::vector<detail::interval>& out) {
        for (long step = 1; lo + step < hi; step *= 2)
            out.push_back({static_cast<int>(lo + step), static_cast<int>(std::min<long>(lo + 2 * step, hi))});
        return lo;
    });
    t.name = "binomial";
    return detail::place_root(std::move(t), root, commutative);
}

} // namespace sparse_reduce
