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
/// How: a direct exchange in one round. Each rank cuts its non-identity
/// entries by range and sends each slice to its owner as two raw buffers,
/// indices and values, posted with a header to every other rank
/// (scatter/headers.hpp: the slice's count and bytes, the arguments the
/// ranks agree on, what the rank can receive without allocating and, up to
/// 64 ranks, the counts of all its slices); a receiver posts its receives
/// for a slice once its header is in. Indices are global
/// uint32 when D fits 32 bits, else offsets within the range (uint32 when
/// every range is shorter than 2^32, else uint64); a slice's indices travel
/// in the fewest bytes of those, a bitmap over the owner's range and their
/// gaps as varints (wire/index_gaps.hpp: one or two bytes an entry at 1 %)
/// where the tuning makes bytes dear (cost_model::bitmap_pays, as reduce's
/// adaptive blocks choose it: $SPARSE_REDUCE_TUNING, else the defaults,
/// where it does not), and not at all for a slice that fills the range; the
/// form rides in the top bits of the slice's count. An index_value_vector or
/// Eigen::SparseVector with 32-bit indices is sent from its own arrays (one
/// pass checks it; the cuts are binary searches); other inputs are cut in
/// one pass into a copy. The owner folds the P runs in rank order with the
/// merge kernel of kernel/merge_arrays.hpp, pairwise ((s0 ⊗ s1) ⊗ (s2 ⊗
/// s3)) ..., the last round straight into `out`, so non-commutative
/// operations get the rank order and the fold costs O(n log P). What a call
/// receives and its rounds use memory kept on the communicator, grown by a
/// quarter more than asked: a loop of calls allocates nothing once its
/// sizes settle. Nothing goes through Boost.Serialization.
///
/// Errors, on every rank and before any entry is folded: an
/// intercommunicator (refused before any collective); and, told in the
/// headers, ranks disagreeing on D or on the ranges, ranges
/// that are not P + 1 non-decreasing boundaries from 0 to D, a corrupt input
/// (indices out of order or range) and an op made by make_op whose identity
/// does not hold on a sample of the input's values, on any rank: each
/// throws sparse_reduce::error naming the rank at fault (a rank that failed
/// sends no slices; the others' are taken and dropped). An op that
/// throws (anything, `throw 42;` too) while a rank folds its range, memory
/// that runs out on a rank (its room for what it receives: it then takes
/// the pieces, of 1 MiB, into a drain of one piece and drops them), or an
/// output it cannot make: every rank throws sparse_reduce::error naming the
/// lowest failing rank. Room and output are made before the fold. Where the
/// op is noexcept: where the headers show that no rank must allocate (its
/// room and its output, whose capacity its header tells, hold what comes
/// to it: a loop that keeps its output, once its sizes settle), nothing
/// can fail and the call takes one round; else the ranks agree on room and
/// output by a status word from every rank to every other, one latency
/// more, and fold after; a failed call leaves every output it began empty.
/// Where the op may throw they agree on everything, the fold included, in
/// one small allreduce after the fold, and a rank whose own fold succeeded
/// keeps its result.
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
#include <utility>
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
#include "../kernel/merge_arrays.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/dimension_agreement.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../repr/representation.hpp"
#include "../report.hpp"
#include "../select/tuning.hpp"
#include "call_check.hpp"
#include "range_agreement.hpp"
#include "scatter/headers.hpp"
#include "scatter/room.hpp"
#include "scatter/slices.hpp"

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

