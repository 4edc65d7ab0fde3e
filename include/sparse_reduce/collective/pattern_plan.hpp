#pragma once
/// @file
/// Fixed-pattern plans: for codes that reduce values on the same sparsity
/// pattern call after call (finite-element assembly, a fixed mesh or graph),
/// the indices travel once. Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///     // once (collective): every rank's pattern, as global indices
///     auto plan = sparse_reduce::make_pattern_plan<double>(comm, dimension, indices);
///     // every step (collective): values only, aligned with the pattern
///     plan.reduce(values, out, std::plus<>{});   // out: plan.support()'s sums
///     auto req = plan.start(values, out, std::plus<>{}); // or started: req.test(), req.wait()
///
/// As PETSc's VecSetPreallocationCOO / VecSetValuesCOO: the pattern is a
/// list of global indices in any order, repeats allowed (they are folded
/// too), or the indices of an Eigen::SparseVector or index_value_vector. The
/// target says where the sums go (pattern_target):
///
///     scatter(ranges)  reduce_scatter: rank r gets [ranges[r], ranges[r + 1]) (default block_ranges)
///     root(r)          reduce: rank r gets everything
///     all()            allreduce: every rank gets everything
///
/// Matrices: `make_pattern_plan<T>(comm, rows, cols, i, j [, target [,
/// options]])` from COO lists (entry k at (i[k], j[k]), as
/// MatSetPreallocationCOO), or `make_pattern_plan<T>(comm, matrix [, ...])`
/// from a compressed Eigen::SparseMatrix's stored entries; values are then a
/// vector aligned with the lists or a matrix of the same structure, the
/// output an Eigen::SparseMatrix (row- or column-major) of rows x cols that
/// holds this rank's part, and a target's ranges count rows (scatter(): a
/// block of rows per rank). Entry (r, c) is index r * cols + c of support().
///
/// A rank's result is the sums at its support (plan.support(): the sorted,
/// distinct indices of every rank's pattern that fall in its part), structural
/// entries included: an entry whose sum is the identity stays. `out` is a
/// contiguous vector of T (std::vector, std::span, Eigen dense) of that many
/// values, aligned with support(), or an Eigen::SparseVector or
/// index_value_vector of the dimension whose indices become support().
///
/// How: making the plan sends every owner the indices of its part (one
/// alltoall of counts, one message per pair of ranks that share entries, and
/// a few small allreduces of the ranks' agreement), and the owner keeps, for
/// every value it will receive, its slot in the support. A call sends values
/// only, one message per such pair (and, where every pair of ranks exchanges
/// values, a status word each way per pair: the agreement), straight from the
/// caller's values when the pattern is ordered by owner (else gathered once
/// into the plan's buffer), and the owner folds each rank's run at its slots
/// in rank order, then the pattern's order, so non-commutative operations
/// get the order of a serial fold. allreduce adds one MPI_Allgatherv of the
/// owners' sums (a started call: a message from each owner to each rank). No
/// index is sent or compared in a call.
///
/// Errors: a pattern index outside the dimension, ranks that disagree on the
/// dimension, the target or a matrix's shape, or memory that runs out while the plan is made
/// throw sparse_reduce::error on every rank. In a call, values of another
/// size than the pattern, a sparse `values` whose indices differ from the
/// pattern (compared entry by entry unless pattern_options::check_indices is
/// off: then only the count is checked) or of another dimension, an
/// output of the wrong size, and `values` that are `out` (the output is made
/// before the values are read), throw on every rank naming the lowest rank at
/// fault: the ranks agree on it while the values travel, by a status word
/// from every rank to every other where every rank sends values to every
/// other (found when the plan is made), else by one small MPI_Iallreduce.
/// An operation that may throw (one not noexcept) adds one
/// small allreduce after the fold, so a throw on one rank throws on all.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../detail/fnv1a.hpp"
#include "../detail/uninit_vector.hpp"
#include "../error.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "../mpi/pending.hpp"
#include "../op/associative_op.hpp"
#include "../repr/representation.hpp"
#include "../report.hpp"
#include "call_check.hpp"
#include "pattern/layout.hpp"
#include "pattern/call.hpp"
#include "pattern/values.hpp"
#include "pattern_start.hpp"
#include "reduce_scatter.hpp"

namespace sparse_reduce {

/// Where a pattern plan's sums go.
class pattern_target {
public:
    /// reduce_scatter: rank r gets the sums in [ranges[r], ranges[r + 1]);
    /// empty ranges: block_ranges(dimension, P).
    static pattern_target scatter(std::span<const std::size_t> ranges = {})
    {
        return {kind::scatter, 0, {ranges.begin(), ranges.end()}};
    }
    /// reduce: rank `root` gets every sum.
    static pattern_target root(int root) { return {kind::root, root, {}}; }
    /// allreduce: every rank gets every sum.
    static pattern_target all() { return {kind::all, 0, {}}; }

    /// Whether every rank gets every sum.
    bool to_all() const { return kind_ == kind::all; }
    /// Whether `rank` gets sums (every rank but a reduce's others).
    bool writes(int rank) const { return kind_ != kind::root || rank == root_; }

