#pragma once
// split-allgather's first half (detail; collective/allreduce.hpp): a
// reduce_scatter by block ranges (range_scatter), then an allgather of the
// reduced ranges (range_allgather.hpp).
// policy::split_allgather is one group of all ranks of grouped.hpp, which
// runs them within each group.
//
// Both halves stream (the allgather into a dense output; into a sparse one
// each range goes in one message): a range travels in segments of whole
// windows (about stream_message_bytes when dense), each message the segment's wire blocks
// then its sender's status word, in steps: in step j every member sends
// segment j of what it owes each peer (two in flight per peer at most),
// then takes segment j from every member in member order; segments in
// which a sparse partial has no entry ride along with the one before as
// empty runs (segment_stream.hpp). So a member
// holds its input, its range's accumulator, the output and a few messages
// per peer, not every piece whole (peak memory: doc/benchmarks.md), and a
// dense accumulator gets the pieces in rank order, the serial fold's order, bit for bit. Full ranges go raw
// (segment_stream), and with dense blocks on the wire so does any range
// with an entry (goes_raw): then the call copies nothing into a message and
// sends MPI_Allreduce's bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../report.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/tags.hpp"
#include "../../wire/block.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "partial_ops.hpp"
#include "segment_stream.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// An entry count not known.
inline constexpr std::size_t no_count = ~std::size_t{0};

// Where the values of [lo, lo + n) of a partial (or of the dense array
// `dense`, when given) lie in a row: a dense one's, or those of an
// index/value one that holds every index there (its values are then that
// window's dense array). nullptr if neither.
template <class T>
const T* values_in_a_row(const partial<T>& p, const T* dense, std::size_t lo, std::size_t n)
{
    if (!dense && p.is_dense) dense = p.dense_values();
    if (dense) return dense + lo;
    const auto idx = p.sparse.indices();
    const auto k = static_cast<std::size_t>(std::lower_bound(idx.begin(), idx.end(), std::uint64_t{lo}) - idx.begin());
    if (n == 0 || k + n > idx.size() || idx[k + n - 1] != lo + n - 1) return nullptr; // sorted, no repeats
    return p.sparse.values().data() + k;
}

template <class T>
std::span<const std::byte> raw_bytes(const T* p, std::size_t n)
{
    return p ? std::as_bytes(std::span<const T>(p, n)) : std::span<const std::byte>{};
}
template <class T>
std::span<std::byte> raw_bytes(T* p, std::size_t n)
{
    return std::as_writable_bytes(std::span<T>(p, n));
}
// The plan's receive buffer as room for n values (grown, never shrunk); a
// rank that cannot grow it fails (st) and takes them into the plan's drain
// (a raw segment is within stream_drain_bytes).
template <class T>
std::span<std::byte> receive_room(exchange_buffers& b, std::size_t n, call_status& st)
{
    if (!st.failed()) try {
            if (b.receive.size() * 8 < n * sizeof(T)) b.receive.resize((n * sizeof(T) + 7) / 8);
            return raw_bytes(reinterpret_cast<T*>(b.receive.data()), n);
        } catch (...) {
            st.fail_here();
        }
    return std::span<std::byte>(b.drain.data(), std::min(b.drain.size(), n * sizeof(T)));
}

// Entries of this member's input in [lo, hi) (a dense one counted in one
// vectorised pass, so a dense array of few entries keeps a sparse range).
template <class T>
std::size_t entries_in(const partial<T>& mine, const T* dense_in, std::size_t lo, std::size_t hi, const T& id)
{
    if (!dense_in && mine.is_dense) dense_in = mine.dense.data();
    if (dense_in) return count_entries(std::span<const T>(dense_in + lo, hi - lo), id);
    const auto idx = mine.sparse.indices();
    const auto b = std::lower_bound(idx.begin(), idx.end(), static_cast<std::uint64_t>(lo));
    return static_cast<std::size_t>(std::lower_bound(b, idx.end(), static_cast<std::uint64_t>(hi)) - b);
}

