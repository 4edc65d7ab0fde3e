#pragma once
/// @file
/// sparse_reduce::allreduce, MPI_Allreduce for sparse vectors, and its plans
/// (make_allreduce_plan, allreduce_plan). Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///
///      report allreduce(comm, in, out, op [, policy]);
///      auto plan = make_allreduce_plan(comm, dimension [, policy]);
///      report r = plan.allreduce(in, out, op);
///      reduce_request q = plan.start(in, out, op);   // or iallreduce(comm, in, out, op [, policy])
///      ... q.test() ...; report r = q.wait();
///
/// Same vectors, operators and wire formats as reduce; out is written on
/// every rank, in the caller's type. Algorithms (doc/allreduce.md):
///
///      policy::reduce_broadcast{.tree = P}  reduce's plan with policy P to rank 0,
///          then a pipelined broadcast of the result: wire blocks of one segment
///          of the index space each, packed into messages of about the segment
///          size, each forwarded as soon as it arrives; over a binomial tree, or
///          over two trees taking alternate windows after P = two_tree.
///      policy::recursive_doubling{}  log2 P exchanges of whole partial results
///          with rank ^ 2^k; a partial is index/value until that outgrows dense,
///          then dense (folded in place); on the wire, per block, whichever form
///          is smaller. P not a power of two: ranks 2i+1 < 2r (r = P -
///          2^floor(log2 P)) fold into 2i first and get the result back last.
///      policy::split_allgather{}  a reduce_scatter by block ranges (wire blocks,
///          one message per peer), then an allgather of the reduced ranges;
///          a full range (every element present) goes as raw values, sent
///          from and received into the caller's arrays.
///      policy::grouped{}  Chen and Lee (n.d.) on a 2D mesh of ranks: reduce_scatter within
///          groups, recursive doubling across corresponding members, allgather
///          back (split_allgather is one group of all ranks).
///      policy::automatic (default)  the least of recursive doubling,
///          reduce_broadcast and split-allgather by the α-β-γ model, from the
///          mean entry count (one small allreduce per call); with the adaptive
///          wire, dense blocks where the model prices them no higher (the
///          adaptive wire must win by 5%, as in reduce's choice). On one rank
///          a dense input is copied into the output (one pass), whatever the model.
///
/// Non-commutative operations keep rank order: the reduce does; recursive
/// doubling always puts the lower ranks' partial on the left; the pieces of a
/// range are folded in rank order; grouped needs groups of consecutive ranks.
///
/// Errors end in sparse_reduce::error on EVERY rank (not only the root and
/// the detecting rank, as in reduce): reduce_broadcast sends the root's
/// outcome down the broadcast tree before any data; the others carry a status
/// in every message (a failed rank goes on exchanging empty messages) and end
/// with one allreduce of the status, then the failing rank's message is
/// broadcast. An op may throw anything (`throw 42;` too): every exception is
/// caught and becomes that rank's failure. Before anything is sent, the plan
/// refuses an intercommunicator and an invalid policy (validate in
/// policy_check.hpp) on every rank, and ranks of different dimensions, naming
/// the ranks whose dimension is not the most common one. An op made by
/// make_op whose identity does not hold on a sample of some rank's values (a
/// plan's first call with that op) throws on every rank, naming the rank.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../exec/comm_state.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/transport.hpp"
#include "../mpi/pending.hpp"
#include "../error.hpp"
#include "../kernel/identity_law.hpp"
#include "../policy.hpp"
#include "../policy_check.hpp"
#include "../report.hpp"
#include "../select/group_shape.hpp"
#include "../select/tuning.hpp"
#include "allreduce/algorithms.hpp"
#include "allreduce/estimate.hpp"
#include "allreduce/grouped.hpp"
#include "allreduce/one_rank.hpp"
#include "allreduce/recursive_doubling.hpp"
#include "allreduce/reduce_broadcast.hpp"
#include "allreduce/status.hpp"
#include "allreduce_start.hpp"
#include "call_check.hpp"
#include "reduce.hpp"