// Folds the runs pairwise in rank order, ((r0 ⊗ r1) ⊗ (r2 ⊗ r3)) ..., with
// the merge kernel (kernel/merge_arrays.hpp: the runs hold no identity), the
// last round straight into the output's slots (room for every entry of the
// runs); base: what an index adds to be global. Returns the entries written.
template <class I, class T, class Slots, class Op>
std::size_t fold_into(scatter_room<I, T>& room, Slots slots, std::size_t base, const Op& op, const T& id)
{
    int area = 0;
    while (room.runs.size() > 2) {
        I* oi = room.tmp_idx[area].data();
        T* ov = room.tmp_val[area].data();
        room.next.clear();
        for (std::size_t r = 0; r < room.runs.size(); r += 2) {
            const auto& a = room.runs[r];
            std::size_t n = a.n;
            if (r + 1 < room.runs.size()) {
                const auto& b = room.runs[r + 1];
                n = merge_arrays<I>(a.idx, a.val, a.n, b.idx, b.val, b.n, oi, ov, op, id);
            } else {
                std::copy(a.idx, a.idx + a.n, oi);
                std::copy(a.val, a.val + a.n, ov);
            }
            room.next.push_back({oi, ov, n});
            oi += n;
            ov += n;
        }
        room.runs.swap(room.next);
        area ^= 1;
    }
    using OI = std::remove_pointer_t<decltype(slots.index)>;
    const run_view<I, T> a = room.runs.empty() ? run_view<I, T>{nullptr, nullptr, 0} : room.runs[0];
    std::size_t n = a.n;
    if (room.runs.size() == 2 && base == 0) {
        const auto& b = room.runs[1];
        n = merge_arrays<OI>(a.idx, a.val, a.n, b.idx, b.val, b.n, slots.index, slots.value, op, id);
    } else {
        const I* ai = a.idx;
        const T* av = a.val;
        if (room.runs.size() == 2) { // offsets: merged apart, then made global
            const auto& b = room.runs[1];
            n = merge_arrays<I>(a.idx, a.val, a.n, b.idx, b.val, b.n, room.tmp_idx[area].data(), room.tmp_val[area].data(), op, id);
            ai = room.tmp_idx[area].data();
            av = room.tmp_val[area].data();
        }
        for (std::size_t k = 0; k < n; ++k) {
            slots.index[k] = static_cast<OI>(base + static_cast<std::size_t>(ai[k]));
            slots.value[k] = av[k];
        }
    }
    return n;
}

// The messages of one slice, either way: its indices in their form
// (index_bytes of them, from or into `indices`; none for a full slice),
// then its values.
template <class T, class Bytes>
void slice_messages(std::size_t index_bytes, std::size_t n, Bytes&& bytes, void* indices, void* values)
{
    if (index_bytes) bytes(indices, index_bytes, scatter_offset_tag);
    bytes(values, n * sizeof(T), scatter_value_tag);
}

// A slice whose header announces index bytes its form cannot take (only a
// fault below the library can send one): taken into the drain, then failed.
inline constexpr std::size_t malformed_slice = ~std::size_t{0};

// Where the indices of rank r's slice land: a bitmap in the room's bitmap
// words, gaps in the first fold area (fewer bytes than listed, read from
// there into idx before the fold), listed ones in idx; null for one that
// does not fit its form.
template <class I, class T>
void* index_landing(scatter_room<I, T>& room, const slice_counts& c, std::size_t r, std::size_t mine)
{
    const std::size_t n = c.recv[r], b = c.recv_index[r];
    switch (c.recv_form[r]) {
    case slice_form::bitmap: return b == 8 * bitmap_words(mine) ? room.bits.data() + room.bits_at[r] : nullptr;
    case slice_form::gaps: return n <= b && b < n * sizeof(I) ? room.tmp_idx[0].data() + c.at[r] : nullptr; // a byte a gap at least
    case slice_form::full: return b == 0 ? room.idx.data() : nullptr;
    default: return b == n * sizeof(I) ? room.idx.data() + c.at[r] : nullptr;
    }
}