// Segments [j, j + k) of the windows of [0, len) as blocks from byte 0 of
// `bytes`: each given to f(view, lo) (an empty run as one view); the bytes
// must end with the last.
template <class T, class F>
void for_blocks(std::span<const std::byte> bytes, std::size_t j, std::size_t k, std::size_t seg, std::size_t len,
                std::size_t window, const F& f)
{
    std::size_t at = 0;
    const std::size_t to = std::min(len, (j + k) * seg);
    for (std::size_t lo = j * seg; lo < to;) {
        const auto v = parse_window<T>(bytes.subspan(at), lo, to, window);
        at += v.bytes;
        f(v, lo);
        lo += v.length;
    }
    if (at != bytes.size()) fail("malformed segment: ", bytes.size() - at, " bytes after its blocks");
}

// A range goes raw (its values as they lie, identities included: the
// receiver's fold blends them) when it is full, or has an entry and dense
// blocks are on the wire (the same bytes but for the headers; the receiver
// then folds into a dense accumulator, where dense blocks into a sparse one
// would decode every element: 3.3-4.5 ms at 10 %, P = 2, 2^18, against
// 1.0-1.2 for MPI_Allreduce); and the sender has its values in a row. The
// sender decides and says so in its count's top bit (so ranks with
// different wire policies still agree).
inline constexpr std::uint64_t raw_flag = std::uint64_t{1} << 63;
inline bool goes_raw(std::size_t count, std::size_t len, wire::format fmt)
{
    return count > 0 && (count == len || fmt == wire::dense);
}
// Whether a count exchanged says its range goes raw.
inline bool sent_raw(std::uint64_t count) { return (count & raw_flag) != 0; }

// The counts of an updating (range_scatter): the entries this member sends
// each member (send[d]; none counted for itself; raw_flag set where it goes
// raw) and gets from each (recv[r]), both in the plan's scratch, posted
// (post_words). `counted`: this member's entries per range, when counted
// already (automatic's choice counts them; its own range not_counted), else
// empty.
template <class T>
void post_counts(MPI_Comm pc, const partial<T>& mine, const T* dense_in, std::span<const std::size_t> ranges,
                 const T& id, const call_status& st, std::span<const std::uint64_t> counted, wire::format fmt,
                 stream_scratch& scratch, int tag)
{
    int member = 0;
    MPI_Comm_rank(pc, &member);
    const auto me = static_cast<std::size_t>(member), n = ranges.size() - 1;
    auto &send = scratch.count_send, &recv = scratch.count_recv;
    send.assign(n, 0);
    recv.assign(n, 0);
    const bool known = counted.size() == n;
    for (std::size_t d = 0; d < n; ++d) {
        send[d] = st.failed() || d == me ? 0
                  : known                ? counted[d]
                                         : entries_in(mine, dense_in, ranges[d], ranges[d + 1], id);
        const std::size_t len = ranges[d + 1] - ranges[d];
        if (goes_raw(send[d], len, fmt) && values_in_a_row(mine, dense_in, ranges[d], len)) send[d] |= raw_flag;
    }
    post_words(pc, send, recv, tag, scratch.count_requests);
}

// Once the counts are in: whether this member's range accumulates densely.
// Its own count matters only for that decision: it is taken after the
// others' are known, and only as far as that needs (at full density, not
// at all).
template <class T>
bool accumulates_densely(std::size_t me, const partial<T>& mine, const T* dense_in,
                         std::span<const std::size_t> ranges, const T& id, const call_status& st,
                         std::span<const std::uint64_t> counted, std::span<const std::uint64_t> recv)
{
    std::uint64_t entries = 0;
    bool raw = false; // a raw piece is folded into a dense accumulator
    for (const auto e : recv) {
        entries += e & ~raw_flag;
        raw = raw || (e & raw_flag);
    }
    const std::size_t len = ranges[me + 1] - ranges[me], dense_from = dense_is_smaller_entries<T>(len);
    if (raw || entries >= dense_from) return true;
    if (st.failed()) return false;
    const std::size_t need = dense_from - static_cast<std::size_t>(entries);
    return counted.size() == ranges.size() - 1 && counted[me] != not_counted ? counted[me] >= need
           : dense_in ? holds_entries(std::span<const T>(dense_in + ranges[me], len), need, id)
                      : entries_in(mine, dense_in, ranges[me], ranges[me + 1], id) >= need;
}