namespace sparse_reduce {

namespace detail {
// The message buffers of one-shot allreduce calls, kept on the user's
// communicator (comm_state's memo): a loop of one-shot calls grows and
// zeroes them once, as a plan's calls do.
struct oneshot_allreduce_buffers {
    std::shared_ptr<exchange_buffers> buffers = std::make_shared<exchange_buffers>();
};
struct oneshot_t {}; // the constructor one-shot calls make their plan with
} // namespace detail

/// An allreduce policy: policy::automatic, reduce_broadcast, recursive_doubling,
/// split_allgather or grouped.
template <class P>
concept allreduce_policy = std::same_as<P, policy::automatic> || detail::allreduce_algorithm_of<P>.has_value();

/// An allreduce for a fixed communicator, dimension and policy, made once and
/// called many times (make it with make_allreduce_plan). Collective: every
/// rank makes the same plan and makes its calls in the same order.
/// @tparam Policy an allreduce policy (default policy::automatic)
template <allreduce_policy Policy = policy::automatic>
class allreduce_plan {
    using tree_policy = typename detail::tree_policy_of<Policy>::type;
    static constexpr bool is_automatic = std::same_as<Policy, policy::automatic>;
    static constexpr bool has_reduce =
        is_automatic || detail::row_of(*detail::allreduce_algorithm_of<Policy>).runs_reduce;
    // split_allgather's and grouped's streamed exchanges (automatic runs the first)
    static constexpr bool runs_streams = detail::plan_runs<Policy>(detail::allreduce_algorithm::split_allgather) ||
                                         detail::plan_runs<Policy>(detail::allreduce_algorithm::grouped);

public:
    /// Makes the plan; collective (the ranks agree on the dimension).
    /// @param comm      an intracommunicator
    /// @param dimension every rank's vector dimension
    /// @param policy    the algorithm and its parameters
    /// @throws sparse_reduce::error on every rank for an intercommunicator, an
    ///         invalid policy or group shape, or ranks of different dimensions
    allreduce_plan(const boost::mpi::communicator& comm, std::size_t dimension, Policy policy = {})
        : private_owner_(checked_private_comm(comm, policy)), private_(private_owner_->comm), size_(comm.size()),
          rank_(comm.rank()), dimension_(dimension), policy_(policy)
    {
        init(comm, false);
    }

    /// For allreduce(comm, ...): a plan whose message buffers are the
    /// communicator's, shared by every one-shot call on it.
    allreduce_plan(detail::oneshot_t, const boost::mpi::communicator& comm, std::size_t dimension, Policy policy)
        : private_owner_(checked_private_comm(comm, policy)), private_(private_owner_->comm), size_(comm.size()),
          rank_(comm.rank()), dimension_(dimension), policy_(policy)
    {
        init(comm, true);
    }

    /// grouped, split_allgather and automatic (its split-allgather): the mesh of ranks.
    const mesh_shape& mesh() const { return groups_.mesh; }
    /// grouped, split_allgather and automatic (its split-allgather: one group
    /// of all ranks): the groups (none until the first call when the model
    /// chooses them).
    std::optional<group_shape> groups() const
    {
        return groups_.layout ? std::optional<group_shape>(groups_.layout->shape) : std::nullopt;
    }

    std::size_t dimension() const { return dimension_; } ///< The vectors' dimension.
    const Policy& policy() const { return policy_; }     ///< The policy.