    /// The owners' ranges on P ranks of the dimension, or why there are none.
    std::string ranges_for(std::size_t dimension, int ranks, std::vector<std::size_t>& out) const
    {
        if (kind_ == kind::root) {
            if (root_ < 0 || root_ >= ranks)
                return "root " + std::to_string(root_) + " is not a rank of " + std::to_string(ranks);
            out.assign(static_cast<std::size_t>(ranks) + 1, 0);
            for (int r = root_ + 1; r <= ranks; ++r) out[static_cast<std::size_t>(r)] = dimension;
            return {};
        }
        out = ranges_.empty() || kind_ == kind::all ? block_ranges(dimension, ranks) : ranges_;
        return detail::check_ranges(out, dimension, ranks);
    }

private:
    enum class kind { scatter, root, all };
    pattern_target(kind k, int root, std::vector<std::size_t> ranges) : kind_(k), root_(root), ranges_(std::move(ranges)) {}
    kind kind_;
    int root_;
    std::vector<std::size_t> ranges_;
};

/// A pattern plan's options.
struct pattern_options {
    /// Compare a sparse `values`' indices with the pattern in every call
    /// (one read of them); off: compare their count only.
    bool check_indices = true;
};

/// A fixed-pattern reduce (make it with make_pattern_plan): the pattern's
/// exchange made once, then values only. Copies share it. Collective: every
/// rank makes its calls in the same order.
/// @tparam T the value type (trivially copyable)
template <class T>
class pattern_plan {
    static_assert(std::is_trivially_copyable_v<T>, "pattern_plan: values travel as raw bytes");

public:
    explicit pattern_plan(std::shared_ptr<detail::pattern_state<T>> s) : s_(std::move(s)) {}

    /// The sorted global indices this rank's result holds.
    std::span<const std::size_t> support() const { return s_->l.support(); }
    /// The owners' ranges (P + 1 boundaries).
    std::span<const std::size_t> ranges() const { return s_->l.ranges; }
    /// The entries of this rank's pattern (the values a call takes).
    std::size_t pattern_size() const { return s_->l.pattern_size(); }
    /// The dimension.
    std::size_t dimension() const { return s_->l.dimension; }

    /// Folds every rank's values into `out` at this rank's support; collective.
    /// @param values this rank's values, aligned with its pattern: a contiguous
    ///               vector of T, or a sparse vector with the pattern's indices
    /// @param out    support().size() values (a contiguous vector, resized if it
    ///               can be) or a sparse vector (its indices become support())
    /// @param op     an associative_op over T
    /// @return what this rank did (bytes and messages sent and received)
    /// @throws sparse_reduce::error on every rank for the errors in this file's notes
    template <class Values, class Out, class Op>
        requires detail::pattern_operand<Values, T> && detail::pattern_operand<std::remove_cvref_t<Out>, T> &&
                 associative_op<Op, T>
    report reduce(const Values& values, Out&& out, const Op& op)
    {
        detail::complete_pending();           // started calls first (mpi/pending.hpp)
        detail::complete_started(s_->started); // the plan's: its output written before this call's
        return detail::pattern_call(*s_, values, out, op);
    }

