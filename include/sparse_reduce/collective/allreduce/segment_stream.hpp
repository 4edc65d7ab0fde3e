#pragma once
// split-allgather's streamed exchange (detail; collective/allreduce/
// split_allgather.hpp): every member sends each other member its segments
// of a range, as wire blocks or raw, and takes theirs in member order, a
// few messages in flight per peer. A message's segments of a sparse
// partial that hold no entry ride along as empty runs, so a sparse range
// costs its entries, not its segments.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../mpi/bytes.hpp"
#include "../../mpi/tags.hpp"
#include "../../report.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// Elements per segment: whole windows, about stream_message_bytes dense.
template <class T>
std::size_t segment_elements(std::size_t window)
{
    return window * std::max<std::size_t>(1, stream_message_bytes / (window * sizeof(T)));
}

inline std::size_t segments_of(std::size_t len, std::size_t seg) { return (len + seg - 1) / seg; }

// A message's last word: its sender's status (0 ok; else 1 + a failed rank)
// in the low half, and in the high half how many segments after its first
// it stands for (their windows empty runs: a sparse partial's message costs
// its entries, not the segments of the range).
inline constexpr std::size_t max_message_segments = std::size_t{1} << 31;
inline std::uint64_t segment_trailer(std::int64_t status, std::size_t segments)
{
    return static_cast<std::uint64_t>(status) | static_cast<std::uint64_t>(segments - 1) << 32;
}

// Whole segments of seg elements from `from` (below `to`, segments
// [from, to) the last maybe short) in which a sparse partial stores no
// entry (0 for a dense one), at most `most`.
template <class T>
std::size_t empty_segments(const partial<T>& p, const T* dense, std::size_t from, std::size_t to, std::size_t seg,
                           std::size_t most)
{
    if (dense || p.is_dense || from >= to) return 0;
    const std::size_t next = std::min(to, next_entry(p, from));
    return std::min(most, next == to ? segments_of(to - from, seg) : (next - from) / seg);
}

// Segment [first, first + seg) of a range ending at `end` as wire blocks
// from byte 0 of b, and the segments after it in which p stores no entry
// (k: the segments written): a sparse partial's messages cost its entries,
// not the segments of its range.
template <class T>
std::size_t append_segments(const partial<T>& p, const T* dense, std::size_t first, std::size_t end, std::size_t seg,
                            std::size_t window, const T& id, wire::format f, wire_buffer& b, bool bitmap,
                            std::size_t& k)
{
    k = 1 + empty_segments(p, dense, std::min(end, first + seg), end, seg, max_message_segments - 1);
    return append_blocks<T>(p, dense, first, std::min(k * seg, end - first), window, id, f, b, 0, bitmap);
}

// Where a streamed exchange stands with each member: the next segment to
// send it (none to itself) and to take from it, and the messages sent it
// (in the plan's scratch: no allocation).
struct segment_steps {
    static constexpr std::size_t none = ~std::size_t{0};
    std::span<const std::size_t> sends, recvs;
    std::vector<std::size_t>&to_send, &to_take, &sent;
    segment_steps(std::span<const std::size_t> s, std::span<const std::size_t> r, std::size_t me, stream_scratch& sc)
        : sends(s), recvs(r), to_send(sc.to_send), to_take(sc.to_take), sent(sc.sent)
    {
        for (auto* v : {&to_send, &to_take, &sent}) v->assign(s.size(), 0);
        to_send[me] = sends[me];
    }
    // The next step at which this member sends or takes something (none: done).
    std::size_t next() const
    {
        std::size_t j = none;
        for (std::size_t k = 0; k < sends.size(); ++k) {
            if (to_send[k] < sends[k]) j = std::min(j, to_send[k]);
            if (to_take[k] < recvs[k]) j = std::min(j, to_take[k]);
        }
        return j;
    }
};

// Segment j for a member as a message in b: encode's blocks (k: the
// segments they stand for), or a failed member's status alone for all its
// `left` segments; then the trailer. Returns its bytes.
template <class Encode>
std::size_t segment_message(const Encode& encode, std::size_t d, std::size_t j, std::size_t left, wire_buffer& b,
                            std::size_t& k, call_status& st)
{
    std::size_t at = 0;
    k = 1;
    if (!st.failed()) try {
            at = encode(d, j, b, k);
            if (b.size() < at / 8 + 1) b.resize(at / 8 + 1);
        } catch (...) {
            st.fail_here();
        }
    if (st.failed()) at = 0, k = std::min(max_message_segments, left);
    b[at / 8] = segment_trailer(st.word(), k); // b holds a word at least (make_stream_room)
    return at + 8;
}

// Member `from`'s next message into b, or into the plan's drain where b
// cannot grow (this member then fails, st); its bytes, and from its
// trailer the segments it stands for (k) and its sender's status.
inline std::size_t receive_segment(int from, MPI_Comm pc, wire_buffer& b, exchange_buffers& buffers, call_status& st,
                                   std::size_t& k, std::uint64_t& trailer)
{
    bool dropped = false;
    const std::size_t bytes = recv_message(from, doubling_tag, pc, b, 0, buffers.drain, &dropped);
    if (dropped) st.fail_no_room(bytes, from);
    if (bytes >= 8 && bytes % 8 == 0) {
        std::memcpy(&trailer, (dropped ? buffers.drain.data() : bytes_of(b, bytes).data()) + bytes - 8, 8);
        k = 1 + static_cast<std::size_t>(trailer >> 32);
    }
    return bytes;
}