    /// Reduces every rank's `in` into `out` on every rank; collective.
    /// Any argument types: a wrong one fails to compile with a message that
    /// names the fix.
    /// @param in  this rank's vector, of the plan's dimension
    /// @param out the result, written on every rank, in its own type
    /// @param op  an associative_op over the value type
    /// @return what this rank did
    /// @throws sparse_reduce::error on every rank when any rank fails
    template <class In, class Out, class Op>
    report allreduce(const In& in, Out&& out, const Op& op)
    {
        // Shared texts: a report costs no allocation for them. Made on the
        // first call; a rank that cannot make them leaves the reason empty
        // (the call goes on: the others are already in it).
        report_text named, modelled;
        try {
            static const report_text named_once("the policy names this algorithm"),
                modelled_once("the allreduce cost model predicts it fastest (doc/allreduce.md)");
            named = named_once;
            modelled = modelled_once;
        } catch (...) {
        }
        if constexpr (!detail::checked_call<In, Out, Op>()) {
            return {};
        } else {
            detail::require_not_finalized(); // a plan holds its communicators' handles
            detail::complete_pending(); // started calls first (mpi/pending.hpp)
            detail::complete_started(buffers_->started); // the plan's (one-shot: the communicator's)
            // The ranks agreed on the plan's dimension: past the limit, all throw here.
            detail::check_dimension_limit(dimension_, sizeof(value_type_of<In>));
            const double start = MPI_Wtime();
            auto&& target = detail::writable_output(std::forward<Out>(out));
            test_identity_law(in, op);
            report r;
            if constexpr (!is_automatic) {
                r = run(*detail::allreduce_algorithm_of<Policy>, in, target, op);
                r.reason = named;
            } else {
                if constexpr (repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense)
                    if (size_ == 1) {
                        r = detail::one_rank_allreduce(dimension_, in, target, op);
                        name_tuning(r);
                        r.seconds = MPI_Wtime() - start;
                        return r;
                    }
                const auto [a, w] = choose<value_type_of<In>, detail::builds_in_output<std::remove_cvref_t<decltype(target)>>>(in, op);
                r = run(a, in, target, op, w);
                r.reason = modelled;
                name_tuning(r);
            }
            r.seconds = MPI_Wtime() - start;
            return r;
        }
    }

