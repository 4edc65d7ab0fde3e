#pragma once
/// @file
/// validate(policy): the checks of a policy that need no communication.
/// Include `<sparse_reduce/sparse_reduce.hpp>`; the collectives call it.
///
/// Every rank passes the same policy, so a collective that calls validate
/// first throws sparse_reduce::error on every rank before anything is sent.
///
///      validate(const cost_model&, who)  every field finite and >= 0 (a NaN or
///                                        infinite model would leave optimal_binary's
///                                        search and automatic's choice meaningless;
///                                        model/cost.hpp)
///      validate(const tuning&, who)      its model, and finite thresholds
///                                        (select/tuning.hpp)
///      validate(policy)                  for every reduce and allreduce policy:
///                                        segment_bytes (and broadcast_segment_bytes)
///                                        below max_segment_bytes (1 GiB; a message's
///                                        MPI count is an int), the cost model it
///                                        carries (optimal_binary's model,
///                                        automatic's and grouped's tuned), and
///                                        grouped's shapes not negative

#include <cstddef>
#include <string>

#include "error.hpp"
#include "model/cost.hpp"
#include "policy.hpp"
#include "select/tree_table.hpp"
#include "select/tuning.hpp"

namespace sparse_reduce {

// ---- reduce policies ----
/// Checks a tree policy (binomial, k_ary, binary, chain, two_tree): its segment size.
/// @throws sparse_reduce::error if segment_bytes is max_segment_bytes or more
template <tree_table_policy P>
void validate(const P& p)
{
    detail::check_segment(detail::tree_row_of<P>.name, "segment_bytes", p.segment_bytes);
}
/// Checks optimal_binary: its segment size and its cost model.
/// @throws sparse_reduce::error naming the field
inline void validate(const policy::optimal_binary& p)
{
    detail::check_segment("optimal_binary", "segment_bytes", p.segment_bytes);
    validate(p.model, "optimal_binary");
}
/// Checks automatic: its segment size and, when given, its tuning.
/// @throws sparse_reduce::error naming the field
inline void validate(const policy::automatic& p)
{
    detail::check_segment("automatic", "segment_bytes", p.segment_bytes);
    if (p.tuned) validate(*p.tuned, "automatic: tuned");
}

/// Any other reduce policy (the concept's own): its segment size.
/// @throws sparse_reduce::error if segment_bytes is max_segment_bytes or more
template <reduce_policy P>
void validate(const P& p)
{
    detail::check_segment("policy", "segment_bytes", p.segment_bytes);
}

// ---- allreduce policies ----
/// Checks reduce_broadcast: its tree's policy and broadcast_segment_bytes.
/// @throws sparse_reduce::error naming the field
template <reduce_policy Tree>
void validate(const policy::reduce_broadcast<Tree>& p)
{
    validate(p.tree);
    detail::check_segment("reduce_broadcast", "broadcast_segment_bytes", p.broadcast_segment_bytes);
}
/// Checks recursive_doubling's segment size.
/// @throws sparse_reduce::error if segment_bytes is max_segment_bytes or more
inline void validate(const policy::recursive_doubling& p)
{
    detail::check_segment("recursive_doubling", "segment_bytes", p.segment_bytes);
}
/// Checks split_allgather's segment size.
/// @throws sparse_reduce::error if segment_bytes is max_segment_bytes or more
inline void validate(const policy::split_allgather& p)
{
    detail::check_segment("split_allgather", "segment_bytes", p.segment_bytes);
}
/// Checks grouped: segment size, shapes not negative, and its tuning if given.
/// @throws sparse_reduce::error naming the field
inline void validate(const policy::grouped& p)
{
    detail::check_segment("grouped", "segment_bytes", p.segment_bytes);
    if (p.group_rows < 0 || p.group_cols < 0 || p.mesh_rows < 0 || p.mesh_cols < 0)
        detail::fail("grouped: group and mesh sides must not be negative (0 = chosen)");
    if (p.tuned) validate(*p.tuned, "grouped: tuned");
}

} // namespace sparse_reduce
