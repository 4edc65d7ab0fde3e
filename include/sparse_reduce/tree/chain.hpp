#pragma once
/** @file
 chain_tree, the chain (linear pipeline). Include `<sparse_reduce/sparse_reduce.hpp>`.

 Chain (the linear pipeline of Hofmann and Rünger 2008): P-1 -> P-2 -> ... -> 0. Each rank folds
 own ⊗ (what came from above) and passes it on; pieces of the index space
 stream through it, so for large vectors every link is busy at once. With
 the RLE wire format each hop is the fused "incoming compressed ⊗ local ->
 outgoing compressed" kernel.

 @verbatim
   P = 5:   4 -> 3 -> 2 -> 1 -> 0
 @endverbatim
*/

#include "tree.hpp"

namespace sparse_reduce {

/// The chain over P ranks, serving `root`.
/// @param size        P, the number of ranks
/// @param root        the rank that receives the result
/// @param commutative whether the tree may be rotated onto the root (else it
///                    keeps rank order and its top forwards to the root)
/// @throws sparse_reduce::error for an invalid root
inline tree chain_tree(int size, int root, bool commutative)
{
    tree t = detail::build_interval_tree(size, [](int lo, int hi, int, std::vector<detail::interval>& out) {
        if (lo + 1 < hi) out.push_back({lo + 1, hi});
        return lo;
    });
    t.name = "chain";
    return detail::place_root(std::move(t), root, commutative);
}

} // namespace sparse_reduce
