#pragma once
/*
 Chain (the linear pipeline of Hofmann and Rünger 2008): P-1 -> P-2 -> ... -> 0. Each rank folds
 own ⊗ (what came from above) and passes it on; pieces of the index space
 stream through it, so for large vectors every link is busy at once. With
 the RLE wire format each hop is the fused "incoming compressed ⊗ local ->
 outgoing compressed" kernel.

   P = 5:   4 -> 3 -> 2 -> 1 -> 0
*/

#include "tree.hpp"

namespace sparse_reduce {

inline tree chain_tree(int size, int root, bool commutative)
{
    tree t = detail::build_interval_tree(size, [](int lo, int hi, std::vector<detail::interval>& out) {
        if (lo + 1 < hi) out.push_back({lo + 1, hi});
        return lo;
    });
    t.name = "chain";
    return detail::place_root(std::move(t), root, commutative);
}

} // namespace sparse_reduce
