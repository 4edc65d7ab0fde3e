#pragma once
// A pattern plan's call (collective/pattern_plan.hpp): values only, folded
// at the slots the plan keeps (pattern/layout.hpp).
//
// On every rank: check the values and make the output (a failure is kept,
// not thrown); post the receives, one per rank that sends here; send each
// owner its run (straight from the caller's values when the pattern is
// ordered by owner); fold the runs in rank order as they arrive
// (pattern_exchange). A blocking call agrees on the lowest failing rank
// while the values travel: by status words beside them where every rank
// sends values to every other (pattern_layout::agree_by_words), else by an
// MPI_Iallreduce; a started one
// (collective/pattern_start.hpp) by messages, along with the values where
// the operation cannot throw, else once its runs are folded.

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

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
            fail(n, " values for a pattern of ", l.pattern_size(), " entries");
    };
    if constexpr (R::kind == repr_kind::dense) {
        const std::span<const T> v = R::read(values);
        count_check(v.size());
        return v;
    } else if constexpr (R::kind == repr_kind::index_value) {
        if (R::size(values) != l.dimension)
            fail("values of dimension ", R::size(values), ", the plan's is ", l.dimension);
        const auto ix = R::indices(values);
        count_check(ix.size());
        if (s.check_indices)
            for (std::size_t k = 0; k < ix.size(); ++k)
                if (static_cast<std::uint64_t>(ix[k]) != l.pattern[k])
                    fail("the values' pattern differs from the plan's at entry ", k, ": index ", ix[k], ", the plan's ",
                         l.pattern[k]);
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
            fail("dimension ", l.dimension, " does not fit the output's index type");
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

// One call's values on this rank, as steps: made, it checks the values and
// makes the output (a failure is kept, not thrown), and posts the receives
// (rank order) and the sends (the runs by owner, straight from the
// caller's values when the pattern is ordered by owner, else from the
// plan's buffer) on `tag`; step(false) folds the runs that have arrived, in
// rank order, without waiting, step(true) all of them; true once every run
// is folded and every send done. A failed rank still sends (the plan's
// buffer), so every message is matched and no rank waits. The agreement on
// failures is the caller's (blocking or started). Not movable.
template <class T, class Op>
class pattern_exchange {
public:
    template <class Values, class Out>
    pattern_exchange(pattern_state<T>& s, const Values& values, Out& out, const Op& op, int tag)
        : s_(s), op_(op)
    {
        const pattern_layout& l = s.l;
        try {
            if (static_cast<const void*>(std::addressof(values)) == static_cast<const void*>(std::addressof(out)))
                fail("values and out are the same object (the output is made before the values are read)");
            v_ = pattern_values(s, values);
            o_ = pattern_output<T>(s, out);
            (void)identity<T>(op); // a throw here is this rank's check failure, not the fold's
        } catch (...) {
            failure_ = text_or_out_of_memory([&] { return rank_failure_text(l.rank); });
        }
        const bool ok = failure_.empty();
        const T* from = s.send.data();
        if (ok && l.grouped) from = v_.data();
        else if (ok) // the runs for the other ranks; the own run is folded from v
            for (int d = 0; d < l.ranks; ++d)
                if (d != l.rank)
                    for (std::size_t k = l.send_cut[d]; k < l.send_cut[d + 1]; ++k) s.send[k] = v_[l.order[k]];
        post(from, tag);
        mine_ = o_ && l.to_all ? o_ + l.all_cut[static_cast<std::size_t>(l.rank)] : o_;
        folding_ = ok && mine_;
        arrived_ = s.recv.data();
    }
    pattern_exchange(const pattern_exchange&) = delete;
    pattern_exchange& operator=(const pattern_exchange&) = delete;

    bool step(bool may_wait)
    {
        const pattern_layout& l = s_.l;
        if (folding_ && next_ == 0 && !filled_) { // after the caller's agreement is posted
            filled_ = true;
            try {
                T* const o = mine_; // the identity known here: a constant fill (memset) where it can be
                const T id = identity<T>(op_);
                const std::size_t owned = l.owned.size();
                for (std::size_t k = 0; k < owned; ++k) o[k] = id; // the owned sums, identity first
            } catch (...) {
                fold_failure_ = text_or_out_of_memory([&] { return rank_failure_text(l.rank); });
                folding_ = false;
            }
        }
        for (; folding_ && next_ < l.ranks; ++next_) {
            const int r = next_;
            if (r != l.rank && l.receives(r)) {
                MPI_Request* reqs = s_.reqs.data() + s_.posted[r];
                const int count = static_cast<int>(s_.posted[r + 1] - s_.posted[r]);
                if (may_wait) {
                    MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
                } else {
                    int done = 0;
                    MPI_Testall(count, reqs, &done, MPI_STATUSES_IGNORE);
                    if (!done) return false;
                }
            }
            try {
                fold_run(r);
            } catch (...) {
                fold_failure_ = text_or_out_of_memory([&] { return rank_failure_text(l.rank); });
                folding_ = false;
            }
        }
        return requests_done(s_.reqs, may_wait);
    }

    // This rank's failure: its values' or output's check, else its fold's.
    const std::string& failure() const { return failure_.empty() ? fold_failure_ : failure_; }
    const std::string& check_failure() const { return failure_; }
    const std::string& fold_failure() const { return fold_failure_; }
    T* output() const { return o_; }

private:
    // Posts this call's receives (rank order) and sends (from `from`, the runs by owner).
    void post(const T* from, int tag)
    {
        const pattern_layout& l = s_.l;
        const MPI_Comm pc = s_.comm->comm;
        s_.reqs.clear();
        std::size_t at = 0;
        for (int r = 0; r < l.ranks; ++r) {
            if (r == l.rank || !l.receives(r)) continue;
            irecv_bytes(s_.recv.data() + at, l.receives(r) * sizeof(T), r, tag, pc, s_.reqs);
            at += l.receives(r);
        }
        for (int k = 1; k < l.ranks; ++k) {
            const int d = (l.rank + k) % l.ranks;
            if (l.sends(d)) isend_bytes(from + l.send_cut[d], l.sends(d) * sizeof(T), d, tag, pc, s_.reqs);
        }
    }

    // Rank r's run folded into the owned sums at its slots, the own run read
    // from the values (straight, or through the order by owner).
    void fold_run(int r)
    {
        const pattern_layout& l = s_.l;
        const std::size_t n = l.receives(r);
        const std::uint32_t* at = l.slot.data() + l.recv_cut[r];
        T* const o = mine_;
        const Op& op = op_;
        if (r == l.rank) {
            const T* own = v_.data();
            if (l.grouped) {
                own += l.send_cut[r];
                for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], own[k]);
            } else {
                const std::uint32_t* from = l.order.data() + l.send_cut[r];
                for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], own[from[k]]);
            }
            return;
        }
        const T* const arrived = arrived_;
        for (std::size_t k = 0; k < n; ++k) o[at[k]] = op(o[at[k]], arrived[k]);
        arrived_ = arrived + n;
    }

    pattern_state<T>& s_;
    const Op& op_;
    std::span<const T> v_;
    T* o_ = nullptr;
    T* mine_ = nullptr;        // this rank's owned sums in the output
    const T* arrived_ = nullptr; // the next received run
    bool folding_ = false, filled_ = false;
    int next_ = 0; // the next rank whose run to fold
    std::string failure_, fold_failure_;
};