    /// Starts allreduce(in, out, op) and returns at once: the request's
    /// test() and wait() complete it (collective/reduce_request.hpp).
    /// Collective: every rank starts its plans' calls in the same order.
    /// `in` and `out` belong to the call until it completes (nothing checks
    /// it). A plan runs one call at a time: its next call, started or not,
    /// completes this one first. Policies reduce_broadcast,
    /// recursive_doubling and split_allgather run as the blocking call does;
    /// automatic chooses as the blocking call does (one small agreement, so
    /// it first finishes the transfers of every started call of the
    /// process). grouped has no started form.
    /// @throws sparse_reduce::error where the blocking call throws before
    ///         its first message (on every rank); later failures are wait()'s
    template <class In, class Out, class Op>
        requires(detail::plan_starts<Policy>())
    reduce_request start(const In& in, Out&& out, const Op& op)
    {
        reduce_request request;
        if constexpr (detail::checked_call<In, Out, Op>()) {
            using T = value_type_of<In>;
            using A = detail::allreduce_algorithm;
            detail::require_not_finalized();
            // the plan's first call with op agrees on its identity law, and
            // automatic on its choice: no rank may wait there on a rank that
            // waits on a started call
            if (is_automatic || detail::identity_law_untested<Op>(buffers_->identity_tested)) detail::complete_pending();
            detail::check_dimension_limit(dimension_, sizeof(T));
            auto&& target = detail::writable_output(std::forward<Out>(out));
            test_identity_law(in, op);
            buffers_->bitmap = bitmap_;
            A a = A::reduce_broadcast;
            wire::format w = wire::adaptive; // recursive doubling's
            if constexpr (requires { policy_.wire; }) w = policy_.wire;
            if constexpr (is_automatic) {
                const auto [chosen, chosen_wire] =
                    choose<T, detail::builds_in_output<std::remove_cvref_t<decltype(target)>>>(in, op, true);
                a = chosen;
                w = chosen_wire;
            } else {
                a = *detail::allreduce_algorithm_of<Policy>;
            }
            report_text reason, tuned;
            try { // (texts that cannot be made are left empty)
                static const report_text named("the policy names this algorithm"),
                    modelled("the allreduce cost model predicts it fastest of the startable algorithms (doc/allreduce.md)");
                reason = is_automatic ? modelled : named;
                if constexpr (is_automatic) tuned = tuning_text();
            } catch (...) {
            }
            if constexpr (detail::plan_runs<Policy>(A::recursive_doubling))
                if (a == A::recursive_doubling) {
                    std::size_t seg = 0;
                    if constexpr (requires { policy_.segment_bytes; }) seg = policy_.segment_bytes;
                    detail::start_doubling(private_owner_, buffers_, dimension_, in,
                                           std::forward<decltype(target)>(target), op, w, seg, reason, tuned,
                                           is_automatic, request);
                    return request;
                }
            if constexpr (detail::plan_runs<Policy>(A::split_allgather))
                if (a == A::split_allgather) {
                    detail::start_split(private_owner_, buffers_, groups_.layout, dimension_, in,
                                        std::forward<decltype(target)>(target), op, w, policy_.segment_bytes,
                                        is_automatic ? std::span<const std::uint64_t>(counted_)
                                                     : std::span<const std::uint64_t>(),
                                        reason, tuned, is_automatic, request);
                    return request;
                }
            if constexpr (detail::plan_runs<Policy>(A::reduce_broadcast)) {
                std::size_t seg = 0; // automatic: the reduce's segment
                if constexpr (!is_automatic) seg = policy_.broadcast_segment_bytes;
                detail::start_reduce_broadcast(*reduce_, private_owner_, buffers_, dimension_, in,
                                               std::forward<decltype(target)>(target), op, seg, bitmap_, reason,
                                               request);
            }
        }
        return request;
    }
    /// A temporary input (other than a view, such as a std::span) would be
    /// gone before the call reads it: refused at compile time.
    template <class In, class Out, class Op>
        requires(!std::is_lvalue_reference_v<In> && !std::ranges::view<std::remove_cvref_t<In>>)
    reduce_request start(In&& in, Out&& out, const Op& op) = delete;

private:
    // On the plan's first call with this operation type (one-shot calls:
    // the communicator's first): does op's declared identity hold on a
    // sample of every rank's values? One small agreement; a violation
    // anywhere throws on every rank, naming the rank.
    template <class In, class Op>
    void test_identity_law(const In& in, const Op& op)
    {
        if (const auto broken = detail::identity_law_once(buffers_->identity_tested, op, identity<value_type_of<In>>(op), in))
            detail::throw_if_any_failed(private_, broken->empty() ? *broken : "rank " + std::to_string(rank_) + ": " + *broken,
                                        "allreduce failed on");
    }

    // automatic's report: its choice and the tuning it read, named once per
    // tuning. The call has succeeded: texts that cannot be made stay empty.
    void name_tuning(report& r)
    {
        try {
            if (!r.algorithm.empty_text()) r.algorithm = "automatic: " + r.algorithm.str();
            r.tuning = tuning_text();
        } catch (...) {
        }
    }
    // The tuning's name, made once per tuning.
    report_text tuning_text()
    {
        const tuning& t = policy_.tuned ? *policy_.tuned : current_tuning(policy_.tuning_file);
        if (!buffers_->tuning || *buffers_->tuning != t.source)
            buffers_->tuning = std::make_shared<const std::string>(t.source);
        return report_text(buffers_->tuning);
    }

