#pragma once
// split-allgather's two halves (detail; collective/allreduce.hpp): a
// reduce_scatter by block ranges (wire blocks, one message per peer), then
// an allgather of the reduced ranges. policy::split_allgather is one group
// of all ranks of grouped.hpp, which runs them within each group.

#include <algorithm>
#include <climits>
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

// The updating's pieces for this member's range of `len` (piece k at word
// displ[k] of `in`, counts[k] words, each behind its sender's status), folded
// in member order: in place into a dense array when their entries fill it,
// else pairwise as partials (((p0 p1) (p2 p3)) ...).
template <class T, class Op>
partial<T> fold_pieces(const wire_buffer& in, std::span<const std::size_t> displ, std::span<const std::uint64_t> counts,
                       std::size_t len, std::size_t window, const T& id, const Op& op, call_status& st)
{
    partial<T> acc;
    acc.sparse = index_value_vector<T, std::uint64_t>(len);
    try {
        // statuses first; each piece parsed once, its entries say dense or sparse
        const std::size_t n = counts.size();
        std::vector<parsed_partial<T>> pieces(n);
        std::size_t entries = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const auto bytes = bytes_of(in, displ[k], counts[k]);
            if (bytes.size() < 8) fail("malformed piece of a reduce_scatter");
            if (const auto status = static_cast<std::int64_t>(in[displ[k]])) st.hear(status);
            else entries += (pieces[k] = parse_partial<T>(bytes.subspan(8), len, window)).entries;
        }
        if (st.failed()) return acc;
        if (dense_is_smaller<T>(entries, len)) {
            acc.is_dense = true;
            acc.sparse = {};
            acc.dense.assign(len, id);
            for (const auto& b : pieces) fold_into_dense(b, acc.dense, window, id, op, false);
            return acc;
        }
        std::vector<partial<T>> parts;
        for (const auto& b : pieces) parts.push_back(decode_partial(b, len, window, id));
        while (parts.size() > 1) {
            std::vector<partial<T>> next;
            for (std::size_t k = 0; k + 1 < parts.size(); k += 2) next.push_back(combine_partials(parts[k], parts[k + 1], op, len));
            if (parts.size() % 2) next.push_back(std::move(parts.back()));
            parts.swap(next);
        }
        if (!parts.empty()) acc = std::move(parts[0]);
    } catch (...) {
        st.fail_here();
    }
    return acc;
}

// Updating within a group: member k gets every member's entries in its
// range [ranges[k], ranges[k + 1]) as wire blocks (windows of `window`
// from the range's start, each in its smallest form) behind the sender's
// status word; one MPI_Alltoall of sizes, then point-to-point. The pieces
// are folded in member order: in place into a dense array when their
// entries fill it, else pairwise as partials (((p0 p1) (p2 p3)) ...).
// `mine` is this member's input as a partial, or `dense_in` its dense array.
template <class T, class Op>
partial<T> scatter_ranges(MPI_Comm pc, const partial<T>& mine, const T* dense_in, std::span<const std::size_t> ranges,
                          std::size_t window, const T& id, wire::format fmt, const Op& op, report& rep,
                          call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    auto& out = buffers.pieces;
    out.resize(n);
    std::vector<std::uint64_t> send(n), recv(n);
    for (std::size_t d = 0; d < n; ++d) {
        wire_buffer& b = out[d];
        if (b.empty()) b.resize(1);
        b[0] = static_cast<std::uint64_t>(st.word());
        std::size_t at = 8;
        if (!st.failed())
            for (std::size_t lo = ranges[d]; lo < ranges[d + 1]; lo += window)
                at = append_block<T>(mine, dense_in, lo, std::min(window, ranges[d + 1] - lo), id, fmt, b, at);
        send[d] = at / 8;
    }
    MPI_Alltoall(send.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, pc);
    std::vector<std::size_t> displ(n + 1, 0);
    for (std::size_t k = 0; k < n; ++k) displ[k + 1] = displ[k] + static_cast<std::size_t>(recv[k]);
    wire_buffer& in = buffers.receive;
    if (in.size() < displ[n]) in.resize(displ[n]);
    std::vector<MPI_Request> reqs;
    for (std::size_t k = 0; k < n; ++k)
        if (k != me) irecv_bytes(in.data() + displ[k], recv[k] * 8, static_cast<int>(k), doubling_tag, pc, reqs);
    for (std::size_t i = 1; i < n; ++i) {
        const std::size_t d = (me + i) % n;
        isend_bytes(out[d].data(), send[d] * 8, static_cast<int>(d), doubling_tag, pc, reqs);
        rep.bytes_sent += send[d] * 8;
        ++rep.messages_sent;
        rep.bytes_received += recv[d] * 8;
    }
    std::copy(out[me].begin(), out[me].begin() + static_cast<std::ptrdiff_t>(send[me]),
              in.begin() + static_cast<std::ptrdiff_t>(displ[me]));
    wait_all(reqs);

    return fold_pieces<T>(in, displ, recv, ranges[me + 1] - ranges[me], window, id, op, st);
}

