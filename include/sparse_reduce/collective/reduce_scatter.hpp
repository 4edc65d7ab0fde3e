#pragma once
/// @file
/// sparse_reduce::reduce_scatter, MPI_Reduce_scatter for sparse vectors, by
/// index ranges, and block_ranges. Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///      std::vector<std::size_t> ranges = reduce_scatter(comm, in, out, op [, ranges]);
///
/// Every rank passes a vector of the same dimension D. Rank r receives the
/// reduction op(in_0, in_1, ..., in_{P-1}) restricted to its index range
/// [ranges[r], ranges[r + 1]): in `out`, an index_value_vector or
/// Eigen::SparseVector of dimension D whose entries are exactly the
/// non-identity results inside that range, at their global indices. The
/// ranges are P + 1 non-decreasing boundaries from 0 to D, the same on every
/// rank; without them, block ranges (block_ranges: D / P indices each, the
/// remainder one each to the lowest ranks). The call returns the ranges used.
/// `in` is any representation reduce accepts (dense, index_value_vector,
/// Eigen::SparseVector, rle_vector).
///
/// How: a direct exchange. Each rank cuts its non-identity entries by range
/// (one pass), and sends each slice to its owner as two raw buffers, offsets
/// within the range (uint32 when every range is shorter than 2^32, else
/// uint64) and values, after one MPI_Alltoall of the entry counts; the owner
/// folds the P slices in rank order with the index/value merge kernel of
/// kernel/combine.hpp, pairwise ((s0 ⊗ s1) ⊗ (s2 ⊗ s3)) ..., so
/// non-commutative operations get the rank order and the fold costs
/// O(n log P). Nothing goes through Boost.Serialization.
///
/// Errors, on every rank and before any entry is sent (one small allreduce
/// of the arguments): an intercommunicator, ranks disagreeing on D or on the
/// ranges, ranges that are not P + 1 non-decreasing boundaries from 0 to D,
/// a corrupt input (indices out of order or range) and an op made by make_op
/// whose identity does not hold on a sample of the input's values, on any
/// rank, throw sparse_reduce::error naming the rank at fault. An op that
/// throws (anything, `throw 42;` too) while a rank folds its range, memory
/// that runs out on a rank (its room for what it receives: it then takes
/// the pieces, of 1 MiB, into a drain of one piece and drops them), or an
/// output it cannot make: the ranks agree on the outcome after the fold (one
/// more small allreduce), and every rank throws sparse_reduce::error naming
/// the lowest failing rank.
///
/// For building on it (allreduce as reduce_scatter + allgather): the ranges
/// returned are agreed on by all ranks, and rank r's `out` holds entries in
/// [ranges[r], ranges[r + 1]) only, so the pieces are disjoint and ordered.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../detail/fnv1a.hpp"
#include "../detail/index_width.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../exec/comm_state.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/entry_stream.hpp"
#include "../kernel/identity_law.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/dimension_agreement.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../repr/representation.hpp"
#include "../report.hpp"
#include "call_check.hpp"