    // The drain a rank takes a message into when it cannot store it
    // (recursive doubling's, reduce_broadcast's largest message); 0: none.
    std::size_t drain_bytes() const
    {
        std::size_t bytes = 0;
        if constexpr (detail::plan_runs<Policy>(detail::allreduce_algorithm::recursive_doubling))
            bytes = detail::doubling_drain_bytes(policy_.segment_bytes);
        if constexpr (detail::plan_runs<Policy>(detail::allreduce_algorithm::reduce_broadcast)) {
            std::size_t seg = 0; // reduce_then_broadcast's
            if constexpr (is_automatic) seg = policy_.segment_bytes;
            else seg = policy_.broadcast_segment_bytes ? policy_.broadcast_segment_bytes : policy_.tree.segment_bytes;
            bytes = std::max(bytes, detail::broadcast_drain_bytes(seg));
        }
        if constexpr (runs_streams) bytes = std::max(bytes, detail::stream_drain_bytes(policy_.segment_bytes, policy_.wire));
        return bytes;
    }

    // What both constructors do, collectively. What this rank makes for the
    // plan alone (its buffers or the communicator's and recursive doubling's
    // drain, the reduce half of a fixed tree, the one group of all ranks)
    // comes first; the ranks' one vote on the dimension also says whether
    // that failed anywhere, so that all throw together. automatic's reduce
    // half reads the tuning and agrees in its own constructor; grouped's
    // groups are split collectively.
    void init(const boost::mpi::communicator& comm, bool one_shot)
    {
        detail::comm_state& state = detail::state_of(MPI_Comm(comm)); // collective on first use, agreed
        std::optional<detail::made_policy> tree;
        if constexpr (has_reduce && !is_automatic) tree.emplace(detail::make_plan_policy(policy_.tree)); // validates
        std::string failure;
        try {
            buffers_ = one_shot ? state.template memo<detail::oneshot_allreduce_buffers>().buffers
                                : std::make_shared<detail::exchange_buffers>();
            if constexpr (has_reduce && !is_automatic) reduce_.emplace(comm, 0, dimension_, std::move(*tree), true);
            if (buffers_->drain.size() < drain_bytes()) buffers_->drain.make(drain_bytes());
            if constexpr (runs_streams) {
                detail::make_stream_room(*buffers_, static_cast<std::size_t>(size_));
                counted_.reserve(static_cast<std::size_t>(size_));
            }
            if constexpr (std::same_as<Policy, policy::split_allgather> || is_automatic) {
                groups_.mesh = {1, size_, false};
                groups_.layout = std::make_shared<detail::group_layout>(detail::whole_group_layout(private_, dimension_));
            }
        } catch (...) {
            failure = detail::text_or_out_of_memory([&] { return detail::rank_failure_text(rank_); });
        }
        // The ranks agree on the dimension once; a call's vector is then
        // checked against the plan's locally.
        const auto vote = detail::vote_on_dimension(private_, dimension_, detail::most_common_dimension, false,
                                                    failure.empty() ? -1 : rank_);
        if (vote.failed_setup >= 0)
            detail::fail("making the plan failed on " +
                         (failure.empty() ? "rank " + std::to_string(vote.failed_setup) : failure));
        if constexpr (is_automatic) reduce_.emplace(comm, 0, dimension_, detail::make_plan_policy(policy_), true);
        if constexpr (std::same_as<Policy, policy::grouped>) {
            groups_.mesh = detail::mesh_of(MPI_Comm(comm), policy_.mesh_rows, policy_.mesh_cols);
            if (policy_.group_rows || policy_.group_cols) {
                const group_shape g{policy_.group_rows, policy_.group_cols};
                if (const auto why = check_group_shape(g, groups_.mesh); !why.empty()) detail::fail(why);
                std::string failure;
                auto layout = detail::make_group_layout(private_, groups_.mesh, &g, dimension_, failure);
                detail::agree_and_throw(private_, rank_, failure, 0);
                groups_.layout = std::move(layout);
            }
        }
    }

    // Before anything is sent, on every rank alike: an intracommunicator, a
    // valid policy (segment sizes, finite cost models); then the library's
    // private duplicate of comm, a share of which the plan keeps.
    static std::shared_ptr<detail::private_duplicate> checked_private_comm(const boost::mpi::communicator& comm,
                                                                           const Policy& policy)
    {
        detail::enter_collective(MPI_Comm(comm), "allreduce");
        if constexpr (requires { validate(policy); }) validate(policy);
        return detail::private_comm_owner(MPI_Comm(comm));
    }

