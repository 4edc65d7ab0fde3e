#pragma once
// The schedule a reduce policy runs for a call (shared by reduce, allreduce's
// reduce half and the simulator): the policy's trees, or for automatic the
// choice sreduce makes from the agreed call statistics, with the segment size
// and wire format, as a schedule.

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../policy.hpp"
#include "../schedule/schedule.hpp"
#include "../tree/optimal_binary.hpp"
#include "../tree/tree.hpp"
#include "call_stats.hpp"
#include "sreduce.hpp"
#include "tree_table.hpp"
#include "tuning.hpp"

namespace sparse_reduce::detail {

// The schedule a policy runs for a call. Everything here comes from values
// every rank agrees on (the policy, gathered counts), so all build the same.
template <reduce_policy Policy>
schedule resolve_schedule(const Policy& policy, int size, int root, bool commutative, std::size_t dimension,
                          std::size_t value_bytes, std::span<const double> nnz, call_stats stats)
{
    std::size_t segment = policy.segment_bytes;
    wire::format format = policy.wire;
    std::vector<tree> trees;
    std::string selection;
    std::string reason = "the policy names this tree";
    bool bitmap = bitmap_blocks(policy);
    bool whole = stats.whole_messages; // a fixed tree: whole where the call may travel whole
    if constexpr (std::is_same_v<Policy, policy::optimal_binary>) {
        reason = "optimal binary tree: built for the ranks' entry counts";
        trees = {optimal_binary_tree(nnz, static_cast<double>(dimension), root, commutative, {.model = policy.model}).t};
    } else if constexpr (std::is_same_v<Policy, policy::automatic>) {
        if (policy.sparsity)
            stats.entries = (1 - std::clamp(*policy.sparsity, 0.0, 1.0)) * static_cast<double>(stats.dimension);
        if (policy.distribution) stats.distribution = *policy.distribution;
        const choice ch = sreduce(stats, policy.tuned ? *policy.tuned : current_tuning(policy.tuning_file), policy.wire,
                                  policy.segment_bytes);
        trees = algorithm_trees(ch.algo, ch.k, size, root, commutative);
        segment = ch.segment_bytes;
        format = ch.wire;
        whole = ch.whole;
        selection = "automatic: " + describe(ch);
        reason = ch.reason;
    } else if constexpr (std::is_same_v<Policy, policy::k_ary>) {
        const int k = policy.k > 0 ? policy.k : model_k(stats, current_tuning().machine);
        if (policy.k <= 0) reason = "k-ary tree: k chosen by the cost model";
        trees = algorithm_trees(algorithm::k_ary, k, size, root, commutative);
    } else if constexpr (tree_table_policy<Policy>) {
        trees = algorithm_trees(algorithm_of<Policy>, 0, size, root, commutative);
    } else { // a reduce_policy of the caller's own: the binomial tree
        reason = "binomial tree: the default for a policy of the caller's own";
        trees = algorithm_trees(algorithm::binomial, 0, size, root, commutative);
    }
    schedule s = make_schedule(std::move(trees), dimension, value_bytes, segment ? segment : default_segment_bytes,
                               format, bitmap);
    s.whole = whole;
    s.selection = std::move(selection);
    s.reason = std::move(reason);
    return s;
}

// The schedule of a call that travels whole at once (whole_rule::at_once,
// select/path.hpp): the policy's tree, or, where the policy would measure
// (P <= 2), the binomial edge. Nothing measured, no collective.
template <reduce_policy Policy>
schedule whole_schedule_at_once(const Policy& policy, int size, int root, bool commutative, std::size_t dimension,
                                std::size_t value_bytes)
{
    schedule s =
        needs_call_stats(policy)
            ? make_schedule(algorithm_trees(algorithm::binomial, 0, size, root, commutative), dimension, value_bytes,
                            default_segment_bytes, policy.wire)
            : resolve_schedule(policy, size, root, commutative, dimension, value_bytes, {}, call_stats{});
    s.whole = true;
    if (needs_call_stats(policy)) s.reason = "binomial tree: with two ranks every tree is the one edge";
    return s;
}

// The schedule of a call full_goes_in_windows (select/path.hpp) takes: the
// binomial edge, the dense wire.
inline schedule full_schedule_in_windows(int size, int root, bool commutative, std::size_t dimension,
                                         std::size_t value_bytes)
{
    schedule s = make_schedule(algorithm_trees(algorithm::binomial, 0, size, root, commutative), dimension,
                               value_bytes, default_segment_bytes, wire::dense);
    s.reason = "binomial tree, dense wire: every rank holds every element";
    return s;
}

} // namespace sparse_reduce::detail
