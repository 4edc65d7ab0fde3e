#pragma once
// split-allgather's two halves (detail; collective/allreduce.hpp): a
// reduce_scatter by block ranges, then an allgather of the reduced ranges.
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
// (stream_segments), and with dense blocks on the wire so does any range
// with an entry (goes_raw): then the call copies nothing into a message and
// sends MPI_Allreduce's bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
    if (at != bytes.size()) fail("malformed segment: " + std::to_string(bytes.size() - at) + " bytes after its blocks");
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

// The counts of an updating (scatter_ranges): the entries this member sends
// each member (send[d]; none counted for itself; raw_flag set where it goes
// raw) and gets from each (recv[r]), both in the plan's scratch, and
// whether its range's accumulator is dense. One MPI_Alltoall. This member's own count matters only for that decision: it
// is taken after the others' are known, and only as far as that needs (at
// full density, not at all). `counted`: this member's entries per range,
// when counted already (automatic's choice counts them; its own range
// not_counted), else empty.
struct scatter_counts {
    std::span<const std::uint64_t> send, recv;
    bool dense = false;
};

template <class T>
scatter_counts exchange_counts(MPI_Comm pc, const partial<T>& mine, const T* dense_in,
                                  std::span<const std::size_t> ranges, const T& id, const call_status& st,
                                  std::span<const std::uint64_t> counted, wire::format fmt, stream_scratch& scratch)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
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
    MPI_Alltoall(send.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, pc);
    scatter_counts c{send, recv};
    std::uint64_t entries = 0;
    bool raw = false; // a raw piece is folded into a dense accumulator
    for (const auto e : c.recv) {
        entries += e & ~raw_flag;
        raw = raw || (e & raw_flag);
    }
    const std::size_t len = ranges[me + 1] - ranges[me], dense_from = dense_is_smaller_entries<T>(len);
    c.dense = raw || entries >= dense_from;
    if (!c.dense && !st.failed()) {
        const std::size_t need = dense_from - static_cast<std::size_t>(entries);
        c.dense = known && counted[me] != not_counted ? counted[me] >= need
                  : dense_in ? holds_entries(std::span<const T>(dense_in + ranges[me], len), need, id)
                             : entries_in(mine, dense_in, ranges[me], ranges[me + 1], id) >= need;
    }
    return c;
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