template <class T, class Values, class Out, class Op>
report pattern_call(pattern_state<T>& s, const Values& values, Out& out, const Op& op)
{
    const double started = MPI_Wtime();
    const pattern_layout& l = s.l;
    const MPI_Comm pc = s.comm->comm;
    pattern_exchange<T, Op> exchange(s, values, out, op, pattern_value_tag);
    // the lowest rank whose check failed, agreed while the values travel:
    // beside them where they go to every rank, else in one MPI_Iallreduce
    const bool failed = !exchange.check_failure().empty();
    int candidate = failed ? l.rank : INT_MAX, first = INT_MAX;
    MPI_Request status = MPI_REQUEST_NULL;
    if (l.agree_by_words) s.status.post(pc, l.rank, failed, pattern_status_tag, s.status_reqs);
    else MPI_Iallreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, pc, &status);
    exchange.step(true);
    if (l.agree_by_words) {
        wait_all(s.status_reqs);
        first = s.status.first_failed();
    } else {
        MPI_Wait(&status, MPI_STATUS_IGNORE);
    }
    if (first != INT_MAX)
        fail("pattern plan reduce failed on " + broadcast_failure_text(pc, l.rank, first, exchange.check_failure()));
    if constexpr (!noexcept(op(std::declval<const T&>(), std::declval<const T&>())))
        throw_if_any_failed(pc, exchange.fold_failure(), "pattern plan reduce failed on");
    T* o = exchange.output();
    if (l.to_all)
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, o, s.all_bytes.data(), s.all_at.data(), MPI_BYTE, pc);
    if constexpr (sparse_matrix<Out>)
        if (o) finish_matrix(out, s.split, s.staged);
    report rep = s.traffic;
    rep.seconds = MPI_Wtime() - started;
    return rep;
}

} // namespace sparse_reduce::detail
