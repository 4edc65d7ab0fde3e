#pragma once
// A pattern plan's call (collective/pattern_plan.hpp): values only, folded
// at the slots the plan keeps (pattern/layout.hpp).
//
// On every rank: check the values and make the output (a failure is kept,
// not thrown); post the receives, one per rank that sends here; send each
// owner its run (straight from the caller's values when the pattern is
// ordered by owner); start the MPI_Iallreduce of the lowest failing rank;
// fold the runs in rank order as they arrive; end the agreement. A failed
// rank still sends (the plan's buffer), so every message is matched and no
// rank waits.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include <mpi.h>

#include "../../detail/exhaustive.hpp"
#include "../../error.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../mpi/tags.hpp"
#include "../../op/associative_op.hpp"
#include "../../repr/representation.hpp"
#include "../../report.hpp"
#include "layout.hpp"
#include "matrix.hpp"
#include "values.hpp"

namespace sparse_reduce::detail {

// The caller's values, checked against the plan (throws why not).
template <class T, class Values>
std::span<const T> vector_values(const pattern_state<T>& s, const Values& values)
{
    using R = repr_traits<std::remove_cvref_t<Values>>;
    const pattern_layout& l = s.l;
    auto count_check = [&](std::size_t n) {
        if (n != l.pattern_size())
            fail(std::to_string(n) + " values for a pattern of " + std::to_string(l.pattern_size()) + " entries");
    };
    if constexpr (R::kind == repr_kind::dense) {
        const std::span<const T> v = R::read(values);
        count_check(v.size());
        return v;
    } else if constexpr (R::kind == repr_kind::index_value) {
        if (R::size(values) != l.dimension)
            fail("values of dimension " + std::to_string(R::size(values)) + ", the plan's is " +
                 std::to_string(l.dimension));
        const auto ix = R::indices(values);
        count_check(ix.size());
        if (s.check_indices)
            for (std::size_t k = 0; k < ix.size(); ++k)
                if (static_cast<std::uint64_t>(ix[k]) != l.pattern[k])
                    fail("the values' pattern differs from the plan's at entry " + std::to_string(k) + ": index " +
                         std::to_string(ix[k]) + ", the plan's " + std::to_string(l.pattern[k]));
        return R::values(values);
    } else {
        static_assert(dependent_false<Values>, "pattern_plan::reduce: values are a contiguous vector of T, an "
                                               "Eigen::SparseVector or an index_value_vector");
    }
}

// The output, sized to the support (a sparse one gets its indices); its
// values, or null where this rank gets nothing (a reduce's other ranks).
template <class T, class Out>
T* vector_output(const pattern_layout& l, Out& out)
{
    using R = repr_traits<std::remove_cvref_t<Out>>;
    const auto& sup = l.support();
    if constexpr (R::kind == repr_kind::dense) {
        return R::output(out, sup.size()).data();
    } else if constexpr (R::kind == repr_kind::index_value) {
        using I = typename R::index_type;
        if (l.dimension > 0 && l.dimension - 1 > static_cast<std::uint64_t>(std::numeric_limits<I>::max()))
            fail("dimension " + std::to_string(l.dimension) + " does not fit the output's index type");
        const auto slots = R::begin_output(out, l.dimension, sup.size());
        for (std::size_t k = 0; k < sup.size(); ++k) slots.index[k] = static_cast<I>(sup[k]);
        R::commit_output(out, sup.size());
        return slots.value;
    } else {
        static_assert(dependent_false<Out>, "pattern_plan::reduce: out is a contiguous vector of T, an "
                                            "Eigen::SparseVector or an index_value_vector");
    }
}

// What a call takes as values or output: a representation of T, or an
// Eigen::SparseMatrix of T.
template <class V, class T>
concept pattern_operand = (sparse_matrix<V> && std::same_as<typename std::remove_cvref_t<V>::Scalar, T>) ||
                          (representation<V> && std::same_as<value_type_of<V>, T>);

// The values and the output of a call, a matrix's (pattern/matrix.hpp) or a vector's.
template <class T, class Values>
std::span<const T> pattern_values(const pattern_state<T>& s, const Values& values)
{
    if constexpr (sparse_matrix<Values>) return matrix_values<T>(s.l, values, s.check_indices);
    else return vector_values(s, values);
}

template <class T, class Out>
T* pattern_output(pattern_state<T>& s, Out& out)
{
    if (!s.l.writes) return nullptr;
    if constexpr (sparse_matrix<Out>) return matrix_output<T>(s.l, out, s.split, s.staged);
    else return vector_output<T>(s.l, out);
}

// Posts this call's receives (rank order) and sends (from `from`, the runs
// by owner), then the agreement on the lowest failing rank.
template <class T>
void post_pattern_exchange(pattern_state<T>& s, const T* from, int* candidate, int* first, MPI_Request* status)
{
    const pattern_layout& l = s.l;
    const MPI_Comm pc = s.comm->comm;
    s.reqs.clear();
    std::size_t at = 0;
    for (int r = 0; r < l.ranks; ++r) {
        if (r == l.rank || !l.receives(r)) continue;
        irecv_bytes(s.recv.data() + at, l.receives(r) * sizeof(T), r, pattern_value_tag, pc, s.reqs);
        at += l.receives(r);
    }
    for (int k = 1; k < l.ranks; ++k) {
        const int d = (l.rank + k) % l.ranks;
        if (l.sends(d)) isend_bytes(from + l.send_cut[d], l.sends(d) * sizeof(T), d, pattern_value_tag, pc, s.reqs);
    }
    MPI_Iallreduce(candidate, first, 1, MPI_INT, MPI_MIN, pc, status);
}

// Folds every run into o (the owned sums, identity first) in rank order,
// waiting for each run's messages before it; the own run read from v.
template <class T, class Op>
void fold_pattern_runs(pattern_state<T>& s, std::span<const T> v, T* o, const T& id, const Op& op)
{
    const pattern_layout& l = s.l;
    const std::size_t owned = l.owned.size();
    for (std::size_t k = 0; k < owned; ++k) o[k] = id;
    const std::uint32_t* slot = l.slot.data();
    const T* arrived = s.recv.data();
    for (int r = 0; r < l.ranks; ++r) {
        const std::size_t n = l.receives(r);
        const std::uint32_t* at = slot + l.recv_cut[r];
        if (r == l.rank) { // read in place: straight, or through the order by owner
            const T* own = v.data();
            if (l.grouped) {
                own += l.send_cut[r];
                for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], own[k]);
            } else {
                const std::uint32_t* from = l.order.data() + l.send_cut[r];
                for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], own[from[k]]);
            }
            continue;
        }
        if (!n) continue;
        MPI_Waitall(static_cast<int>(s.posted[r + 1] - s.posted[r]), s.reqs.data() + s.posted[r], MPI_STATUSES_IGNORE);
        for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], arrived[k]);
        arrived += n;
    }
}