// scatter_ranges into a sparse accumulator: the pieces gathered whole (in
// the plan's scratch), then folded in member order. This member still sends raw where its counts
// said so (raw_out); nothing comes in raw (a raw piece makes the
// accumulator dense).
template <class T, class Encode, class RawOut, class Op>
partial<T> scatter_sparse(MPI_Comm pc, std::span<const std::size_t> sends, std::span<const std::size_t> recvs,
                          const Encode& encode, const RawOut& raw_out, std::size_t len, std::size_t window,
                          const T& id, const Op& op, report& rep, call_status& st, exchange_buffers& buffers)
{
    const std::span<wire_buffer> whole(buffers.stream.whole.data(), recvs.size());
    auto& filled = buffers.stream.filled;
    filled.assign(recvs.size(), 0);
    const auto take = [&](std::size_t r, std::size_t, std::size_t, std::span<const std::byte> bytes) {
        whole[r].resize((filled[r] + bytes.size()) / 8);
        std::copy(bytes.begin(), bytes.end(), reinterpret_cast<std::byte*>(whole[r].data()) + filled[r]);
        filled[r] += bytes.size();
    };
    stream_segments(pc, sends, recvs, encode, take, raw_out, [](std::size_t, std::size_t) { return std::span<std::byte>{}; },
                    rep, st, buffers);
    return fold_sparse_pieces(whole, filled, len, window, id, op, st);
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
// start), streamed. One MPI_Alltoall of entry counts first: when they fill
// the range, each segment is folded on arrival into a dense accumulator,
// in member order; else the pieces are kept whole and folded in member
// order as partials ((p0 p1) p2) ... `mine` is this member's input as a
// partial, or `dense_in` its dense array. A dense accumulator is built in
// `place` (this member's range of the caller's dense output, when given
// and apart from the input) and allocates nothing.
//
// A sender whose range for k is full (count = the range's length) sends
// it raw (stream_segments): the dense array, or a full index/value one's
// values, go out as they lie. A full piece means a dense accumulator:
// dense_is_smaller_entries(len) <= len for any value size. Segment j of the
// accumulator is the first piece (member 0's) written there, raw ones
// received straight into it, this member's own not copied but folded with
// the next; then each piece folded on. When every segment's last piece is
// raw, that fold counts the accumulator's entries (*entries_out).
template <class T, class Op>
partial<T> scatter_ranges(MPI_Comm pc, const partial<T>& mine, const T* dense_in, std::span<const std::size_t> ranges,
                          std::size_t window, const T& id, wire::format fmt, const Op& op, report& rep,
                          call_status& st, exchange_buffers& buffers, T* place = nullptr,
                          std::size_t* entries_out = nullptr, std::span<const std::uint64_t> counted = {})
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    const std::size_t seg = segment_elements<T>(window), len = ranges[me + 1] - ranges[me];
    auto &sends = buffers.stream.sends, &recvs = buffers.stream.recvs; // the plan's: no allocation
    segments_per_range(sends, ranges, seg);
    recvs.assign(n, segments_of(len, seg));
    const auto counts = exchange_counts(pc, mine, dense_in, ranges, id, st, counted, fmt, buffers.stream);
    const auto &send = counts.send, &recv = counts.recv;
    const auto piece = [&](std::size_t d, std::size_t j) { // segment j of range d: first element, length
        return std::pair{ranges[d] + j * seg, std::min(seg, ranges[d + 1] - ranges[d] - j * seg)};
    };
    const auto encode = [&](std::size_t d, std::size_t j, wire_buffer& b, std::size_t& k) {
        return append_segments<T>(mine, dense_in, ranges[d] + j * seg, ranges[d + 1], seg, window, id, fmt, b,
                                  buffers.bitmap, k);
    };
    // what this member sends raw (its counts said so), whatever its own accumulator
    const auto raw_to = [&](std::size_t d, std::size_t j) {
        const auto [first, length] = piece(d, j);
        return sent_raw(send[d]) ? raw_bytes(values_in_a_row(mine, dense_in, first, length), length)
                            : std::span<const std::byte>{};
    };
    if (counts.dense) {
        const T* own = st.failed() ? nullptr : values_in_a_row(mine, dense_in, ranges[me], len);
        partial<T> acc = dense_accumulator(place, own, len, st);
        const auto raw_out = [&](std::size_t d, std::size_t j) {
            const auto [first, length] = piece(d, j);
            if (d == me) return raw_bytes(own ? own + (first - ranges[me]) : nullptr, length);
            return raw_to(d, j);
        };
        const auto raw_in = [&](std::size_t r, std::size_t j) {
            if (!sent_raw(recv[r])) return std::span<std::byte>{};
            const auto [first, length] = piece(me, j);
            if (r == 0 && acc.dense_data()) return raw_bytes(acc.dense_data() + (first - ranges[me]), length);
            return receive_room<T>(buffers, length, st);
        };
        pending_piece<T> pending;
        std::size_t counted = 0, counted_segments = 0; // the accumulator's entries, from raw last folds
        const auto take = [&](std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes) {
            const std::size_t length = piece(me, j).second;
            T* a = acc.dense_data() + j * seg;
            if (r == me ? own != nullptr : sent_raw(recv[r])) {
                const T* v = reinterpret_cast<const T*>(bytes.data());
                const auto fold = [&]<bool counting>(std::bool_constant<counting>) {
                    return pending.values ? fold_dense_to<counting>(a, pending.take(), v, length, op, id)
                                   : fold_dense<counting>(a, v, length, false, op, id);
                };
                if (r == 0) { // another's is received in place (raw_in)
                    if (r == me) pending.hold(v, a, length);
                } else if (r + 1 < n) {
                    fold(std::false_type{});
                } else { // the last piece: its fold counts the result
                    counted += fold(std::true_type{});
                    ++counted_segments;
                }
                return;
            }
            for_blocks<T>(bytes, j, k, seg, len, window, [&](const wire::block_view<T>& v, std::size_t lo2) {
                if (r == 0) wire::decode_block_into(v, id, std::span<T>(acc.dense_data() + lo2, v.length));
                else fold_block_into_dense(v, acc.dense_data() + lo2, id, op, false, pending.at(lo2 - j * seg));
            });
            pending.values = nullptr;
        };
        stream_segments(pc, sends, recvs, encode, take, raw_out, raw_in, rep, st, buffers);
        if (!st.failed()) pending.flush();
        if (entries_out && counted_segments == segments_of(len, seg)) *entries_out = counted;
        return acc;
    }
    const auto raw_out = [&](std::size_t d, std::size_t j) {
        return d == me ? std::span<const std::byte>{} : raw_to(d, j);
    };
    return scatter_sparse<T>(pc, sends, recvs, encode, raw_out, len, window, id, op, rep, st, buffers);
}

