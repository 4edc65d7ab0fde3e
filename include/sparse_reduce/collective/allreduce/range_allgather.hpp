#pragma once
// split-allgather's second half (detail; grouped.hpp): broadcasting within
// a group, every member's reduced range to every member.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../report.hpp"
#include "partial_codec.hpp"
#include "segment_stream.hpp"
#include "split_allgather.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// Broadcasting within a group: every member's integrated range `mine`
// (local indices) to every member, as steps (step(true) to its end,
// step(false) as far as it goes without waiting), streamed into dense_out
// when the output is `dense` (the ranks' outputs are of one kind; a failed
// rank may have none); else each range in one message, appended to idx /
// val in member order, which is index order. Into a dense output, an
// exchange of one word per member first (post_words) says whose range goes
// raw (goes_raw, and its values in a row): those are received where they
// belong; `in_place`: this member's range is there already (range_scatter
// built it in place); `entries`: mine's, if known. Not movable: its stream
// refers to it.
template <class T>
class range_allgather {
public:
    range_allgather(MPI_Comm pc, const partial<T>& mine, std::span<const std::size_t> ranges, std::size_t window,
                    const T& id, wire::format fmt, bool dense, T* dense_out, bool in_place, std::size_t entries,
                    std::vector<std::uint64_t>& idx, value_vector<T>& val, report& rep, call_status& st,
                    exchange_buffers& buffers, int tag)
        : pc_(pc), mine_(mine), ranges_(ranges), window_(window), id_(id), fmt_(fmt), dense_out_(dense_out), idx_(idx),
          val_(val), rep_(rep), st_(st), buffers_(buffers), tag_(tag)
    {
        int member = 0;
        MPI_Comm_rank(pc, &member);
        me_ = static_cast<std::size_t>(member);
        const std::size_t n = ranges.size() - 1;
        if (dense) seg_ = segment_elements<T>(window);
        else
            for (std::size_t r = 0; r < n; ++r) seg_ = std::max(seg_, ranges[r + 1] - ranges[r]);
        const std::size_t len = ranges[me_ + 1] - ranges[me_];
        auto &sends = buffers.stream.sends, &recvs = buffers.stream.recvs; // the plan's: no allocation
        sends.assign(n, segments_of(len, seg_));
        segments_per_range(recvs, ranges, seg_);
        auto& raw = buffers.stream.raw;
        raw.assign(n, 0);
        if (dense) {
            if (entries == no_count)
                entries = mine.is_dense ? count_dense_entries<T>(mine.dense_view(), id) : mine.sparse.nnz();
            const std::uint64_t mine_raw =
                !st.failed() && goes_raw(entries, len, fmt) && values_in_a_row<T>(mine, nullptr, 0, len) != nullptr;
            buffers.stream.count_send.assign(n, mine_raw);
            post_words(pc, buffers.stream.count_send, raw, tag, buffers.stream.count_requests);
            if (in_place && !st.failed()) recvs[me_] = 0;
        }
    }
    range_allgather(const range_allgather&) = delete;
    range_allgather& operator=(const range_allgather&) = delete;

    bool step(bool may_wait)
    {
        if (!stream_) {
            if (!requests_done(buffers_.stream.count_requests, may_wait)) return false;
            stream_.emplace(pc_, buffers_.stream.sends, buffers_.stream.recvs, *this, rep_, st_, buffers_, tag_);
        }
        return stream_->step(may_wait);
    }

    // segment_stream's host:
    std::size_t encode(std::size_t, std::size_t j, wire_buffer& b, std::size_t& k)
    {
        const std::size_t len = ranges_[me_ + 1] - ranges_[me_];
        return append_segments<T>(mine_, nullptr, j * seg_, len, seg_, window_, id_, fmt_, b, buffers_.bitmap, k);
    }
    std::span<const std::byte> raw_out(std::size_t, std::size_t j)
    {
        const auto [first, length] = piece(me_, j);
        return raw()[me_] ? raw_bytes(values_in_a_row<T>(mine_, nullptr, first, length), length)
                          : std::span<const std::byte>{};
    }
    std::span<std::byte> raw_in(std::size_t r, std::size_t j)
    {
        const auto [first, length] = piece(r, j);
        if (!raw()[r]) return {};
        if (dense_out_) return raw_bytes(dense_out_ + ranges_[r] + first, length);
        return receive_room<T>(buffers_, length, st_); // failed: taken and dropped
    }
    void take(std::size_t r, std::size_t j, std::size_t k, std::span<const std::byte> bytes)
    {
        const auto [first, length] = piece(r, j);
        if (raw()[r]) { // received in place, or this member's own to copy
            const T* v = reinterpret_cast<const T*>(bytes.data());
            T* to = dense_out_ + ranges_[r] + first;
            if (v != to) std::copy(v, v + length, to);
            return;
        }
        const std::size_t to = std::min(ranges_[r + 1] - ranges_[r], first + k * seg_);
        if (decode_blocks(bytes, 0, ranges_[r], first, to, window_, id_, dense_out_, idx_, val_) != bytes.size())
            fail("malformed allgather segment: bytes after its blocks");
    }

private:
    std::span<const std::uint64_t> raw() const { return buffers_.stream.raw; }
    // segment j of range r: local first element, length
    std::pair<std::size_t, std::size_t> piece(std::size_t r, std::size_t j) const
    {
        return {j * seg_, std::min(seg_, ranges_[r + 1] - ranges_[r] - j * seg_)};
    }

    MPI_Comm pc_;
    const partial<T>& mine_;
    std::span<const std::size_t> ranges_;
    std::size_t window_;
    T id_;
    wire::format fmt_;
    T* dense_out_;
    std::vector<std::uint64_t>& idx_;
    value_vector<T>& val_;
    report& rep_;
    call_status& st_;
    exchange_buffers& buffers_;
    int tag_;
    std::size_t me_ = 0, seg_ = 1;
    std::optional<segment_stream<range_allgather>> stream_;
};

} // namespace sparse_reduce::detail