namespace sparse_reduce {

/// The default ranges of reduce_scatter: P + 1 boundaries where rank r owns
/// D / P indices, plus one for r < D mod P.
/// @param dimension D
/// @param ranks     P
/// @return the P + 1 boundaries, from 0 to D
inline std::vector<std::size_t> block_ranges(std::size_t dimension, int ranks)
{
    std::vector<std::size_t> b(static_cast<std::size_t>(ranks) + 1, 0);
    const std::size_t p = static_cast<std::size_t>(ranks), q = dimension / p, rem = dimension % p;
    for (std::size_t r = 1; r <= p; ++r) b[r] = b[r - 1] + q + (r - 1 < rem ? 1 : 0);
    return b;
}

namespace detail {

// Empty when the ranges are P + 1 non-decreasing boundaries from 0 to D, else why not.
inline std::string check_ranges(std::span<const std::size_t> r, std::size_t dimension, int ranks)
{
    if (r.size() != static_cast<std::size_t>(ranks) + 1)
        return "reduce_scatter: " + std::to_string(r.size()) + " range boundaries for " + std::to_string(ranks) +
               " ranks (need P + 1)";
    if (r.front() != 0 || r.back() != dimension)
        return "reduce_scatter: ranges must start at 0 and end at the dimension " + std::to_string(dimension);
    for (std::size_t k = 1; k < r.size(); ++k)
        if (r[k] < r[k - 1]) return "reduce_scatter: range boundaries decrease at " + std::to_string(k);
    return {};
}

inline std::uint64_t hash_ranges(std::span<const std::size_t> r)
{
    fnv1a h; // over the boundaries
    for (const auto x : r) h.mix_value(static_cast<std::uint64_t>(x));
    return h.hash;
}

// The agreement every collective here starts with: one allreduce (max) of
// the dimension, the ranges' hash (both also complemented, so min = max can
// be checked) and the lowest failing rank, whose text every rank then
// throws. Throws on every rank on a failure.
inline void agree_or_throw(MPI_Comm comm, std::size_t dimension, std::uint64_t ranges_hash, const std::string& local_failure,
                           const char* who)
{
    int me = 0, ranks = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &ranks);
    const unsigned long long mine[5] = {dimension, ~static_cast<unsigned long long>(dimension), ranges_hash, ~ranges_hash,
                                        local_failure.empty() ? 0ull : static_cast<unsigned long long>(ranks - me)};
    unsigned long long all[5];
    MPI_Allreduce(mine, all, 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (all[4]) {
        const int first = ranks - static_cast<int>(all[4]);
        fail(std::string(who) + " failed on rank " + std::to_string(first) + ": " +
             broadcast_failure_text(comm, me, first, unprefixed(local_failure)));
    }
    if (all[0] != ~all[1]) fail(std::string(who) + ": " + dimension_mismatch_text(comm, dimension, most_common_dimension));
    if (all[2] != ~all[3]) fail(std::string(who) + ": ranks pass different index ranges");
}

// One rank's non-identity entries cut by range: offsets within the owner's
// range and values, contiguous per destination, cut[d] .. cut[d + 1].
template <class I, class T>
struct slices {
    std::vector<I> offset;
    value_vector<T> value;
    std::vector<std::size_t> cut;
};

template <class I, class In, class T>
slices<I, T> cut_by_range(const In& in, std::span<const std::size_t> ranges, const T& id)
{
    const std::size_t P = ranges.size() - 1;
    slices<I, T> s;
    s.cut.assign(P + 1, 0);
    const std::size_t hint = std::min(stored_entries(in), dimension(in));
    s.offset.reserve(hint);
    s.value.reserve(hint);
    std::size_t d = 0;
    for (auto r = make_reader(in, id); !r.done(); r.next()) {
        if (same_value(r.value(), id)) continue; // an explicit identity stored in a sparse input
        const std::size_t i = r.index();
        while (i >= ranges[d + 1]) s.cut[++d] = s.offset.size();
        s.offset.push_back(static_cast<I>(i - ranges[d]));
        s.value.push_back(r.value());
    }
    while (d < P) s.cut[++d] = s.offset.size();
    return s;
}

// Folds runs [runs[k], runs[k + 1]) of (offset, value) pairwise in rank order
// with the index/value merge kernel; returns the result's entry count, left
// at the front of idx / val.
template <class I, class T, class Op>
std::size_t fold_runs(std::vector<I>& idx, value_vector<T>& val, std::vector<std::size_t> runs, const Op& op, const T& id)
{
    std::vector<I> idx2(idx.size());
    value_vector<T> val2(val.size());
    while (runs.size() > 2) {
        std::vector<std::size_t> next{0};
        std::size_t w = 0;
        for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
            const std::size_t a = runs[r], m = runs[r + 1];
            if (r + 2 < runs.size()) {
                const std::size_t b = runs[r + 2];
                w += merge_index_value(idx.data() + a, val.data() + a, m - a, idx.data() + m, val.data() + m, b - m,
                                       idx2.data() + w, val2.data() + w, op, id);
            } else {
                std::copy(idx.begin() + static_cast<std::ptrdiff_t>(a), idx.begin() + static_cast<std::ptrdiff_t>(m),
                          idx2.begin() + static_cast<std::ptrdiff_t>(w));
                std::copy(val.begin() + static_cast<std::ptrdiff_t>(a), val.begin() + static_cast<std::ptrdiff_t>(m),
                          val2.begin() + static_cast<std::ptrdiff_t>(w));
                w += m - a;
            }
            next.push_back(w);
        }
        idx.swap(idx2);
        val.swap(val2);
        runs = std::move(next);
    }
    return runs.back();
}

// The exchange goes in pieces of 1 MiB, so that a rank without room for
// what it receives can take every piece into the communicator's drain of
// one piece (comm_state's, made before the ranks agree) and drop it.
inline constexpr std::size_t scatter_piece_bytes = std::size_t{1} << 20;

// The requests a slice of `entries` takes: its offsets' pieces and its values'.
template <class I, class T>
std::size_t slice_pieces(std::uint64_t entries)
{
    return pieces_of(entries * sizeof(I), scatter_piece_bytes) + pieces_of(entries * sizeof(T), scatter_piece_bytes);
}

// The exchange's counts: what this rank sends to and receives from each
// rank, where each rank's slice lands, and the requests, room for this
// rank's sends made once its input is cut (before the ranks agree, so a
// rank without room for them fails the call everywhere).
struct exchange_counts {
    std::vector<std::uint64_t> send, recv;
    std::vector<std::size_t> runs;
    std::vector<MPI_Request> reqs;
    explicit exchange_counts(std::size_t P) : send(P), recv(P), runs(P + 1, 0) {}

