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

// Segments of seg elements in each of the ranges (one per member).
inline void segments_per_range(std::vector<std::size_t>& v, std::span<const std::size_t> ranges, std::size_t seg)
{
    v.clear();
    for (std::size_t r = 0; r + 1 < ranges.size(); ++r) v.push_back(segments_of(ranges[r + 1] - ranges[r], seg));
}

// One streamed exchange within group pc, as steps: step(true) runs it to
// its end, step(false) as far as it goes without waiting (MPI_Test,
// MPI_Improbe, MPI_Imrecv), true once it is done. sends[d] segments go to
// member d, recvs[r] come from member r (this member's own encoded
// likewise), on `tag`. The host H says what they hold:
//
//   encode(d, j, buf, k)  segment j for d as wire blocks (returns their
//                         bytes; k, 1 unless it sets it, the segments from
//                         j they stand for)
//   take(r, j, k, bytes)  a message's blocks, from r
//   raw_out(d, j)         segment j for d as raw bytes (empty: encode it);
//                         MPI sends them from where they lie, the caller's
//                         array, with no copy into a message
//   raw_in(r, j)          where r's raw segment j goes (empty: not raw),
//                         the receiver knowing its size; take then gets
//                         those bytes
//
// Step j sends before it receives, and a send slot to a member is reused
// only once the message before the last to it has arrived: a member visits
// the steps at which it sends or takes something, in order, and every
// member visits every step at which another sends to it. A failed member
// (st) sends its status alone, once for all its segments left; what the
// others take stops at the first failure they hear of. Both sides of a raw
// pair decide alike from counts they exchanged before (a raw pair's sender
// sends its values even once it failed: the failure is settled at the
// end). This member's own segment is taken from raw_out(me, j) when it
// gives one. Not movable: the host refers to it no more than it to the host.
template <class H>
class segment_stream {
public:
    segment_stream(MPI_Comm pc, std::span<const std::size_t> sends, std::span<const std::size_t> recvs, H& host,
                   report& rep, call_status& st, exchange_buffers& buffers, int tag)
        : pc_(pc), me_(rank_of(pc)), n_(sends.size()), host_(host), rep_(rep), st_(st), buffers_(buffers), tag_(tag),
          steps_(sends, recvs, me_, buffers.stream)
    {
    }
    segment_stream(const segment_stream&) = delete;
    segment_stream& operator=(const segment_stream&) = delete;

    bool step(bool may_wait)
    {
        auto& reqs = buffers_.stream.requests; // and their requests (make_stream_room)
        for (;;) {
            if (stage_ == stage::next) {
                j_ = steps_.next();
                stage_ = j_ == steps_.none ? stage::last : stage::send;
                at_ = 1;
            }
            if (stage_ == stage::send) {
                for (; at_ < n_; ++at_)
                    if (!send_to((me_ + at_) % n_, may_wait)) return false;
                stage_ = stage::take;
                at_ = 0;
            }
            if (stage_ == stage::take) {
                for (; at_ < n_; ++at_)
                    if (!take_from(at_, may_wait)) return false;
                stage_ = stage::next;
                continue;
            }
            if (stage_ == stage::last) {
                for (auto& r : reqs)
                    if (!requests_done(r, may_wait)) return false;
                return true;
            }
        }
    }

private:
    enum class stage { next, send, take, last };
    enum class receiving { none, raw, message };

    static std::size_t rank_of(MPI_Comm pc)
    {
        int me = 0;
        MPI_Comm_rank(pc, &me);
        return static_cast<std::size_t>(me);
    }

    // Segment j for a member as a message in b (segment_message).
    std::size_t message(std::size_t d, std::size_t j, wire_buffer& b, std::size_t& k)
    {
        const auto encode = [&](std::size_t d2, std::size_t j2, wire_buffer& b2, std::size_t& k2) {
            return host_.encode(d2, j2, b2, k2);
        };
        return segment_message(encode, d, j, (d == me_ ? steps_.recvs[d] : steps_.sends[d]) - j, b, k, st_);
    }

    void taken(std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes)
    {
        if (!st_.failed()) try {
                host_.take(r, j, k, bytes);
            } catch (...) {
                st_.fail_here();
            }
    }

