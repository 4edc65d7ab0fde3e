#pragma once
/// @file
/// sparse_reduce::reduce, MPI_Reduce for sparse vectors, and its plans
/// (make_plan, reduce_plan). Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///     report reduce(comm, in, out, op, root [, policy]);
///     auto plan = make_plan(comm, root, dimension [, policy]);
///     report r = plan.reduce(in, out, op);
///     reduce_request q = plan.start(in, out, op);        // or ireduce(comm, in, out, op, root [, policy])
///     report r = q.wait();
///
/// in and out are any supported vectors (Eigen::SparseVector, Eigen dense,
/// std::vector, std::span, index_value_vector, rle_vector), of the same value
/// type. out is written on the root only, in the caller's type. A std::span
/// pair is the dense drop-in: identity elements hidden in the buffer are found
/// and left off the wire.
///
/// Non-commutative operations (is_commutative_v false, the default for
/// unknown types) are folded in rank order: every tree here has an
/// order-preserving form, used as is, and its top forwards the result to any
/// other root. Commutative operations get the tree rotated onto the root.
///
/// Failure never hangs: if a rank's op throws, its input is corrupt or of
/// another dimension than its plan's, or a message is malformed, the error
/// travels up the tree; the root throws sparse_reduce::error naming the rank
/// where it happened, and so does the rank that detected it. An invalid root
/// or policy, and ranks whose one-shot vectors (or plans) differ in
/// dimension, throw on every rank before anything is sent.

#include <concepts>
#include <ranges>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mpi/communicator.hpp>

#include "../policy.hpp"
#include "../report.hpp"
#include "../schedule/schedule.hpp"
#include "../select/policy_value.hpp"
#include "../tree/tree.hpp"
#include "call_check.hpp"
#include "reduce_compiled.hpp"
#include "reduce_core.hpp"

namespace sparse_reduce {

/// A reduce for a fixed communicator, root, dimension and policy, made once
/// and called many times: it keeps its schedule and buffers between calls
/// (make it with make_plan). Copies share them. Collective: every rank makes
/// the same plan and makes its calls in the same order.
///
/// The work is done by a core that holds the policy as a run-time value, so
/// plans of several policies in one program share their compiled code.
/// @tparam Policy a policy:: tree, or policy::any (default policy::automatic)
template <reduce_policy_or_any Policy = policy::automatic>
class reduce_plan {
public:
    /// Makes the plan; collective (one small allreduce for automatic and
    /// k_ary{.k = 0}).
    /// @param comm      an intracommunicator (the plan works on a private duplicate)
    /// @param root      the rank that receives the result
    /// @param dimension every rank's vector dimension
    /// @param policy    the tree, wire format and segment size
    /// @throws sparse_reduce::error on every rank for an invalid root or
    ///         policy, ranks of different dimensions (naming them), or a
    ///         tuning file that cannot be read on some rank
    reduce_plan(const boost::mpi::communicator& comm, int root, std::size_t dimension, Policy policy = {})
        : core_(comm, root, dimension, detail::make_plan_policy(policy), false), any_(held_any(policy))
    {
    }

    int root() const { return core_.root(); }                 ///< The root rank.
    std::size_t dimension() const { return core_.dimension(); } ///< The vectors' dimension.
    /// The policy.
    const Policy& policy() const
    {
        if constexpr (is_any) return any_;
        else return *core_.policy().template get<Policy>();
    }

    /// What reduce runs for values of value_bytes bytes when this rank holds
    /// local_entries entries. Collective for optimal_binary (an allgather of
    /// the entry counts), automatic and k_ary{k = 0} (a small allreduce);
    /// rebuilt only when what the ranks agree on changes.
    const schedule& schedule_for(bool commutative, std::size_t value_bytes, std::size_t local_entries = 0)
    {
        return core_.schedule_for(commutative, value_bytes, local_entries);
    }
    /// The first tree of schedule_for(commutative, 8, local_entries); collective likewise.
    const tree& tree_for(bool commutative, std::size_t local_entries = 0)
    {
        return core_.tree_for(commutative, local_entries);
    }

    /// Reduces every rank's `in` into `out` on the plan's root; collective.
    /// Any argument types: a wrong one fails to compile with a message that
    /// names the fix.
    /// @param in  this rank's vector, of the plan's dimension
    /// @param out the result, written on the root only, in its own type
    /// @param op  an associative_op over the value type
    /// @return what this rank did
    /// @throws sparse_reduce::error on the root and on the rank that detected
    ///         a failure (an op that throws, a corrupt input, a dimension
    ///         other than the plan's, a wrong-sized output); the others return
    template <class In, class Out, class Op>
    report reduce(const In& in, Out&& out, const Op& op)
    {
        return core_.reduce(in, std::forward<Out>(out), op);
    }

