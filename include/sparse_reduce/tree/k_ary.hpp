#pragma once
/** @file
 k_ary_tree, the k-ary reduction tree. Include `<sparse_reduce/sparse_reduce.hpp>`.

 k-ary tree in pre-order: node lo of interval [lo, hi) receives from k
 children heading k near-equal contiguous slices of (lo, hi); depth about
 log_k P, fold in rank order.

 @verbatim
   k = 3, P = 10:        0
                     /   |    \
                    1    4     7
                   / \  / \   / \
                  2  3 5   6 8   9
 @endverbatim
*/

#include "tree.hpp"

namespace sparse_reduce {

/// The k-ary tree over P ranks, serving `root`.
/// @param size        P, the number of ranks
/// @param root        the rank that receives the result
/// @param commutative whether the tree may be rotated onto the root (else it
///                    keeps rank order and its top forwards to the root)
/// @param k           children per node, at least 1
/// @throws sparse_reduce::error for k < 1 or an invalid root
inline tree k_ary_tree(int size, int root, bool commutative, int k)
{
    if (k < 1) detail::fail("k_ary tree needs k >= 1, got ", k);
    tree t = detail::build_interval_tree(size, [](int lo, int hi, int branches, std::vector<detail::interval>& out) {
        const int rest = hi - lo - 1, parts = std::min(branches, rest);
        int at = lo + 1;
        for (int j = 0; j < parts; ++j) {
            const int len = rest / parts + (j < rest % parts ? 1 : 0);
            out.push_back({at, at + len});
            at += len;
        }
        return lo;
    }, k);
    t.name = detail::concat("k_ary(k=", k, ")");
    return detail::place_root(std::move(t), root, commutative);
}

} // namespace sparse_reduce
