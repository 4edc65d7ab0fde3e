#pragma once
/** @file
 binary_tree, the in-order binary reduction tree. Include `<sparse_reduce/sparse_reduce.hpp>`.

 In-order binary tree: node m = middle of [lo, hi) receives the left half
 [lo, m) and the right half (m, hi), folding left ⊗ own ⊗ right; depth
 floor(log2 P). Its top is the middle rank; for non-commutative operations
 that top forwards the result to any other root (as Open MPI's in-order
 binary tree does), for commutative ones the tree is rotated instead.

 @verbatim
   P = 7:        3
               /   \
              1     5
             / \   / \
            0   2 4   6
 @endverbatim
*/

#include "tree.hpp"

namespace sparse_reduce {

/// The in-order binary tree over P ranks, serving `root`.
/// @param size        P, the number of ranks
/// @param root        the rank that receives the result
/// @param commutative whether the tree may be rotated onto the root (else it
///                    keeps rank order and its top forwards to the root)
/// @throws sparse_reduce::error for an invalid root
inline tree binary_tree(int size, int root, bool commutative)
{
    tree t = detail::build_interval_tree(size, [](int lo, int hi, int, std::vector<detail::interval>& out) {
        const int mid = lo + (hi - lo) / 2;
        if (lo < mid) out.push_back({lo, mid});
        if (mid + 1 < hi) out.push_back({mid + 1, hi});
        return mid;
    });
    t.name = "binary";
    return detail::place_root(std::move(t), root, commutative);
}

} // namespace sparse_reduce