template <class T, class Values, class Out, class Op>
report pattern_call(pattern_state<T>& s, const Values& values, Out& out, const Op& op)
{
    const double started = MPI_Wtime();
    const pattern_layout& l = s.l;
    const MPI_Comm pc = s.comm->comm;
    const T id = identity<T>(op);
    std::string failure;
    std::span<const T> v;
    T* o = nullptr;
    try {
        if (static_cast<const void*>(std::addressof(values)) == static_cast<const void*>(std::addressof(out)))
            fail("values and out are the same object (the output is made before the values are read)");
        v = pattern_values(s, values);
        o = pattern_output<T>(s, out);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(l.rank); });
    }
    const bool ok = failure.empty();
    const T* from = s.send.data();
    if (ok && l.grouped) from = v.data();
    else if (ok) // the runs for the other ranks; the own run is folded from v
        for (int d = 0; d < l.ranks; ++d)
            if (d != l.rank)
                for (std::size_t k = l.send_cut[d]; k < l.send_cut[d + 1]; ++k) s.send[k] = v[l.order[k]];
    int candidate = ok ? INT_MAX : l.rank, first = INT_MAX;
    MPI_Request status;
    post_pattern_exchange(s, from, &candidate, &first, &status);
    T* mine = o && l.to_all ? o + l.all_cut[static_cast<std::size_t>(l.rank)] : o;
    std::string fold_failure;
    try {
        if (ok && mine) fold_pattern_runs(s, v, mine, id, op);
    } catch (...) {
        fold_failure = text_or_out_of_memory([&] { return rank_failure_text(l.rank); });
    }
    wait_all(s.reqs);
    MPI_Wait(&status, MPI_STATUS_IGNORE);
    if (first != INT_MAX)
        fail("pattern plan reduce failed on " + broadcast_failure_text(pc, l.rank, first, failure));
    if constexpr (!noexcept(op(id, id))) throw_if_any_failed(pc, fold_failure, "pattern plan reduce failed on");
    if (l.to_all)
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, o, s.all_bytes.data(), s.all_at.data(), MPI_BYTE, pc);
    if constexpr (sparse_matrix<Out>)
        if (o) finish_matrix(out, s.split, s.staged);
    report rep = s.traffic;
    rep.seconds = MPI_Wtime() - started;
    return rep;
}

} // namespace sparse_reduce::detail