// A dense accumulator of len elements: in `place` (this member's range of
// the caller's dense output) unless that overlaps this member's own values
// `own` (in and out one array), else in an array of its own (none on a rank
// that cannot make it: it fails, st, and goes on).
template <class T>
partial<T> dense_accumulator(T* place, const T* own, std::size_t len, call_status& st)
{
    partial<T> acc;
    acc.is_dense = true;
    const auto at = [](const T* p) { return reinterpret_cast<std::uintptr_t>(p); };
    if (place && (!own || at(own + len) <= at(place) || at(place + len) <= at(own))) {
        acc.external = place;
        acc.external_size = len;
    } else if (!st.failed()) {
        try {
            acc.dense.resize(len);
        } catch (...) {
            st.fail_here();
        }
    }
    return acc;
}

// Sparse pieces gathered whole (filled[r] bytes of whole[r]), folded in
// member order as partials ((p0 p1) p2) ...
template <class T, class Op>
partial<T> fold_sparse_pieces(std::span<wire_buffer> whole, std::span<const std::size_t> filled, std::size_t len,
                              std::size_t window, const T& id, const Op& op, call_status& st)
{
    partial<T> acc;
    acc.sparse = index_value_vector<T, std::uint64_t>(len);
    if (st.failed()) return acc;
    try {
        for (std::size_t r = 0; r < whole.size(); ++r) {
            auto piece = decode_partial(parse_partial<T>(bytes_of(whole[r], filled[r]), len, window), len, id);
            acc = r == 0 ? std::move(piece) : combine_partials(acc, piece, op, len);
            whole[r] = {};
        }
    } catch (...) {
        st.fail_here();
    }
    return acc;
}

// This member's own piece, first of its segment (scatter_ranges): folded
// with the next piece, or written as it is (flush) if none comes (empty
// runs stood for the others').
template <class T>
struct pending_piece {
    const T* values = nullptr;
    T* to = nullptr;
    std::size_t length = 0;
    void hold(const T* v, T* at, std::size_t n)
    {
        flush();
        values = v;
        to = at;
        length = n;
    }
    void flush()
    {
        if (values) std::copy(values, values + length, to);
        values = nullptr;
    }
    const T* take() { return std::exchange(values, nullptr); }
    const T* at(std::size_t offset) const { return values ? values + offset : nullptr; }
};