    // automatic: the least estimate by the model, from the mean entry count
    // (one small allreduce; dimension mismatches are caught by either
    // algorithm), and its wire. With the adaptive wire, dense blocks unless
    // the adaptive ones win by the model's resolution (sreduce's rule): the
    // model prices adaptive blocks as index/value or dense, alike once dense
    // is no larger, where the encoder picks RLE for a few percent fewer bytes
    // at 4-9x the time on a fast link; there dense blocks win from about
    // 40 % density too (default tuning, P = 2; doc/benchmarks.md, "Adaptive
    // blocks at high density").
    template <class T, bool dense_output, class In, class Op>
    std::pair<detail::allreduce_algorithm, wire::format> choose(const In& in, const Op& op, bool started = false)
    {
        // counted by split-allgather's ranges: that algorithm then counts only its own
        // range again, as far as its format needs
        const double sum =
            detail::mean_entries(private_, in, identity<T>(op), false, nullptr, groups_.layout->ranges, &counted_,
                                 static_cast<std::size_t>(groups_.layout->member)) *
            size_;
        const tuning& t = policy_.tuned ? *policy_.tuned : current_tuning(policy_.tuning_file);
        const std::size_t seg = policy_.segment_bytes ? policy_.segment_bytes : default_segment_bytes;
        const auto estimate = [&](bool dense_wire) {
            return detail::estimate_allreduce(size_, sum / size_, static_cast<double>(dimension_),
                                              sizeof(T), static_cast<double>(seg), t.machine, dense_output,
                                              dense_wire);
        };
        const auto e = estimate(policy_.wire == wire::dense);
        const auto a = detail::cheapest(e, started);
        // Only a dense input goes raw under the dense wire (its values in a
        // row); an index/value one would send dense blocks, into a sparse
        // accumulator below half density. The ranks pass one kind of vector.
        constexpr bool dense_input = repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense;
        if (policy_.wire != wire::adaptive || !dense_input) return {a, policy_.wire};
        const auto dense = estimate(true);
        const auto d = detail::cheapest(dense, started);
        if (e.*detail::row_of(a).estimate < model_win_factor * (dense.*detail::row_of(d).estimate)) return {a, wire::adaptive};
        return {d, wire::dense};
    }

    // The algorithm `a` (one this plan's policy can run: detail::plan_runs).
    // `w`: automatic's wire (a fixed policy's is its own).
    template <class In, class Out, class Op>
    report run(detail::allreduce_algorithm a, const In& in, Out& out, const Op& op, wire::format w = wire::adaptive)
    {
        using A = detail::allreduce_algorithm;
        buffers_->bitmap = bitmap_; // one-shot plans of other policies share the buffers
        switch (a) {
        case A::reduce_broadcast:
            if constexpr (detail::plan_runs<Policy>(A::reduce_broadcast)) {
                std::size_t seg = 0; // automatic: the reduce's segment
                if constexpr (!is_automatic) seg = policy_.broadcast_segment_bytes;
                return detail::reduce_then_broadcast(*reduce_, private_, dimension_, in, out, op, seg, bitmap_,
                                                     buffers_->drain);
            }
            break;
        case A::recursive_doubling:
            if constexpr (detail::plan_runs<Policy>(A::recursive_doubling))
                return detail::doubling_allreduce(private_, dimension_, in, out, op, is_automatic ? w : policy_.wire,
                                                  policy_.segment_bytes, *buffers_);
            break;
        case A::split_allgather:
            if constexpr (is_automatic)
                return detail::grouped_allreduce(
                    private_, dimension_, policy::split_allgather{.wire = w, .segment_bytes = policy_.segment_bytes},
                    groups_, in, out, op, *buffers_, counted_);
            else if constexpr (detail::plan_runs<Policy>(A::split_allgather))
                return detail::grouped_allreduce(private_, dimension_, policy_, groups_, in, out, op, *buffers_);
            break;
        case A::grouped:
            if constexpr (detail::plan_runs<Policy>(A::grouped))
                return detail::grouped_allreduce(private_, dimension_, policy_, groups_, in, out, op, *buffers_);
            break;
        }
        // Not reached: a fixed policy runs its own algorithm, automatic a candidate.
        detail::fail("allreduce: an algorithm its plan does not run");
    }