    template <class I, class T>
    void count_sends(const slices<I, T>& s, std::size_t self)
    {
        std::size_t posts = 0;
        for (std::size_t d = 0; d < send.size(); ++d) {
            send[d] = s.cut[d + 1] - s.cut[d];
            if (d != self && send[d]) posts += slice_pieces<I, T>(send[d]);
        }
        reqs.reserve(posts);
    }
};

// After the counts are exchanged, a rank makes the room for what it
// receives. One without it still sends its slices, takes what comes to it
// into the drain and drops it, and fails at the call's final agreement, so
// nobody waits and nothing stays queued. The fold and the output come before
// that agreement too (the op may throw anything): every rank throws or none.
template <class I, class Out, class T, class Op>
void scatter_with(MPI_Comm pc, std::size_t dim, Out& out, const Op& op, std::span<const std::size_t> ranges, const T& id,
                  slices<I, T>& s, exchange_counts& c, std::span<std::byte> drain, report& rep)
{
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    int me = 0, ranks = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &ranks);
    const auto P = static_cast<std::size_t>(ranks), self = static_cast<std::size_t>(me);
    MPI_Alltoall(c.send.data(), 1, MPI_UINT64_T, c.recv.data(), 1, MPI_UINT64_T, pc);

    std::size_t posts = c.reqs.capacity(); // the sends'
    for (std::size_t r = 0; r < P; ++r) {
        c.runs[r + 1] = c.runs[r] + static_cast<std::size_t>(c.recv[r]);
        if (r != self && c.recv[r]) posts += slice_pieces<I, T>(c.recv[r]);
    }
    std::vector<I> idx;
    value_vector<T> val;
    std::string failure;
    try {
        idx.resize(c.runs[P]);
        val.resize(c.runs[P]);
        c.reqs.reserve(posts);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
    const bool room = failure.empty();
    for (std::size_t r = 0; room && r < P; ++r)
        if (c.recv[r] && r != self) {
            irecv_bytes(idx.data() + c.runs[r], c.recv[r] * sizeof(I), static_cast<int>(r), scatter_offset_tag, pc, c.reqs,
                        scatter_piece_bytes);
            irecv_bytes(val.data() + c.runs[r], c.recv[r] * sizeof(T), static_cast<int>(r), scatter_value_tag, pc, c.reqs,
                        scatter_piece_bytes);
        }
    for (std::size_t k = 1; k < P; ++k) {
        const std::size_t d = (self + k) % P;
        if (!c.send[d]) continue;
        isend_bytes(s.offset.data() + s.cut[d], c.send[d] * sizeof(I), static_cast<int>(d), scatter_offset_tag, pc, c.reqs,
                    scatter_piece_bytes);
        isend_bytes(s.value.data() + s.cut[d], c.send[d] * sizeof(T), static_cast<int>(d), scatter_value_tag, pc, c.reqs,
                    scatter_piece_bytes);
        rep.bytes_sent += c.send[d] * (sizeof(I) + sizeof(T));
        rep.messages_sent += 2;
    }
    for (std::size_t r = 0; r < P; ++r)
        if (r != self) rep.bytes_received += c.recv[r] * (sizeof(I) + sizeof(T));
    if (room) {
        std::copy(s.offset.begin() + static_cast<std::ptrdiff_t>(s.cut[self]),
                  s.offset.begin() + static_cast<std::ptrdiff_t>(s.cut[self + 1]), idx.begin() + static_cast<std::ptrdiff_t>(c.runs[self]));
        std::copy(s.value.begin() + static_cast<std::ptrdiff_t>(s.cut[self]),
                  s.value.begin() + static_cast<std::ptrdiff_t>(s.cut[self + 1]), val.begin() + static_cast<std::ptrdiff_t>(c.runs[self]));
    } else {
        for (std::size_t r = 0; r < P; ++r)
            if (c.recv[r] && r != self) {
                drop_bytes(drain, c.recv[r] * sizeof(I), scatter_piece_bytes, static_cast<int>(r), scatter_offset_tag, pc);
                drop_bytes(drain, c.recv[r] * sizeof(T), scatter_piece_bytes, static_cast<int>(r), scatter_value_tag, pc);
            }
    }
    wait_all(c.reqs);

    if (room) try {
            const std::size_t n = fold_runs(idx, val, c.runs, op, id);
            const std::size_t lo = ranges[self];
            const auto slots = RO::begin_output(out, dim, n);
            using OI = std::remove_pointer_t<decltype(slots.index)>;
            for (std::size_t k = 0; k < n; ++k) {
                slots.index[k] = static_cast<OI>(lo + static_cast<std::size_t>(idx[k]));
                slots.value[k] = val[k];
            }
            RO::commit_output(out, n);
        } catch (...) {
            failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
        }
    throw_if_any_failed(pc, failure, "reduce_scatter failed on");
}

// One rank's input cut by range, offsets 32-bit when every range is shorter
// than 2^32. Default: no entries (a rank whose input failed takes part so).
template <class T>
struct cut_input {
    bool narrow = true;
    slices<std::uint32_t, T> s32;
    slices<std::uint64_t, T> s64;
    exchange_counts counts;