// Updating within a group: member k gets every member's entries in its
// range [ranges[k], ranges[k + 1]) (windows of `window` from the range's
// start), streamed (segment_stream, on `tag`), as steps: step(true) runs it
// to its end, step(false) as far as it goes without waiting; result() is
// then this member's range of the reduction. An exchange of entry counts
// first (post_counts): when they fill the range, each segment is folded on
// arrival into a dense accumulator, in member order; else the pieces are
// kept whole (in the plan's scratch) and folded in member order as
// partials ((p0 p1) p2) ... `mine` is this member's input as a partial, or
// `dense_in` its dense array. A dense accumulator is built in `place` (this
// member's range of the caller's dense output, when given and apart from
// the input) and allocates nothing.
//
// A sender whose range for k is full (count = the range's length) sends
// it raw: the dense array, or a full index/value one's values, go out as
// they lie. A full piece means a dense accumulator:
// dense_is_smaller_entries(len) <= len for any value size. Segment j of the
// accumulator is the first piece (member 0's) written there, raw ones
// received straight into it, this member's own not copied but folded with
// the next; then each piece folded on. When every segment's last piece is
// raw, that fold counts the accumulator's entries (entries()). Not movable:
// its stream refers to it.
template <class T, class Op>
class range_scatter {
public:
    range_scatter(MPI_Comm pc, const partial<T>& mine, const T* dense_in, std::span<const std::size_t> ranges,
                  std::size_t window, const T& id, wire::format fmt, const Op& op, report& rep, call_status& st,
                  exchange_buffers& buffers, int tag, T* place = nullptr, std::span<const std::uint64_t> counted = {})
        : pc_(pc), mine_(mine), dense_in_(dense_in), ranges_(ranges), window_(window), id_(id), fmt_(fmt), op_(op),
          rep_(rep), st_(st), buffers_(buffers), tag_(tag), place_(place), counted_(counted),
          me_(member_of(pc)), n_(ranges.size() - 1), seg_(segment_elements<T>(window)),
          len_(ranges[me_ + 1] - ranges[me_])
    {
        auto &sends = buffers.stream.sends, &recvs = buffers.stream.recvs; // the plan's: no allocation
        segments_per_range(sends, ranges, seg_);
        recvs.assign(n_, segments_of(len_, seg_));
        post_counts(pc, mine, dense_in, ranges, id, st, counted, fmt, buffers.stream, tag);
    }
    range_scatter(const range_scatter&) = delete;
    range_scatter& operator=(const range_scatter&) = delete;

    bool step(bool may_wait)
    {
        if (!stream_) {
            if (!requests_done(buffers_.stream.count_requests, may_wait)) return false;
            begin();
        }
        if (!stream_->step(may_wait)) return false;
        if (!ended_) {
            ended_ = true;
            end();
        }
        return true;
    }

    partial<T>& result() { return acc_; }
    // The accumulator's entries, where the last folds counted them; else no_count.
    std::size_t entries() const { return entries_; }

    // segment_stream's host:
    std::size_t encode(std::size_t d, std::size_t j, wire_buffer& b, std::size_t& k)
    {
        return append_segments<T>(mine_, dense_in_, ranges_[d] + j * seg_, ranges_[d + 1], seg_, window_, id_, fmt_, b,
                                  buffers_.bitmap, k);
    }
    std::span<const std::byte> raw_out(std::size_t d, std::size_t j)
    {
        if (d != me_) return raw_to(d, j);
        if (!dense_) return {};
        const auto [first, length] = piece(d, j);
        return raw_bytes(own_ ? own_ + (first - ranges_[me_]) : nullptr, length);
    }
    std::span<std::byte> raw_in(std::size_t r, std::size_t j)
    {
        if (!dense_ || !sent_raw(recv()[r])) return {}; // nothing comes in raw into a sparse accumulator
        const auto [first, length] = piece(me_, j);
        if (r == 0 && acc_.dense_data()) return raw_bytes(acc_.dense_data() + (first - ranges_[me_]), length);
        return receive_room<T>(buffers_, length, st_);
    }
    void take(std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes)
    {
        if (dense_) take_dense(r, j, k, bytes);
        else take_whole(r, bytes);
    }

private:
    static std::size_t member_of(MPI_Comm pc)
    {
        int member = 0;
        MPI_Comm_rank(pc, &member);
        return static_cast<std::size_t>(member);
    }
    std::span<const std::uint64_t> send() const { return buffers_.stream.count_send; }
    std::span<const std::uint64_t> recv() const { return buffers_.stream.count_recv; }
    // segment j of range d: first element, length
    std::pair<std::size_t, std::size_t> piece(std::size_t d, std::size_t j) const
    {
        return {ranges_[d] + j * seg_, std::min(seg_, ranges_[d + 1] - ranges_[d] - j * seg_)};
    }
    // what this member sends raw (its counts said so), whatever its own accumulator
    std::span<const std::byte> raw_to(std::size_t d, std::size_t j) const
    {
        const auto [first, length] = piece(d, j);
        return sent_raw(send()[d]) ? raw_bytes(values_in_a_row(mine_, dense_in_, first, length), length)
                                   : std::span<const std::byte>{};
    }