// Broadcasting within a group: every member's integrated range `mine` (local
// indices) to every member, streamed into dense_out when the output is
// `dense` (the ranks' outputs are of one kind; a failed rank may have none);
// else each range in one message, appended to idx / val in member order,
// which is index order. Into a dense output, one MPI_Allgather first says
// whose range goes raw (goes_raw, and its values in a row): those are
// received where they belong (stream_segments); `in_place`: this member's
// range is there already (scatter_ranges built it in place); `entries`:
// mine's, if known.
template <class T>
void allgather_ranges(MPI_Comm pc, const partial<T>& mine, std::span<const std::size_t> ranges, std::size_t window,
                      const T& id, wire::format fmt, bool dense, T* dense_out, bool in_place, std::size_t entries,
                      std::vector<std::uint64_t>& idx, value_vector<T>& val, report& rep, call_status& st,
                      exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    std::size_t seg = 1;
    if (dense) seg = segment_elements<T>(window);
    else
        for (std::size_t r = 0; r < n; ++r) seg = std::max(seg, ranges[r + 1] - ranges[r]);
    const std::size_t len = ranges[me + 1] - ranges[me];
    auto &sends = buffers.stream.sends, &recvs = buffers.stream.recvs; // the plan's: no allocation
    sends.assign(n, segments_of(len, seg));
    segments_per_range(recvs, ranges, seg);
    auto& raw = buffers.stream.raw;
    raw.assign(n, 0);
    if (dense) {
        if (entries == no_count) entries = mine.is_dense ? count_dense_entries<T>(mine.dense_view(), id) : mine.sparse.nnz();
        const std::uint64_t mine_raw = !st.failed() && goes_raw(entries, len, fmt) &&
                                       values_in_a_row<T>(mine, nullptr, 0, len) != nullptr;
        MPI_Allgather(&mine_raw, 1, MPI_UINT64_T, raw.data(), 1, MPI_UINT64_T, pc);
        if (in_place && !st.failed()) recvs[me] = 0;
    }
    const auto encode = [&](std::size_t, std::size_t j, wire_buffer& b, std::size_t& k) {
        return append_segments<T>(mine, nullptr, j * seg, len, seg, window, id, fmt, b, buffers.bitmap, k);
    };
    const auto piece = [&](std::size_t r, std::size_t j) { // segment j of range r: local first element, length
        return std::pair{j * seg, std::min(seg, ranges[r + 1] - ranges[r] - j * seg)};
    };
    const auto raw_out = [&](std::size_t, std::size_t j) {
        const auto [first, length] = piece(me, j);
        return raw[me] ? raw_bytes(values_in_a_row<T>(mine, nullptr, first, length), length) : std::span<const std::byte>{};
    };
    const auto raw_in = [&](std::size_t r, std::size_t j) {
        const auto [first, length] = piece(r, j);
        if (!raw[r]) return std::span<std::byte>{};
        if (dense_out) return raw_bytes(dense_out + ranges[r] + first, length);
        return receive_room<T>(buffers, length, st); // failed: taken and dropped
    };
    const auto take = [&](std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes) {
        const auto [first, length] = piece(r, j);
        if (raw[r]) { // received in place, or this member's own to copy
            const T* v = reinterpret_cast<const T*>(bytes.data());
            T* to = dense_out + ranges[r] + first;
            if (v != to) std::copy(v, v + length, to);
            return;
        }
        const std::size_t to = std::min(ranges[r + 1] - ranges[r], first + k * seg);
        if (decode_blocks(bytes, 0, ranges[r], first, to, window, id, dense_out, idx, val) != bytes.size())
            fail("malformed allgather segment: bytes after its blocks");
    };
    stream_segments(pc, sends, recvs, encode, take, raw_out, raw_in, rep, st, buffers);
}

} // namespace sparse_reduce::detail