    // The private duplicate, shared: the plan works after the user frees the
    // communicator it was made on.
    std::shared_ptr<detail::private_duplicate> private_owner_;
    MPI_Comm private_;
    int size_, rank_;
    std::size_t dimension_;
    Policy policy_;
    std::optional<detail::reduce_core> reduce_; // the reduce half, for every tree policy alike
    detail::grouped_state groups_; // grouped, split_allgather and automatic's: mesh and groups (shared by copies)
    std::vector<std::uint64_t> counted_; // automatic: this call's entries per range of groups_ (dense inputs)
    std::shared_ptr<detail::exchange_buffers> buffers_; // made in init
    bool bitmap_ = detail::bitmap_blocks(policy_); // adaptive blocks may take the bitmap form (its tuning)
};

/// Makes an allreduce_plan (collective); see its constructor for the parameters.
template <allreduce_policy Policy = policy::automatic>
allreduce_plan<Policy> make_allreduce_plan(const boost::mpi::communicator& comm, std::size_t dimension,
                                           Policy policy = {})
{
    return allreduce_plan<Policy>(comm, dimension, policy);
}

/// MPI_Allreduce for sparse vectors: folds every rank's `in` with `op` into
/// `out` on every rank. Collective.
/// @param comm   an intracommunicator
/// @param in     this rank's vector (any representation); same dimension on every rank
/// @param out    the result (any representation of the same value type), on every rank
/// @param op     an associative_op; non-commutative ones keep rank order
/// @param policy the algorithm (default automatic: chosen by the cost model)
/// @return what this rank did
/// @throws sparse_reduce::error on every rank when any rank fails (an op
///         that throws, a corrupt input, mismatched dimensions, an invalid policy)
template <class In, class Out, class Op, allreduce_policy Policy = policy::automatic>
report allreduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, Policy policy = {})
{
    if constexpr (detail::checked_call<In, Out, Op>())
        return allreduce_plan<Policy>(detail::oneshot_t{}, comm, dimension(in), policy)
            .allreduce(in, std::forward<Out>(out), op);
    else
        return {};
}

/// Starts allreduce(comm, in, out, op [, policy]) and returns at once; the
/// request's test() and wait() complete it, as for allreduce_plan::start
/// (policy: automatic, reduce_broadcast, recursive_doubling or split_allgather).
/// Its state is the communicator's: the next one-shot allreduce or
/// iallreduce on comm completes it first. Like every one-shot call it
/// agrees with the other ranks before its first message, so it first
/// finishes the transfers of every started call of the process.
template <class In, class Out, class Op, allreduce_policy Policy = policy::automatic>
    requires(detail::plan_starts<Policy>())
reduce_request iallreduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op,
                          Policy policy = {})
{
    if constexpr (detail::checked_call<In, Out, Op>())
        return allreduce_plan<Policy>(detail::oneshot_t{}, comm, dimension(in), policy)
            .start(in, std::forward<Out>(out), op);
    else
        return {};
}
/// A temporary input (other than a view) would be gone before the call
/// reads it: refused at compile time.
template <class In, class Out, class Op, allreduce_policy Policy = policy::automatic>
    requires(!std::is_lvalue_reference_v<In> && !std::ranges::view<std::remove_cvref_t<In>>)
reduce_request iallreduce(const boost::mpi::communicator& comm, In&& in, Out&& out, const Op& op,
                          Policy policy = {}) = delete;

} // namespace sparse_reduce