// Segments of seg elements in each of the ranges (one per member).
inline void segments_per_range(std::vector<std::size_t>& v, std::span<const std::size_t> ranges, std::size_t seg)
{
    v.clear();
    for (std::size_t r = 0; r + 1 < ranges.size(); ++r) v.push_back(segments_of(ranges[r + 1] - ranges[r], seg));
}

// One streamed exchange within group pc: sends[d] segments to member d,
// encode(d, j, buf, k) writing segment j for d as wire blocks (returns their
// bytes; k, 1 unless it sets it, the segments from j they stand for);
// recvs[r] segments from member r (this member's own encoded likewise),
// each message given to take(r, j, k, its blocks). Step j sends before it
// receives, and a send slot to a member is reused only once the message
// before the last to it has arrived: a member visits the steps at which it
// sends or takes something, in order, and every member visits every step
// at which another sends to it. A failed member (st) sends its status
// alone, once for all its segments left; what the others take stops at
// the first failure they hear of.
//
// A pair of members may exchange raw segments instead: the range's values
// as they are, with no block headers and no status word. raw_out(d, j) is
// segment j for d as such bytes (empty: encode it); MPI sends them from
// where they lie, the caller's array, with no copy into a message.
// raw_in(r, j) is where r's raw segment j goes (empty: not raw), the
// receiver knowing its size; take then gets those bytes. Both sides of a
// pair decide alike from counts they exchanged before (a raw pair's sender
// sends its values even once it failed: the failure is settled at the end).
// This member's own segment is taken from raw_out(me, j) when it gives one.
template <class Encode, class Take, class RawOut, class RawIn>
void stream_segments(MPI_Comm pc, std::span<const std::size_t> sends, std::span<const std::size_t> recvs,
                     const Encode& encode, const Take& take, const RawOut& raw_out, const RawIn& raw_in, report& rep,
                     call_status& st, exchange_buffers& buffers)
{
    int member = 0, G = 1;
    MPI_Comm_rank(pc, &member);
    MPI_Comm_size(pc, &G);
    const auto me = static_cast<std::size_t>(member), n = static_cast<std::size_t>(G);
    auto& slots = buffers.pieces;           // two send buffers per member
    auto& reqs = buffers.stream.requests;   // and their requests (make_stream_room)
    segment_steps s(sends, recvs, me, buffers.stream);
    auto &to_send = s.to_send, &to_take = s.to_take;
    const auto message = [&](std::size_t d, std::size_t j, wire_buffer& b, std::size_t& k) {
        return segment_message(encode, d, j, (d == me ? recvs[d] : sends[d]) - j, b, k, st);
    };
    const auto taken = [&](std::size_t r, std::size_t j, std::span<const std::byte> bytes) {
        if (!st.failed()) try {
                take(r, j, 1, bytes);
            } catch (...) {
                st.fail_here();
            }
    };
    for (std::size_t j = s.next(); j != s.none; j = s.next()) {
        for (std::size_t i = 1; i < n; ++i) {
            const std::size_t d = (me + i) % n, slot = 2 * d + s.sent[d] % 2;
            if (to_send[d] != j || j >= sends[d]) continue;
            ++s.sent[d];
            wait_all(reqs[slot]); // a kept buffer is not shrunk: growing it again would zero it
            const std::span<const std::byte> raw = raw_out(d, j);
            std::size_t k = 1;
            const std::size_t bytes = raw.empty() ? message(d, j, slots[slot], k) : raw.size();
            isend_bytes(raw.empty() ? static_cast<const void*>(slots[slot].data()) : raw.data(), bytes,
                        static_cast<int>(d), doubling_tag, pc, reqs[slot]);
            to_send[d] = j + k;
            rep.bytes_sent += bytes;
            ++rep.messages_sent;
        }
        for (std::size_t r = 0; r < n; ++r) {
            if (to_take[r] != j || j >= recvs[r]) continue;
            to_take[r] = j + 1;
            if (r == me) {
                if (const std::span<const std::byte> raw = raw_out(me, j); !raw.empty()) {
                    taken(me, j, raw);
                    continue;
                }
            } else if (const std::span<std::byte> into = raw_in(r, j); !into.empty()) {
                recv_bytes(into.data(), into.size(), static_cast<int>(r), doubling_tag, pc);
                rep.bytes_received += into.size();
                taken(r, j, into);
                continue;
            }
            wire_buffer& b = r == me ? slots[2 * me] : buffers.receive;
            std::size_t bytes = 0, k = 1;
            std::uint64_t trailer = 0;
            if (r == me) {
                bytes = message(me, j, b, k);
                trailer = b[bytes / 8 - 1];
            } else {
                bytes = receive_segment(static_cast<int>(r), pc, b, buffers, st, k, trailer);
                rep.bytes_received += bytes;
                // past the segments owed: cannot come from a rank of this plan, stop taking from it
                if (k > recvs[r] - j) bytes = 0, k = recvs[r] - j;
            }
            to_take[r] = j + k;
            if (st.failed()) continue;
            try {
                if (bytes < 8 || bytes % 8) fail("malformed segment of " + std::to_string(bytes) + " bytes");
                if (const auto status = static_cast<std::int64_t>(trailer & 0xffffffffu)) st.hear(status);
                else take(r, j, k, bytes_of(b, bytes - 8));
            } catch (...) {
                st.fail_here();
            }
        }
    }
    for (auto& r : reqs) wait_all(r);
}

} // namespace sparse_reduce::detail