// Broadcasting within a group: every member's integrated range `mine` (local
// indices) to every member, as wire blocks behind the member's status word
// (one MPI_Allgather of sizes, one MPI_Allgatherv of 8-byte words), written
// into dense_out (when given) else appended to idx / val in index order.
// Bytes and messages in rep as if sent directly to each member.
template <class T>
void allgather_ranges(MPI_Comm pc, const partial<T>& mine, std::span<const std::size_t> ranges, std::size_t window,
                      const T& id, wire::format fmt, T* dense_out, std::vector<std::uint64_t>& idx,
                      std::vector<T>& val, report& rep, call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto m = static_cast<std::size_t>(member);
    wire_buffer& buf = buffers.send;
    const std::size_t n = encode_partial(st.failed() ? nullptr : &mine, ranges[m + 1] - ranges[m], window, id, fmt,
                                         st.word(), buf);
    const std::uint64_t words = n / 8;
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(G));
    MPI_Allgather(&words, 1, MPI_UINT64_T, counts.data(), 1, MPI_UINT64_T, pc);
    std::vector<int> cnt(counts.size()), displ(counts.size());
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        cnt[k] = static_cast<int>(counts[k]);
        displ[k] = static_cast<int>(total);
        total += counts[k];
    }
    if (total > static_cast<std::uint64_t>(INT_MAX)) // the same on every member
        fail("grouped: a group's result exceeds 2^31 words on the wire; use more or larger groups");
    wire_buffer& all = buffers.receive; // the updating's pieces are folded by now
    if (all.size() < total) all.resize(static_cast<std::size_t>(total));
    MPI_Allgatherv(buf.data(), static_cast<int>(words), MPI_UINT64_T, all.data(), cnt.data(), displ.data(), MPI_UINT64_T,
                   pc);
    rep.bytes_sent += n * static_cast<std::size_t>(G - 1);
    rep.messages_sent += static_cast<std::size_t>(G - 1);
    rep.bytes_received += static_cast<std::size_t>(total) * 8 - n;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        const auto bytes = bytes_of(all, static_cast<std::size_t>(displ[k]), counts[k]);
        try {
            if (bytes.size() < 8) fail("malformed allgather piece");
            const auto status = static_cast<std::int64_t>(all[static_cast<std::size_t>(displ[k])]);
            if (status != 0) {
                st.hear(status);
                continue;
            }
            if (st.failed()) continue;
            if (decode_blocks(bytes, 8, ranges[k], 0, ranges[k + 1] - ranges[k], window, id, dense_out, idx, val) !=
                bytes.size())
                fail("malformed allgather piece: bytes after its blocks");
        } catch (...) {
            st.fail_here();
        }
    }
}

} // namespace sparse_reduce::detail