// The indices of the runs that came as bitmaps, gaps or full, written out
// where listed ones land; base: what a wire index adds to be this rank's
// index type (global indices: the range's start; offsets: 0). Empty, else why not.
template <class I, class T>
std::string unpack_indices(scatter_room<I, T>& room, const slice_counts& c, std::size_t len, std::size_t self,
                           std::size_t base)
{
    for (std::size_t r = 0; r < c.recv.size(); ++r) {
        if (r == self || !c.recv[r]) continue;
        I* out = room.idx.data() + c.at[r];
        const auto n = static_cast<std::size_t>(c.recv[r]);
        const auto why = [&](const char* what) { return "reduce_scatter: rank " + std::to_string(r) + "'s " + what; };
        if (c.recv_index[r] == malformed_slice) return why("slice announced index bytes its form cannot take");
        if (c.recv_form[r] == slice_form::full) { // n == len (forms_fault)
            for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<I>(base + k);
        } else if (c.recv_form[r] == slice_form::bitmap &&
                   !read_index_bitmap(room.bits.data() + room.bits_at[r], len, base, n, out))
            return why("bitmap does not mark its entries");
        else if (c.recv_form[r] == slice_form::gaps &&
                 !read_index_gaps(reinterpret_cast<const std::byte*>(room.tmp_idx[0].data() + c.at[r]), c.recv_index[r], n,
                                  base, len, out))
            return why("gaps do not hold its entries");
    }
    return {};
}

// This rank's slices, posted (before the headers are in: a header and its
// slice travel together).
template <class I, class T>
void post_sends(MPI_Comm pc, const slices<I, T>& s, slice_counts& c, std::size_t self, report& rep)
{
    const std::size_t P = c.send.size();
    for (std::size_t k = 1; k < P; ++k) {
        const std::size_t d = (self + k) % P;
        if (!c.send[d]) continue;
        const bool stream = c.send_form[d] == slice_form::bitmap || c.send_form[d] == slice_form::gaps;
        const void* indices = stream ? static_cast<const void*>(s.bits.data() + s.bits_at[d])
                                     : static_cast<const void*>(s.idx + s.cut[d]);
        slice_messages<T>(c.send_index[d], c.send[d],
                          [&](void* p, std::size_t b, int tag) {
                              isend_bytes(p, b, static_cast<int>(d), tag, pc, c.reqs, scatter_piece_bytes);
                              rep.bytes_sent += b;
                              ++rep.messages_sent;
                          },
                          const_cast<void*>(indices), const_cast<T*>(s.val + s.cut[d]));
    }
}

// The slices that come to this rank, into the room, or, without room, into
// the drain, dropped (its own sends are posted already, so two such ranks
// that owe each other slices never wait for each other); returns when
// every request of the call is done.
template <class I, class T>
void receive_slices(MPI_Comm pc, scatter_room<I, T>& room, slice_counts& c, std::size_t mine, std::size_t self,
                    bool has_room, std::span<std::byte> drain, report& rep)
{
    for (std::size_t r = 0; r < c.recv.size(); ++r)
        if (c.recv[r] && r != self) {
            const auto from = static_cast<int>(r);
            const auto drop = [&](void*, std::size_t b, int tag) { drop_bytes(drain, b, scatter_piece_bytes, from, tag, pc); };
            void* indices = has_room ? index_landing(room, c, r, mine) : nullptr;
            if (!has_room || !indices) {
                slice_messages<T>(c.recv_index[r], c.recv[r], drop, nullptr, nullptr);
                if (has_room) c.recv_index[r] = malformed_slice;
                continue;
            }
            slice_messages<T>(c.recv_index[r], c.recv[r],
                              [&](void* p, std::size_t b, int tag) {
                                  irecv_bytes(p, b, from, tag, pc, c.reqs, scatter_piece_bytes);
                                  rep.bytes_received += b;
                              },
                              indices, room.val.data() + c.at[r]);
        }
    wait_all(c.reqs);
}