    // The counts are in: the accumulator, and the stream.
    void begin()
    {
        dense_ = accumulates_densely(me_, mine_, dense_in_, ranges_, id_, st_, counted_, recv());
        if (dense_) {
            own_ = st_.failed() ? nullptr : values_in_a_row(mine_, dense_in_, ranges_[me_], len_);
            acc_ = dense_accumulator(place_, own_, len_, st_);
        } else {
            buffers_.stream.filled.assign(n_, 0);
        }
        stream_.emplace(pc_, buffers_.stream.sends, buffers_.stream.recvs, *this, rep_, st_, buffers_, tag_);
    }

    void end()
    {
        if (dense_) {
            if (!st_.failed()) pending_.flush();
            if (counted_segments_ == segments_of(len_, seg_)) entries_ = counted_entries_;
            return;
        }
        acc_ = fold_sparse_pieces(std::span<wire_buffer>(buffers_.stream.whole.data(), n_), buffers_.stream.filled,
                                  len_, window_, id_, op_, st_);
    }

    // A sparse accumulator's piece from r, kept whole.
    void take_whole(std::size_t r, std::span<const std::byte> bytes)
    {
        auto& whole = buffers_.stream.whole[r];
        auto& filled = buffers_.stream.filled[r];
        whole.resize((filled + bytes.size()) / 8);
        std::copy(bytes.begin(), bytes.end(), reinterpret_cast<std::byte*>(whole.data()) + filled);
        filled += bytes.size();
    }

    // A dense accumulator's segment j from r, folded in member order.
    void take_dense(std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes)
    {
        const std::size_t length = piece(me_, j).second;
        T* a = acc_.dense_data() + j * seg_;
        if (r == me_ ? own_ != nullptr : sent_raw(recv()[r])) {
            const T* v = reinterpret_cast<const T*>(bytes.data());
            const auto fold = [&]<bool counting>(std::bool_constant<counting>) {
                return pending_.values ? fold_dense_to<counting>(a, pending_.take(), v, length, op_, id_)
                                       : fold_dense<counting>(a, v, length, false, op_, id_);
            };
            if (r == 0) { // another's is received in place (raw_in)
                if (r == me_) pending_.hold(v, a, length);
            } else if (r + 1 < n_) {
                fold(std::false_type{});
            } else { // the last piece: its fold counts the result
                counted_entries_ += fold(std::true_type{});
                ++counted_segments_;
            }
            return;
        }
        for_blocks<T>(bytes, j, k, seg_, len_, window_, [&](const wire::block_view<T>& v, std::size_t lo2) {
            if (r == 0) wire::decode_block_into(v, id_, std::span<T>(acc_.dense_data() + lo2, v.length));
            else fold_block_into_dense(v, acc_.dense_data() + lo2, id_, op_, false, pending_.at(lo2 - j * seg_));
        });
        pending_.values = nullptr;
    }

    MPI_Comm pc_;
    const partial<T>& mine_;
    const T* dense_in_;
    std::span<const std::size_t> ranges_;
    std::size_t window_;
    T id_;
    wire::format fmt_;
    const Op& op_;
    report& rep_;
    call_status& st_;
    exchange_buffers& buffers_;
    int tag_;
    T* place_;
    std::span<const std::uint64_t> counted_;
    std::size_t me_, n_, seg_, len_;
    bool dense_ = false, ended_ = false;
    const T* own_ = nullptr;
    partial<T> acc_;
    pending_piece<T> pending_;
    std::size_t counted_entries_ = 0, counted_segments_ = 0; // the accumulator's entries, from raw last folds
    std::size_t entries_ = no_count;
    std::optional<segment_stream<range_scatter>> stream_;
};

} // namespace sparse_reduce::detail
