#pragma once
// allreduce's algorithms in one table (detail; collective/allreduce.hpp
// dispatches on it, as reduce does on select/tree_table.hpp): per algorithm
// whether its plan holds a reduce plan, whether automatic weighs it by its
// estimate and whether a started call can run it; per policy, the
// algorithm it runs.
//
// Adding an algorithm: its header in this folder, its policy in policy.hpp
// (and validate in policy_check.hpp), an enumerator, a row, its policy's
// line in allreduce_algorithm_of, and its case in allreduce_plan::run (the
// switch has no default, so -Wswitch names a missing one); where it is
// startable, its start in allreduce_plan::start (collective/allreduce_start.hpp).

#include <concepts>
#include <cstddef>
#include <optional>

#include "../../policy.hpp"
#include "estimate.hpp"

namespace sparse_reduce::detail {

// One enumerator per row of allreduce_algorithms, in its order.
enum class allreduce_algorithm { recursive_doubling, reduce_broadcast, split_allgather, grouped };

struct allreduce_row {
    allreduce_algorithm id;
    bool runs_reduce; // its plan holds a reduce plan (reduce_broadcast's reduce half)
    double allreduce_estimate::*estimate; // automatic weighs it by this; nullptr: never automatic's choice
    bool startable; // allreduce_plan::start runs it (a machine test() steps)
};

// In the order that wins a tie among automatic's candidates.
inline constexpr allreduce_row allreduce_algorithms[] = {
    //  id                                 reduce  automatic's estimate                    startable
    {allreduce_algorithm::recursive_doubling, false, &allreduce_estimate::recursive_doubling, true},
    {allreduce_algorithm::reduce_broadcast, true, &allreduce_estimate::reduce_broadcast, true},
    {allreduce_algorithm::split_allgather, false, &allreduce_estimate::split_allgather, true},
    {allreduce_algorithm::grouped, false, nullptr, false},
};

static_assert(
    [] {
        for (std::size_t i = 0; i < std::size(allreduce_algorithms); ++i)
            if (allreduce_algorithms[i].id != static_cast<allreduce_algorithm>(i)) return false;
        return true;
    }(),
    "allreduce_algorithms: one row per enumerator of allreduce_algorithm, in the enum's order");

constexpr const allreduce_row& row_of(allreduce_algorithm a) { return allreduce_algorithms[static_cast<std::size_t>(a)]; }

// The algorithm a fixed policy runs; none for automatic (it chooses per call)
// and for what is not an allreduce policy.
template <class P>
inline constexpr std::optional<allreduce_algorithm> allreduce_algorithm_of = std::nullopt;
template <>
inline constexpr std::optional<allreduce_algorithm> allreduce_algorithm_of<policy::recursive_doubling> =
    allreduce_algorithm::recursive_doubling;
template <class P>
    requires requires(const P& p) {
        { p.tree } -> reduce_policy;
        { p.broadcast_segment_bytes } -> std::convertible_to<std::size_t>;
    }
inline constexpr std::optional<allreduce_algorithm> allreduce_algorithm_of<P> = allreduce_algorithm::reduce_broadcast;
template <>
inline constexpr std::optional<allreduce_algorithm> allreduce_algorithm_of<policy::split_allgather> =
    allreduce_algorithm::split_allgather;
template <>
inline constexpr std::optional<allreduce_algorithm> allreduce_algorithm_of<policy::grouped> =
    allreduce_algorithm::grouped;

// Whether a plan for policy P may run algorithm a: its own, or for automatic
// a candidate (automatic's reduce_broadcast is its own reduce plan).
template <class P>
constexpr bool plan_runs(allreduce_algorithm a)
{
    if constexpr (std::same_as<P, policy::automatic>) return row_of(a).estimate != nullptr;
    else return allreduce_algorithm_of<P> == a;
}

// Whether a plan for policy P can start a call: its algorithm, or one of
// automatic's candidates, is startable.
template <class P>
constexpr bool plan_starts()
{
    for (const allreduce_row& row : allreduce_algorithms)
        if (row.startable && plan_runs<P>(row.id)) return true;
    return false;
}

// automatic's choice: the candidate with the least estimate (the first of
// equals); for a started call, among the startable ones.
inline allreduce_algorithm cheapest(const allreduce_estimate& e, bool started = false)
{
    const allreduce_row* best = nullptr;
    for (const allreduce_row& row : allreduce_algorithms)
        if (row.estimate && (row.startable || !started) && (!best || e.*row.estimate < e.*best->estimate)) best = &row;
    return best->id;
}

} // namespace sparse_reduce::detail