    explicit cut_input(std::span<const std::size_t> ranges) : counts(ranges.empty() ? 0 : ranges.size() - 1)
    {
        std::size_t widest = 0;
        for (std::size_t r = 0; r + 1 < ranges.size(); ++r) widest = std::max(widest, ranges[r + 1] - ranges[r]);
        narrow = narrow_indices(widest);
        s32.cut.assign(ranges.size(), 0);
        s64.cut.assign(ranges.size(), 0);
    }
    template <class In>
    void cut(const In& in, std::span<const std::size_t> ranges, const T& id, std::size_t self) // throws on a corrupt input
    {
        if (narrow) {
            s32 = cut_by_range<std::uint32_t>(in, ranges, id);
            counts.count_sends(s32, self);
        } else {
            s64 = cut_by_range<std::uint64_t>(in, ranges, id);
            counts.count_sends(s64, self);
        }
    }
    // The exchange and fold, once the ranks agree on dim and ranges.
    template <class Out, class Op>
    void scatter_and_fold(MPI_Comm pc, std::size_t dim, Out& out, const Op& op, std::span<const std::size_t> ranges, const T& id,
                          std::span<std::byte> drain, report& rep)
    {
        if (narrow) scatter_with(pc, dim, out, op, ranges, id, s32, counts, drain, rep);
        else scatter_with(pc, dim, out, op, ranges, id, s64, counts, drain, rep);
    }
};

template <representation In, index_value_representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>> &&
             std::is_trivially_copyable_v<value_type_of<In>>
std::vector<std::size_t> reduce_scatter_checked(const boost::mpi::communicator& comm, const In& in, Out& out,
                                                const Op& op, std::span<const std::size_t> ranges)
{
    using T = value_type_of<In>;
    detail::require_intracommunicator(MPI_Comm(comm), "reduce_scatter");
    const MPI_Comm pc = detail::private_comm(MPI_Comm(comm));
    const int ranks = comm.size();
    const std::size_t dim = dimension(in);
    const T id = identity<T>(op);
    // Everything this rank makes before the exchange (the ranges, the cut
    // input, the exchange's counts) is made before the ranks agree, so that a
    // failure here (a corrupt input, a make_op identity that does not hold on
    // this rank's values, memory) fails every rank.
    detail::node_buffers& drain_holder = detail::state_of(MPI_Comm(comm)).whole; // collective on first use, agreed
    std::vector<std::size_t> used;
    std::optional<detail::cut_input<T>> cut;
    std::string failure;
    try {
        if (drain_holder.drain().size() < detail::scatter_piece_bytes) drain_holder.make_drain(detail::scatter_piece_bytes);
        used = ranges.empty() ? block_ranges(dim, ranks) : std::vector<std::size_t>(ranges.begin(), ranges.end());
        failure = detail::check_ranges(used, dim, ranks);
        if (failure.empty())
            if (auto why = detail::dimension_limit_violation(dim, sizeof(T)); !why.empty()) failure = "reduce_scatter: " + why;
        // The output must hold the dimension's indices (Eigen's StorageIndex may be narrower).
        using OI = typename repr_traits<std::remove_cvref_t<Out>>::index_type;
        if (failure.empty() && dim > 0 && dim - 1 > static_cast<std::size_t>(std::numeric_limits<OI>::max()))
            failure = "reduce_scatter: dimension " + std::to_string(dim) + " does not fit the output's index type";
        if (failure.empty()) {
            cut.emplace(used);
            failure = detail::identity_law_violation(op, id, in);
            if (failure.empty()) cut->cut(in, used, id, static_cast<std::size_t>(comm.rank()));
        }
    } catch (...) {
        failure = detail::caught_text();
    }
    detail::agree_or_throw(pc, dim, failure.empty() ? detail::hash_ranges(used) : 0, failure, "reduce_scatter");
    report ignored;
    cut->scatter_and_fold(pc, dim, out, op, used, id, drain_holder.drain(), ignored);
    return used;
}

} // namespace detail

