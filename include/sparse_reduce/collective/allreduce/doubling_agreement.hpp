#pragma once
// The end of a started recursive doubling (collective/allreduce_start.hpp):
// the ranks agree on the lowest failing rank and its message, as
// agree_and_throw does for a blocking call, but by point-to-point messages
// over the doubling's own steps and on the call's own tag, so that test()
// can step it without waiting. A started call cannot end in a collective:
// calls in flight together reach their ends in different orders on
// different ranks, and MPI matches the collectives on a communicator by the
// order they are called in.
//
// A step's message: the lowest failing rank this rank knows of (INT_MAX:
// none) and, where this rank has it, that rank's own message. Keeping the
// lower rank (and a text where ours has none) is associative and
// commutative, so after the steps every rank holds the lowest failing
// rank's message, which that rank put in.
//
//   u64 words   [0] rank or INT_MAX   [1] text bytes   [2 ...] the text

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include <mpi.h>

#include "../../mpi/first_failure.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "recursive_doubling.hpp"

namespace sparse_reduce::detail {

// A failure's text travels up to this many bytes: every message of the
// agreement fits the drain, so a rank that cannot grow its receive buffer
// still takes it.
inline constexpr std::size_t agreed_text_bytes = 4096;
static_assert(16 + agreed_text_bytes <= stream_message_bytes, "below doubling_drain_bytes, whatever the segment");

class doubling_agreement {
public:
    // send and receive: buffers the call no longer uses (its messages'),
    // drain: where a message goes when receive cannot grow.
    doubling_agreement(MPI_Comm pc, int tag, wire_buffer& send, wire_buffer& receive, std::span<std::byte> drain)
        : pc_(pc), tag_(tag), send_(send), receive_(receive), drain_(drain), steps_(doubling_steps_of(pc))
    {
    }
    doubling_agreement(const doubling_agreement&) = delete;
    doubling_agreement& operator=(const doubling_agreement&) = delete;

    // This rank's part: the lowest failing rank it knows of (failure_candidate)
    // and its own failure's text (empty where it has none; cut at
    // agreed_text_bytes).
    void begin(int candidate, std::string_view text) noexcept
    {
        try {
            write(static_cast<std::uint64_t>(candidate), text.data(), std::min(text.size(), agreed_text_bytes));
        } catch (...) { // no room for the text: the rank alone (throw_agreed names it)
            write_rank_only(static_cast<std::uint64_t>(candidate));
        }
    }

    // Moves it on (may_wait: to its end); true once every step is done.
    bool step(bool may_wait)
    {
        for (; next_ < steps_.count; ++next_) {
            const doubling_step& d = steps_.at[static_cast<std::size_t>(next_)];
            if (!posted_) {
                posted_ = true;
                if (d.send)
                    MPI_Isend(head_[1] ? send_.data() : head_, static_cast<int>(sizeof head_ + head_[1]), MPI_BYTE,
                              d.partner, tag_, pc_, &send_req_);
            }
            if (d.receive && !received_) {
                if (!incoming_.receive(d.partner, tag_, pc_, receive_, 0, drain_, &dropped_, may_wait)) return false;
                received_ = true;
            }
            int sent = 1;
            if (may_wait) MPI_Wait(&send_req_, MPI_STATUS_IGNORE);
            else MPI_Test(&send_req_, &sent, MPI_STATUS_IGNORE);
            if (!sent) return false;
            if (d.receive) take(dropped_ ? drain_.data() : reinterpret_cast<const std::byte*>(receive_.data()), incoming_.got);
            posted_ = received_ = dropped_ = false;
            incoming_ = {};
        }
        return true;
    }

    // After step: the first failing rank and its message, if any rank failed.
    std::optional<failed_rank> first() const
    {
        const auto rank = static_cast<int>(head_[0]);
        if (rank == INT_MAX) return std::nullopt;
        failed_rank f{rank, {}};
        if (head_[1]) try {
                f.text.assign(reinterpret_cast<const char*>(send_.data() + 2), static_cast<std::size_t>(head_[1]));
            } catch (...) { // no room for the text: the rank alone
            }
        return f;
    }

private:
    // The message: head_ alone, or with a text head_ and the text in send_.
    void write(std::uint64_t rank, const void* text, std::size_t bytes)
    {
        if (bytes) {
            const std::size_t words = 2 + (bytes + 7) / 8;
            if (send_.size() < words) send_.resize(words);
            std::memmove(send_.data() + 2, text, bytes);
            send_[0] = rank;
            send_[1] = bytes;
        }
        head_[0] = rank;
        head_[1] = bytes;
    }
    void write_rank_only(std::uint64_t rank) noexcept
    {
        head_[0] = rank;
        head_[1] = 0;
    }
    // The partner's message (n bytes at m): kept where it names a lower rank,
    // or the same rank with the text ours lacks.
    void take(const std::byte* m, std::size_t n) noexcept
    {
        std::uint64_t head[2] = {static_cast<std::uint64_t>(INT_MAX), 0};
        if (n >= sizeof head) std::memcpy(head, m, sizeof head);
        const std::size_t bytes = std::min<std::size_t>(head[1], n - std::min(n, sizeof head));
        if (head[0] < head_[0] || (head[0] == head_[0] && head_[1] == 0 && bytes > 0)) try {
                write(head[0], m + sizeof head, bytes);
            } catch (...) {
                write_rank_only(head[0]);
            }
    }

    MPI_Comm pc_;
    int tag_;
    wire_buffer& send_;
    wire_buffer& receive_;
    std::span<std::byte> drain_;
    doubling_steps steps_;
    std::uint64_t head_[2] = {INT_MAX, 0};
    int next_ = 0;
    bool posted_ = false, received_ = false, dropped_ = false;
    MPI_Request send_req_ = MPI_REQUEST_NULL;
    message_receiver incoming_;
};

} // namespace sparse_reduce::detail