// The runs received and this rank's own, in rank order (empty ones left
// out), folded into the output's slots; empty, else why not.
template <class I, class T, class Slots, class Op>
std::string fold_runs(scatter_room<I, T>& room, const slice_counts& c, std::span<const std::size_t> ranges,
                      std::size_t self, bool global, Slots slots, std::size_t& written, const Op& op, const T& id)
{
    const std::size_t lo = ranges[self], mine = ranges[self + 1] - lo;
    if (auto why = unpack_indices(room, c, mine, self, global ? lo : 0); !why.empty()) return why;
    const slices<I, T>& s = room.s;
    room.runs.clear();
    for (std::size_t r = 0; r < c.recv.size(); ++r) {
        if (r == self && c.send[self]) room.runs.push_back({s.idx + s.cut[self], s.val + s.cut[self], s.cut[self + 1] - s.cut[self]});
        if (r != self && c.recv[r])
            room.runs.push_back({room.idx.data() + c.at[r], room.val.data() + c.at[r], static_cast<std::size_t>(c.recv[r])});
    }
    written = fold_into(room, slots, global ? 0 : lo, op, id);
    return {};
}

// Once the headers are in and agreed (scatter/headers.hpp), a rank makes
// the room for what it receives and for its output. One without it still
// takes what comes to it into the drain and drops it, and every rank
// throws, naming it, so nobody waits and nothing stays queued. Where the
// operation cannot throw, that is the last thing that can fail: where the
// headers show that no rank must allocate, nothing can, and the call ends
// with the fold; else the ranks agree on it by status words (a word from
// every rank to every other) and fold after. Otherwise the fold comes
// before the agreement too (the op may throw anything): every rank throws
// or none.
template <class I, class Out, class T, class Op>
void scatter_with(MPI_Comm pc, std::size_t dim, Out& out, const Op& op, std::span<const std::size_t> ranges, const T& id,
                  scatter_room<I, T>& room, slice_counts& c, const scatter_headers& h, bool global,
                  std::span<std::byte> drain, report& rep)
{
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    constexpr bool op_may_throw = !noexcept(op(std::declval<const T&>(), std::declval<const T&>()));
    const std::size_t P = c.recv.size(), self = h.self, mine = ranges[self + 1] - ranges[self];
    const int me = static_cast<int>(self);
    const auto to = [&](std::size_t q) { return h.count_word(q, self); };
    const auto from = [&](std::size_t d) { return c.wire[d]; };
    for (std::size_t r = 0; r < P; ++r) {
        c.recv[r] = count_of(to(r));
        c.recv_form[r] = form_of(to(r));
        c.recv_index[r] = r != self ? h.from(r)[h_index_bytes] : 0;
        c.at[r + 1] = c.at[r] + (r != self ? c.recv[r] : 0);
    }
    c.status_round = op_may_throw || needs_status(h, ranges, sizeof(I), sizeof(T));
    // the forms, then the room and the output: agreed on before the fold
    std::string failure;
    std::optional<decltype(RO::begin_output(out, dim, 0))> slots;
    bool began = false;
    try {
        failure = forms_fault(to, P, mine, self);
        if (failure.empty()) {
            make_room(room, need_of(to, from, ranges, self, sizeof(I), sizeof(T)), c.recv_form, c.recv, mine, self, c.reqs);
            began = true;
            // where the output must grow, a quarter more (reserve_more), as far as its index type counts
            const std::size_t total = c.at[P] + static_cast<std::size_t>(c.send[self]);
            const auto most = static_cast<std::size_t>(std::numeric_limits<typename RO::index_type>::max());
            const std::size_t more = output_capacity(out) < total && tells_capacity<Out> ? total + total / 4 : total;
            slots = RO::begin_output(out, dim, std::max(total, std::min(more, most)));
        }
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
    // an output begun is left valid, with no entries, by any failure (shrinking allocates nothing)
    const auto empty_output = [&] {
        if (began) RO::commit_output(out, 0);
    };
    if (!failure.empty()) empty_output();
    if (!op_may_throw && c.status_round) {
        c.status.post(pc, me, !failure.empty(), scatter_status_tag, c.reqs);
        rep.messages_sent += P - 1;
        rep.bytes_sent += (P - 1) * sizeof(std::uint64_t);
        rep.bytes_received += (P - 1) * sizeof(std::uint64_t);
    }
    receive_slices(pc, room, c, mine, self, failure.empty(), drain, rep);
    if (!op_may_throw && c.status_round)
        if (const int first = c.status.first_failed(); first != INT_MAX) {
            empty_output();
            fail("reduce_scatter failed on " + broadcast_failure_text(pc, me, first, failure));
        }
    std::size_t written = 0;
    if (failure.empty()) try {
            failure = fold_runs(room, c, ranges, self, global, *slots, written, op, id);
        } catch (...) {
            failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
        }
    if (began) RO::commit_output(out, failure.empty() ? written : 0);
    if constexpr (op_may_throw) throw_if_any_failed(pc, failure, "reduce_scatter failed on");
    else if (!failure.empty()) fail(failure); // indices that came malformed: a fault below the library
}

// One rank's input cut by range: indices global and 32-bit when the
// dimension fits, else offsets, 32-bit when every range is shorter than
// 2^32. Its room and counts are the communicator's (comm_state memos).
// Default: no entries (a rank whose input failed takes part so).
template <class T>
struct cut_input {
    bool global = true, narrow = true;
    scatter_room<std::uint32_t, T>* r32 = nullptr;
    scatter_room<std::uint64_t, T>* r64 = nullptr;
    slice_counts* counts = nullptr;

    cut_input(comm_state& st, std::span<const std::size_t> ranges, std::size_t dim)
    {
        std::size_t widest = 0;
        for (std::size_t r = 0; r + 1 < ranges.size(); ++r) widest = std::max(widest, ranges[r + 1] - ranges[r]);
        global = narrow_indices(dim); // every index of the dimension fits 32 bits
        narrow = global || narrow_indices(widest);
        counts = &st.memo<slice_counts>();
        counts->resize(ranges.size() - 1);
        if (narrow) r32 = &st.memo<scatter_room<std::uint32_t, T>>();
        else r64 = &st.memo<scatter_room<std::uint64_t, T>>();
        narrow ? r32->s.cut.assign(ranges.size(), 0) : r64->s.cut.assign(ranges.size(), 0);
    }
    // Throws on a corrupt input. An input that is also the output is copied.
    // bitmap: whether slices may travel as bitmaps (bitmap_blocks()).
    template <class In>
    void cut(const In& in, std::span<const std::size_t> ranges, const T& id, std::size_t self, bool is_output, bool bitmap)
    {
        if (!narrow) {
            cut_by_range<std::uint64_t>(in, ranges, id, false, r64->s);
            counts->count_sends(r64->s, ranges, self, false, bitmap);
            return;
        }
        if (!(global && !is_output && cut_in_place(in, ranges, id, r32->s)))
            cut_by_range<std::uint32_t>(in, ranges, id, global, r32->s);
        counts->count_sends(r32->s, ranges, self, global, bitmap);
    }
    // What this rank holds (scatter/room.hpp); output: its output's capacity.
    scatter_caps caps(std::size_t output) const
    {
        const std::size_t P = counts->send.size(), requests = counts->reqs.capacity();
        return narrow ? caps_of(*r32, requests, output, P) : caps_of(*r64, requests, output, P);
    }
    // The bytes of the indices of this rank's slice to d.
    std::size_t index_bytes(std::size_t d) const { return counts->send_index[d]; }
    void post_sends(MPI_Comm pc, std::size_t self, report& rep)
    {
        if (narrow) detail::post_sends(pc, r32->s, *counts, self, rep);
        else detail::post_sends(pc, r64->s, *counts, self, rep);
    }
    // The room, the fold and the agreement, once the headers are in and agreed.
    template <class Out, class Op>
    void scatter_and_fold(MPI_Comm pc, std::size_t dim, Out& out, const Op& op, std::span<const std::size_t> ranges, const T& id,
                          const scatter_headers& h, std::span<std::byte> drain, report& rep)
    {
        if (narrow) scatter_with(pc, dim, out, op, ranges, id, *r32, *counts, h, global, drain, rep);
        else scatter_with(pc, dim, out, op, ranges, id, *r64, *counts, h, false, drain, rep);
    }
};

template <representation In, index_value_representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>> &&
             std::is_trivially_copyable_v<value_type_of<In>>
std::vector<std::size_t> reduce_scatter_checked(const boost::mpi::communicator& comm, const In& in, Out& out,
                                                const Op& op, std::span<const std::size_t> ranges)
{
    using T = value_type_of<In>;
    detail::enter_collective(MPI_Comm(comm), "reduce_scatter");
    const MPI_Comm pc = detail::private_comm(MPI_Comm(comm));
    const int ranks = comm.size();
    const auto self = static_cast<std::size_t>(comm.rank());
    const std::size_t dim = dimension(in);
    const T id = identity<T>(op);
    detail::comm_state& state = detail::state_of(MPI_Comm(comm)); // collective on first use, agreed
    detail::node_buffers& drain_holder = state.whole;
    // the headers and the drain: made on the first call, agreed
    detail::scatter_headers& h = detail::agreed_headers(state, pc, drain_holder, detail::scatter_piece_bytes);
    // Everything this rank makes before the exchange (the ranges, the cut
    // input, the exchange's counts) is made before the ranks agree, so that a
    // failure here (a corrupt input, a make_op identity that does not hold on
    // this rank's values, memory) fails every rank.
    std::vector<std::size_t> used;
    std::optional<detail::cut_input<T>> cut;
    std::string failure;
    try {
        used = ranges.empty() ? block_ranges(dim, ranks) : std::vector<std::size_t>(ranges.begin(), ranges.end());
        failure = detail::check_ranges(used, dim, ranks);
        if (failure.empty())
            if (auto why = detail::dimension_limit_violation(dim, sizeof(T)); !why.empty()) failure = "reduce_scatter: " + why;
        // The output must hold the dimension's indices (Eigen's StorageIndex may be narrower).
        using OI = typename repr_traits<std::remove_cvref_t<Out>>::index_type;
        if (failure.empty() && dim > 0 && dim - 1 > static_cast<std::size_t>(std::numeric_limits<OI>::max()))
            failure = "reduce_scatter: dimension " + std::to_string(dim) + " does not fit the output's index type";
        if (failure.empty()) {
            cut.emplace(state, used, dim);
            failure = detail::identity_law_violation(op, id, in);
            if (failure.empty()) cut->cut(in, used, id, self, detail::same_object(in, out), detail::bitmap_blocks());
        }
    } catch (...) {
        failure = detail::caught_text();
    }
    const bool failed = !failure.empty();
    detail::slice_counts* counts = cut ? cut->counts : nullptr; // (null: this rank failed before it counted)
    report rep;
    // the headers, then this rank's slices, posted together: one round
    detail::post_headers(pc, h, failed, dim, failed ? 0 : detail::hash_ranges(used),
                         // caps that never fit where the output does not tell its capacity
                         failed || !detail::tells_capacity<Out> ? detail::scatter_caps{} : cut->caps(detail::output_capacity(out)),
                         counts ? std::span<const std::uint64_t>(counts->wire) : std::span<const std::uint64_t>(),
                         [&](std::size_t d) { return cut->index_bytes(d); });
    const std::size_t header_bytes = (h.P - 1) * h.width * sizeof(std::uint64_t);
    rep.messages_sent += h.P - 1;
    rep.bytes_sent += header_bytes;
    rep.bytes_received += header_bytes;
    if (!failed) cut->post_sends(pc, self, rep);
    detail::wait_all(h.reqs);
    std::vector<MPI_Request> none;
    detail::header_verdict(pc, h, dim, failure, sizeof(T), drain_holder.drain(), counts ? counts->reqs : none);
    counts->last = rep;
    cut->scatter_and_fold(pc, dim, out, op, used, id, h, drain_holder.drain(), counts->last);
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