/// MPI_Reduce_scatter for sparse vectors: rank r receives the reduction of
/// every rank's `in` restricted to [ranges[r], ranges[r + 1]). Collective.
/// Any argument types: a wrong one fails to compile with a message that names the fix.
/// @param comm   an intracommunicator
/// @param in     this rank's vector (any representation), dimension D on every rank
/// @param out    index_value_vector or Eigen::SparseVector: gets dimension D and
///               exactly the non-identity results in this rank's range, at
///               their global indices
/// @param op     an associative_op; the pieces are folded in rank order
/// @param ranges P + 1 non-decreasing boundaries from 0 to D, the same on every
///               rank; empty for block_ranges(D, P)
/// @return the ranges used
/// @throws sparse_reduce::error on every rank: for an intercommunicator,
///         ranks that disagree on D or the ranges, invalid ranges, a corrupt
///         input or an op that throws on any rank (naming the lowest failing rank)
template <class In, class Out, class Op>
std::vector<std::size_t> reduce_scatter(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op,
                                        std::span<const std::size_t> ranges = {})
{
    if constexpr (detail::checked_call<In, Out, Op, detail::value_rule::trivially_copyable, true>())
        return detail::reduce_scatter_checked(comm, in, out, op, ranges);
    else
        return {};
}

} // namespace sparse_reduce
