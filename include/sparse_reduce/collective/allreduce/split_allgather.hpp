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
// then takes segment j from every member in member order. So a member
// holds its input, its range's accumulator, the output and a few messages
// per peer, not every piece whole (issue 14 row 13: 5.06 x the input at
// P = 2 before, doc/benchmarks.md), and a dense accumulator gets the pieces
// in rank order, the serial fold's order, bit for bit.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../report.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/tags.hpp"
#include "../../wire/block.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "partial_ops.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// Elements per segment: whole windows, about stream_message_bytes dense.
template <class T>
std::size_t segment_elements(std::size_t window)
{
    return window * std::max<std::size_t>(1, stream_message_bytes / (window * sizeof(T)));
}

inline std::size_t segments_of(std::size_t len, std::size_t seg) { return (len + seg - 1) / seg; }

// One streamed exchange within group pc: sends[d] segments to member d,
// encode(d, j, buf) writing segment j for d as wire blocks (returns their
// bytes); recvs[r] segments from member r (this member's own encoded
// likewise), each given to take(r, j, its blocks). Step j sends before it
// receives, and a send slot is reused only once step j - 2 has arrived:
// every member reaches every step. A failed member (st) sends its status
// alone; what the others take stops at the first failure they hear of.
template <class Encode, class Take>
void stream_segments(MPI_Comm pc, std::span<const std::size_t> sends, std::span<const std::size_t> recvs,
                     const Encode& encode, const Take& take, report& rep, call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    auto& slots = buffers.pieces; // two send buffers per member
    slots.resize(2 * n);
    std::vector<std::vector<MPI_Request>> reqs(2 * n);
    const auto message = [&](std::size_t d, std::size_t j, wire_buffer& b) {
        std::size_t at = 0;
        if (!st.failed()) try {
                at = encode(d, j, b);
            } catch (...) {
                st.fail_here();
                at = 0;
            }
        if (b.size() < at / 8 + 1) b.resize(at / 8 + 1);
        b[at / 8] = static_cast<std::uint64_t>(st.word());
        return at + 8;
    };
    std::size_t steps = 0;
    for (std::size_t k = 0; k < n; ++k) steps = std::max({steps, sends[k], recvs[k]});
    for (std::size_t j = 0; j < steps; ++j) {
        for (std::size_t i = 1; i < n; ++i) {
            const std::size_t d = (me + i) % n, slot = 2 * d + j % 2;
            if (j >= sends[d]) continue;
            wait_all(reqs[slot]); // a kept buffer is not shrunk: growing it again would zero it
            const std::size_t bytes = message(d, j, slots[slot]);
            isend_message(slots[slot].data(), bytes, static_cast<int>(d), doubling_tag, pc, reqs[slot]);
            rep.bytes_sent += bytes;
            ++rep.messages_sent;
        }
        for (std::size_t r = 0; r < n; ++r) {
            if (j >= recvs[r]) continue;
            wire_buffer& b = r == me ? slots[2 * me] : buffers.receive;
            const std::size_t bytes = r == me ? message(me, j, b) : recv_message(static_cast<int>(r), doubling_tag, pc, b);
            if (r != me) rep.bytes_received += bytes;
            if (st.failed()) continue;
            try {
                if (bytes < 8 || bytes % 8) fail("malformed segment of " + std::to_string(bytes) + " bytes");
                if (const auto status = static_cast<std::int64_t>(b[bytes / 8 - 1])) st.hear(status);
                else take(r, j, bytes_of(b, bytes - 8));
            } catch (...) {
                st.fail_here();
            }
        }
    }
    for (auto& r : reqs) wait_all(r);
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

// Segment j of the windows of [0, len) as blocks from byte 0 of `bytes`:
// each given to f(view, lo); the bytes must end with the last.
template <class T, class F>
void for_blocks(std::span<const std::byte> bytes, std::size_t j, std::size_t seg, std::size_t len, std::size_t window,
                const F& f)
{
    std::size_t at = 0;
    for (std::size_t lo = j * seg; lo < std::min(len, (j + 1) * seg); lo += window) {
        const auto v = wire::parse_block<T>(bytes.subspan(at), std::min(window, len - lo));
        at += v.bytes;
        f(v, lo);
    }
    if (at != bytes.size()) fail("malformed segment: " + std::to_string(bytes.size() - at) + " bytes after its blocks");
}

// Updating within a group: member k gets every member's entries in its
// range [ranges[k], ranges[k + 1]) (windows of `window` from the range's
// start), streamed. One MPI_Alltoall of entry counts first: when they fill
// the range, each segment is folded on arrival into a dense accumulator,
// in member order; else the pieces are kept whole and folded in member
// order as partials ((p0 p1) p2) ... `mine` is this member's input as a
// partial, or `dense_in` its dense array.
template <class T, class Op>
partial<T> scatter_ranges(MPI_Comm pc, const partial<T>& mine, const T* dense_in, std::span<const std::size_t> ranges,
                          std::size_t window, const T& id, wire::format fmt, const Op& op, report& rep,
                          call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    const std::size_t seg = segment_elements<T>(window), len = ranges[me + 1] - ranges[me];
    std::vector<std::uint64_t> send(n), recv(n);
    std::vector<std::size_t> sends(n), recvs(n, segments_of(len, seg));
    for (std::size_t d = 0; d < n; ++d) {
        send[d] = st.failed() ? 0 : entries_in(mine, dense_in, ranges[d], ranges[d + 1], id);
        sends[d] = segments_of(ranges[d + 1] - ranges[d], seg);
    }
    MPI_Alltoall(send.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, pc);
    std::uint64_t entries = 0;
    for (const auto e : recv) entries += e;
    const auto encode = [&](std::size_t d, std::size_t j, wire_buffer& b) {
        std::size_t at = 0;
        const std::size_t end = std::min(ranges[d + 1], ranges[d] + (j + 1) * seg);
        for (std::size_t lo = ranges[d] + j * seg; lo < end; lo += window)
            at = append_block<T>(mine, dense_in, lo, std::min(window, end - lo), id, fmt, b, at);
        return at;
    };
    partial<T> acc;
    if (dense_is_smaller<T>(static_cast<std::size_t>(entries), len)) {
        acc.is_dense = true;
        acc.dense.assign(len, id);
        const auto take = [&](std::size_t, std::size_t j, std::span<const std::byte> bytes) {
            for_blocks<T>(bytes, j, seg, len, window, [&](const wire::block_view<T>& v, std::size_t lo) {
                fold_block_into_dense(v, acc.dense.data() + lo, id, op, false);
            });
        };
        stream_segments(pc, sends, recvs, encode, take, rep, st, buffers);
        return acc;
    }
    std::vector<wire_buffer> whole(n); // sparse pieces, gathered whole
    std::vector<std::size_t> filled(n, 0);
    const auto take = [&](std::size_t r, std::size_t, std::span<const std::byte> bytes) {
        whole[r].resize((filled[r] + bytes.size()) / 8);
        std::copy(bytes.begin(), bytes.end(), reinterpret_cast<std::byte*>(whole[r].data()) + filled[r]);
        filled[r] += bytes.size();
    };
    stream_segments(pc, sends, recvs, encode, take, rep, st, buffers);
    acc.sparse = index_value_vector<T, std::uint64_t>(len);
    if (st.failed()) return acc;
    try {
        for (std::size_t r = 0; r < n; ++r) {
            auto piece = decode_partial(parse_partial<T>(bytes_of(whole[r], filled[r]), len, window), len, window, id);
            acc = r == 0 ? std::move(piece) : combine_partials(acc, piece, op, len);
            whole[r] = {};
        }
    } catch (...) {
        st.fail_here();
    }
    return acc;
}

// Broadcasting within a group: every member's integrated range `mine` (local
// indices) to every member, streamed into dense_out (when given); else each
// range in one message (the ranks' outputs are of one kind), appended to
// idx / val in member order, which is index order.
template <class T>
void allgather_ranges(MPI_Comm pc, const partial<T>& mine, std::span<const std::size_t> ranges, std::size_t window,
                      const T& id, wire::format fmt, T* dense_out, std::vector<std::uint64_t>& idx,
                      std::vector<T>& val, report& rep, call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    std::size_t seg = 1;
    if (dense_out) seg = segment_elements<T>(window);
    else
        for (std::size_t r = 0; r < n; ++r) seg = std::max(seg, ranges[r + 1] - ranges[r]);
    const std::size_t len = ranges[me + 1] - ranges[me];
    std::vector<std::size_t> sends(n, segments_of(len, seg)), recvs(n);
    for (std::size_t r = 0; r < n; ++r) recvs[r] = segments_of(ranges[r + 1] - ranges[r], seg);
    const auto encode = [&](std::size_t, std::size_t j, wire_buffer& b) {
        std::size_t at = 0;
        const std::size_t end = std::min(len, (j + 1) * seg);
        for (std::size_t lo = j * seg; lo < end; lo += window)
            at = append_block<T>(mine, nullptr, lo, std::min(window, end - lo), id, fmt, b, at);
        return at;
    };
    const auto take = [&](std::size_t r, std::size_t j, std::span<const std::byte> bytes) {
        const std::size_t to = std::min(ranges[r + 1] - ranges[r], (j + 1) * seg);
        if (decode_blocks(bytes, 0, ranges[r], j * seg, to, window, id, dense_out, idx, val) != bytes.size())
            fail("malformed allgather segment: bytes after its blocks");
    };
    stream_segments(pc, sends, recvs, encode, take, rep, st, buffers);
}

} // namespace sparse_reduce::detail