    /// Starts reduce(values, out, op) and returns at once: the request's
    /// test() moves it on without waiting, wait() completes it
    /// (getting-started.md, "Start now, wait later"). Collective: every rank
    /// starts its plans' calls in the same order. `values` and `out` belong
    /// to the call until it completes (nothing checks it). A plan runs one
    /// call at a time: its next call, started or not, completes this one
    /// first. Nothing throws at start: every error of reduce is thrown by
    /// wait() on every rank, naming the lowest failing rank (the ranks agree
    /// on it by messages, along with the values where op cannot throw, else
    /// once the runs are folded).
    template <class Values, class Out, class Op>
        requires detail::pattern_operand<Values, T> && detail::pattern_operand<std::remove_cvref_t<Out>, T> &&
                 associative_op<Op, T>
    reduce_request start(const Values& values, Out&& out, const Op& op)
    {
        reduce_request request;
        detail::require_not_finalized();
        auto&& target = detail::writable_output(std::forward<Out>(out));
        detail::start_pattern(s_, values, std::forward<decltype(target)>(target), op, request);
        return request;
    }
    /// A temporary `values` (other than a view, such as a std::span) would be
    /// gone before the call reads it: refused at compile time.
    template <class Values, class Out, class Op>
        requires(!std::is_lvalue_reference_v<Values> && !std::ranges::view<std::remove_cvref_t<Values>>)
    reduce_request start(Values&& values, Out&& out, const Op& op) = delete;

private:
    std::shared_ptr<detail::pattern_state<T>> s_;
};

namespace detail {

// The plans' common making: a vector's (`size` its dimension, cols 0) or a
// matrix's (size rows, cols columns: dimension rows * cols, ranges of rows).
template <class T, class MakePattern>
pattern_plan<T> make_pattern_plan_from(const boost::mpi::communicator& comm, std::size_t size, std::size_t cols,
                                       MakePattern&& make_pattern, const pattern_target& target, pattern_options options,
                                       bool matrix = false)
{
    enter_collective(MPI_Comm(comm), "make_pattern_plan");
    auto owner = private_comm_owner(MPI_Comm(comm));
    const std::size_t dimension = cols ? size * cols : size;
    std::shared_ptr<pattern_state<T>> s;
    std::string failure;
    try {
        if (matrix && (cols == 0 || size > std::numeric_limits<std::uint32_t>::max() ||
                       cols > std::numeric_limits<std::uint32_t>::max()))
            fail("a matrix of no columns, or of more than 2^32 - 1 rows or columns");
        s = std::make_shared<pattern_state<T>>();
        s->comm = owner;
        s->check_indices = options.check_indices;
        pattern_layout& l = s->l;
        l.rank = comm.rank();
        l.ranks = comm.size();
        l.dimension = dimension;
        l.rows = cols ? size : 0;
        l.cols = cols;
        l.to_all = target.to_all();
        l.writes = target.writes(l.rank);
        l.pattern = make_pattern();
        failure = target.ranges_for(cols ? size : dimension, l.ranks, l.ranges);
        for (auto& b : l.ranges) b *= cols ? cols : 1; // rows to entries
        if (failure.empty()) failure = group_by_owner(l);
    } catch (...) {
        failure = caught_text();
    }
    // the target's kind joins the ranges' hash: an allreduce and a
    // reduce_scatter over the same ranges would not make the same calls
    const bool ok = failure.empty() && s;
    // and a matrix's shape: 4 x 6 and 6 x 4 have the same ranges of entries
    const std::uint64_t agreed = ok ? hash_ranges(s->l.ranges) ^ (target.to_all() ? ~std::uint64_t{0} : 0) ^
                                          (s->l.cols * 0x9E3779B97F4A7C15ull)
                                    : 0;
    agree_or_throw(owner->comm, dimension, agreed, failure, "make_pattern_plan");
    build_pattern_state(*s);
    return pattern_plan<T>(std::move(s));
}

} // namespace detail

/// Makes a pattern_plan; collective.
/// @tparam T        the value type of the calls
/// @param comm      an intracommunicator (the plan works on a private duplicate)
/// @param dimension every rank's dimension
/// @param pattern   this rank's global indices: a std::vector or std::span of
///                  an integral type (any order, repeats allowed), or an
///                  Eigen::SparseVector or index_value_vector (its indices)
/// @param target    where the sums go (default: reduce_scatter over block_ranges)
/// @param options   pattern_options
/// @throws sparse_reduce::error on every rank for an index outside the
///         dimension, ranks that disagree on the dimension or the target, an
///         invalid root or ranges, or memory that runs out on a rank
template <class T, class Pattern>
    requires(!std::integral<Pattern>)
pattern_plan<T> make_pattern_plan(const boost::mpi::communicator& comm, std::size_t dimension, const Pattern& pattern,
                                  const pattern_target& target = pattern_target::scatter(), pattern_options options = {})
{
    return detail::make_pattern_plan_from<T>(comm, dimension, 0, [&] { return detail::pattern_indices(pattern); }, target,
                                             options);
}

/// Makes a pattern_plan of matrices (Eigen::SparseMatrix values and
/// outputs) from a compressed Eigen::SparseMatrix's structure: its stored
/// entries, in storage order, as MatSetValuesCOO's pattern. The target's
/// ranges count rows: scatter() gives rank r a block of rows
/// (block_ranges(rows, P)). Collective; throws as make_pattern_plan does.
template <class T, class S, int O, class I>
pattern_plan<T> make_pattern_plan(const boost::mpi::communicator& comm, const Eigen::SparseMatrix<S, O, I>& pattern,
                                  const pattern_target& target = pattern_target::scatter(), pattern_options options = {})
{
    const auto rows = static_cast<std::size_t>(pattern.rows()), cols = static_cast<std::size_t>(pattern.cols());
    return detail::make_pattern_plan_from<T>(comm, rows, cols, [&] { return detail::matrix_pattern(pattern); }, target,
                                             options, true);
}

/// Makes a pattern_plan of a rows x cols matrix from COO lists, as PETSc's
/// MatSetPreallocationCOO takes them: entry k at (i[k], j[k]), any order,
/// repeats allowed (folded too). Calls take values aligned with the lists;
/// the target's ranges count rows. Collective; throws as make_pattern_plan
/// does, and for an entry outside the matrix.
template <class T, class RowIndices, class ColIndices>
pattern_plan<T> make_pattern_plan(const boost::mpi::communicator& comm, std::size_t rows, std::size_t cols,
                                  const RowIndices& i, const ColIndices& j,
                                  const pattern_target& target = pattern_target::scatter(), pattern_options options = {})
{
    return detail::make_pattern_plan_from<T>(
        comm, rows, cols,
        [&] { return detail::coo_pattern(rows, cols, std::span(std::ranges::data(i), std::ranges::size(i)),
                                         std::span(std::ranges::data(j), std::ranges::size(j))); },
        target, options, true);
}


} // namespace sparse_reduce