    /// Starts reduce(in, out, op) and returns at once: the request's test()
    /// and wait() complete it (collective/reduce_request.hpp). Collective:
    /// every rank starts its plans' calls in the same order. `in` and `out`
    /// belong to the call until it completes (nothing checks it). A plan
    /// runs one call at a time: its next call, started or not, completes
    /// this one first. A started call always runs the windowed pipeline.
    /// @throws sparse_reduce::error where the blocking call throws before
    ///         its first message (on every rank); later failures are wait()'s
    template <class In, class Out, class Op>
    reduce_request start(const In& in, Out&& out, const Op& op)
    {
        reduce_request request;
        core_.start(in, std::forward<Out>(out), op, request);
        return request;
    }
    /// A temporary input (other than a view, such as a std::span) would be
    /// gone before the call reads it: refused at compile time.
    template <class In, class Out, class Op>
        requires(!std::is_lvalue_reference_v<In> && !std::ranges::view<std::remove_cvref_t<In>>)
    reduce_request start(In&& in, Out&& out, const Op& op) = delete;

private:
    static constexpr bool is_any = std::same_as<Policy, policy::any>;
    // policy::any's copy (the core holds the tree it names); nothing for a tree.
    struct no_copy {};
    using any_copy = std::conditional_t<is_any, policy::any, no_copy>;
    static any_copy held_any(const Policy& p)
    {
        if constexpr (is_any) return p;
        else return {};
    }

    detail::reduce_core core_;
    [[no_unique_address]] any_copy any_;
};

/// Makes a reduce_plan: for repeated reduces of one dimension to one root.
/// Collective. See reduce_plan's constructor for the parameters.
///
///     auto plan = sparse_reduce::make_plan(comm, 0, dimension);
///     for (...) plan.reduce(in, out, std::plus<>{});
template <reduce_policy_or_any Policy = policy::automatic>
reduce_plan<Policy> make_plan(const boost::mpi::communicator& comm, int root, std::size_t dimension, Policy policy = {})
{
    return reduce_plan<Policy>(comm, root, dimension, policy);
}

namespace detail {

// A one-shot reduce: a plan's core for this call (its memory and memo the
// communicator's), used once.
template <class In, class Out, class Op, class Policy>
report reduce_once(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root,
                   const Policy& policy)
{
    if constexpr (checked_call<In, Out, Op>())
        return reduce_core(one_shot_t{}, comm, root, dimension(in), policy).reduce(in, std::forward<Out>(out), op);
    else
        return {};
}

} // namespace detail

/// MPI_Reduce for sparse vectors: folds every rank's `in` with `op` into `out`
/// on `root`. Collective; a one-shot call keeps its schedule and buffers on
/// the communicator, so a loop of calls allocates nothing.
/// @param comm   an intracommunicator
/// @param in     this rank's vector (any representation); same dimension on every rank
/// @param out    the result (any representation of the same value type),
///               written on the root only
/// @param op     an associative_op; non-commutative ones are folded in rank order
/// @param root   the rank that receives the result
/// @param policy the tree, wire format and segment size (default automatic)
/// @return what this rank did (algorithm, reason, bytes, messages, seconds)
/// @throws sparse_reduce::error on the root and on the rank that detected a
///         failure (the others return normally); on every rank, before
///         anything is sent, for an invalid root or policy and for ranks whose
///         vectors differ in dimension (naming the ranks whose dimension is
///         not the root's)
template <class In, class Out, class Op, reduce_policy Policy = policy::automatic>
report reduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root,
              const Policy& policy = {})
{
    return detail::reduce_once(comm, in, std::forward<Out>(out), op, root, policy);
}

/// reduce with a tree chosen at run time: as reduce with the tree `policy`
/// holds (the caller's code around it compiled once for every tree).
template <class In, class Out, class Op, std::same_as<policy::any> Any>
report reduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root, const Any& policy)
{
    return detail::reduce_once(comm, in, std::forward<Out>(out), op, root, policy);
}

/// Starts reduce(comm, in, out, op, root [, policy]) and returns at once;
/// the request's test() and wait() complete it, as for reduce_plan::start.
/// Its state is the communicator's: the next one-shot reduce or ireduce on
/// comm completes it first. Like every one-shot call it agrees with the
/// other ranks before its first message, so it first finishes the
/// transfers of every started call of the process. A policy::any is taken
/// as the tree it holds.
template <class In, class Out, class Op, reduce_policy_or_any Policy = policy::automatic>
reduce_request ireduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root,
                       const Policy& policy = {})
{
    reduce_request request;
    if constexpr (detail::checked_call<In, Out, Op>())
        detail::reduce_core(detail::one_shot_t{}, comm, root, dimension(in), policy)
            .start(in, std::forward<Out>(out), op, request);
    return request;
}
/// A temporary input (other than a view) would be gone before the call
/// reads it: refused at compile time.
template <class In, class Out, class Op, reduce_policy_or_any Policy = policy::automatic>
    requires(!std::is_lvalue_reference_v<In> && !std::ranges::view<std::remove_cvref_t<In>>)
reduce_request ireduce(const boost::mpi::communicator& comm, In&& in, Out&& out, const Op& op, int root,
                       const Policy& policy = {}) = delete;

#ifdef SPARSE_REDUCE_INSTANCES_SOURCE
// The compiled mode's calls (collective/reduce_compiled.hpp), defined in the
// library's sources only.
template <class In, class Out, class Op, reduce_policy Policy>
    requires detail::compiled_reduce_call<In, Out, Op, Policy>
report reduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root,
              const Policy& policy)
{
    return detail::reduce_once(comm, in, std::forward<Out>(out), op, root, policy);
}
#endif

} // namespace sparse_reduce