    // Step j's message to d, if it owes one; false: its slot is still busy.
    bool send_to(std::size_t d, bool may_wait)
    {
        if (steps_.to_send[d] != j_ || j_ >= steps_.sends[d]) return true;
        const std::size_t slot = 2 * d + steps_.sent[d] % 2;
        auto& reqs = buffers_.stream.requests[slot];
        if (!requests_done(reqs, may_wait)) return false; // a kept buffer is not shrunk: growing it again would zero it
        ++steps_.sent[d];
        const std::span<const std::byte> raw = host_.raw_out(d, j_);
        std::size_t k = 1;
        wire_buffer& b = buffers_.pieces[slot];
        const std::size_t bytes = raw.empty() ? message(d, j_, b, k) : raw.size();
        isend_bytes(raw.empty() ? static_cast<const void*>(b.data()) : raw.data(), bytes, static_cast<int>(d), tag_,
                    pc_, reqs);
        steps_.to_send[d] = j_ + k;
        rep_.bytes_sent += bytes;
        ++rep_.messages_sent;
        return true;
    }

    // Step j's message from r, if it sends one; false: not in yet.
    bool take_from(std::size_t r, bool may_wait)
    {
        if (receiving_ == receiving::none) {
            if (steps_.to_take[r] != j_ || j_ >= steps_.recvs[r]) return true;
            steps_.to_take[r] = j_ + 1;
            if (r == me_) {
                if (const std::span<const std::byte> raw = host_.raw_out(me_, j_); !raw.empty()) {
                    taken(me_, j_, 1, raw);
                    return true;
                }
                wire_buffer& b = buffers_.pieces[2 * me_];
                std::size_t k = 1;
                const std::size_t bytes = message(me_, j_, b, k);
                settle(r, b, bytes, k, b[bytes / 8 - 1]);
                return true;
            }
            if (const std::span<std::byte> into = host_.raw_in(r, j_); !into.empty()) {
                raw_into_ = into;
                irecv_bytes(into.data(), into.size(), static_cast<int>(r), tag_, pc_, buffers_.stream.raw_requests);
                receiving_ = receiving::raw;
            } else {
                receiver_ = {};
                dropped_ = false;
                receiving_ = receiving::message;
            }
        }
        if (receiving_ == receiving::raw) {
            if (!requests_done(buffers_.stream.raw_requests, may_wait)) return false;
            receiving_ = receiving::none;
            rep_.bytes_received += raw_into_.size();
            taken(r, j_, 1, raw_into_);
            return true;
        }
        wire_buffer& b = buffers_.receive;
        if (!receiver_.receive(static_cast<int>(r), tag_, pc_, b, 0, buffers_.drain, &dropped_, may_wait)) return false;
        receiving_ = receiving::none;
        const std::size_t bytes = receiver_.got;
        if (dropped_) st_.fail_no_room(bytes, static_cast<int>(r));
        rep_.bytes_received += bytes;
        std::size_t k = 1;
        std::uint64_t trailer = 0;
        if (bytes >= 8 && bytes % 8 == 0) {
            std::memcpy(&trailer, (dropped_ ? buffers_.drain.data() : bytes_of(b, bytes).data()) + bytes - 8, 8);
            k = 1 + static_cast<std::size_t>(trailer >> 32);
        }
        // past the segments owed: cannot come from a rank of this plan, stop taking from it
        if (k > steps_.recvs[r] - j_) {
            settle(r, b, 0, steps_.recvs[r] - j_, trailer);
            return true;
        }
        settle(r, b, bytes, k, trailer);
        return true;
    }

    // A message of `bytes` in b, standing for k segments from step j: its
    // blocks taken, or its sender's failure heard.
    void settle(std::size_t r, const wire_buffer& b, std::size_t bytes, std::size_t k, std::uint64_t trailer)
    {
        steps_.to_take[r] = j_ + k;
        if (st_.failed()) return;
        try {
            if (bytes < 8 || bytes % 8) fail("malformed segment of ", bytes, " bytes");
            if (const auto status = static_cast<std::int64_t>(trailer & 0xffffffffu)) st_.hear(status);
            else host_.take(r, j_, k, bytes_of(b, bytes - 8));
        } catch (...) {
            st_.fail_here();
        }
    }

    MPI_Comm pc_;
    std::size_t me_, n_;
    H& host_;
    report& rep_;
    call_status& st_;
    exchange_buffers& buffers_;
    int tag_;
    segment_steps steps_;
    stage stage_ = stage::next;
    std::size_t j_ = 0, at_ = 0;
    receiving receiving_ = receiving::none;
    std::span<std::byte> raw_into_;
    message_receiver receiver_;
    bool dropped_ = false;
};

} // namespace sparse_reduce::detail
