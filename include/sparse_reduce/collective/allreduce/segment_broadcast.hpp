#pragma once
// reduce_broadcast's broadcast (detail; collective/allreduce/reduce_broadcast.hpp):
// the result's segments down one or two trees from rank 0, each message
// forwarded on arrival. A machine that a blocking call runs to its end and
// a started one (collective/allreduce_start.hpp) steps without waiting.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/tags.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../report.hpp"
#include "../../wire/block.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// A rank's place in a broadcast from 0: its parent and children.
struct broadcast_stream {
    int parent = -1;
    std::vector<int> children;
};

// Where a window's entries went: [begin, end) of the decoded entries.
struct window_span {
    std::size_t window, begin, end;
};

// Entries decoded stream by stream, each decoded window's at its span, put
// back in window (so index) order.
template <class T>
void window_order(std::vector<std::uint64_t>& idx, value_vector<T>& val, std::vector<window_span>& spans)
{
    std::sort(spans.begin(), spans.end(), [](const window_span& a, const window_span& b) { return a.window < b.window; });
    std::vector<std::uint64_t> i2;
    value_vector<T> v2;
    i2.reserve(idx.size());
    v2.reserve(val.size());
    for (const auto& [w, b, e] : spans) {
        i2.insert(i2.end(), idx.begin() + static_cast<std::ptrdiff_t>(b), idx.begin() + static_cast<std::ptrdiff_t>(e));
        v2.insert(v2.end(), val.begin() + static_cast<std::ptrdiff_t>(b), val.begin() + static_cast<std::ptrdiff_t>(e));
    }
    idx.swap(i2);
    val.swap(v2);
}


// The largest broadcast message for segments of seg bytes: the segment, one
// window more in its largest form (index/value of 4-byte values: twice the
// dense bytes), block headers. A rank that cannot store a message takes it
// into a drain of this size.
inline std::size_t broadcast_drain_bytes(std::size_t seg)
{
    return 4 * (seg ? seg : default_segment_bytes) + 4096;
}

// The result's segments down the streams, each message forwarded on
// arrival. A message: a word with the number of windows it covers, then a
// block per window or an empty run over several (stream s has windows s,
// s + S, ...), cut once it reaches the
// segment size (a sparse result travels in few messages, a dense one one
// window per message). Messages go (and are taken) in the order of their
// first window, so no rank waits on a later one.
//
// A rank that cannot allocate a message (to encode it, store it or send
// it on) sends every child a marker instead, on each stream still running:
// two words, out_of_memory_marker and its rank. The child ends that stream,
// forwards the marker and throws; the rank itself takes the rest of its
// parent's messages into the drain, drops them and throws. So the ranks at
// and below it in the broadcast tree throw, the others return the result,
// and nothing is left queued.
inline constexpr std::uint64_t out_of_memory_marker = ~std::uint64_t{0};

template <class T>
class segment_broadcast {
public:
    segment_broadcast(MPI_Comm pc, int me, std::size_t dimension, std::size_t window, std::size_t seg_bytes,
                      const T& id, wire::format fmt, bool bitmap, const std::vector<broadcast_stream>& streams,
                      std::span<std::byte> drain, report& rep, int tag = broadcast_block_tag)
        : pc_(pc), me_(me), tag_(tag), dimension_(dimension), window_(window), seg_bytes_(seg_bytes), id_(id), fmt_(fmt),
          bitmap_(bitmap), streams_(streams), drain_(drain), rep_(rep), windows_((dimension + window - 1) / window),
          next_(streams.size())
    {
        for (std::size_t k = 0; k < next_.size(); ++k) next_[k] = k;
        std::size_t children = 0;
        for (const broadcast_stream& s : streams) children += s.children.size();
        marker_requests_.reserve(children); // the markers need no allocation
        marker_[0] = out_of_memory_marker;
        marker_[1] = static_cast<std::uint64_t>(me);
    }

    // The root encodes from `root` (a sparse result) or `root_dense`; the
    // others decode into dense_out (when given) else into entries(). Set
    // before the first step.
    void source(const partial<T>* root, const T* root_dense, T* dense_out)
    {
        root_ = root;
        root_dense_ = root_dense;
        dense_out_ = dense_out;
    }

    // Moves the broadcast on: messages taken, sent on (their sends added to
    // reqs, the caller's to complete) and decoded. may_wait: until the end;
    // else never blocks. True once every message is in.
    bool step(std::vector<MPI_Request>& reqs, bool may_wait)
    {
        const std::size_t S = streams_.size();
        while (!all_taken_) {
            const std::size_t k = static_cast<std::size_t>(std::min_element(next_.begin(), next_.end()) - next_.begin());
            if (next_[k] >= windows_) {
                all_taken_ = true;
                break;
            }
            const std::size_t left = (windows_ - next_[k] + S - 1) / S; // windows still to come on this stream
            const std::size_t first = next_[k];
            std::size_t blocks = 0; // windows of the message taken (0: not taken yet)
            if (!out_of_memory()) {
                const auto taken = forward(k, left, reqs, may_wait);
                if (!taken) return false; // not in yet
                blocks = *taken;
            }
            if (out_of_memory()) { // the rest of the parent's messages dropped; the root has none
                if (blocks == 0) {
                    const auto dropped = me_ == 0 ? std::optional<std::size_t>(left) : drop_message(k, left, may_wait);
                    if (!dropped) return false;
                    blocks = *dropped;
                }
            } else if (me_ != 0 && error_text_.empty()) {
                decode_message(messages_.back(), first, first + blocks * S); // after forwarding: the subtree goes on
            }
            next_[k] += blocks * S;
        }
        if (!marker_requests_.empty()) {
            int done = 1;
            if (may_wait) MPI_Waitall(static_cast<int>(marker_requests_.size()), marker_requests_.data(), MPI_STATUSES_IGNORE);
            else MPI_Testall(static_cast<int>(marker_requests_.size()), marker_requests_.data(), &done, MPI_STATUSES_IGNORE);
            if (!done) return false;
            marker_requests_.clear();
        }
        if (S > 1 && !dense_out_ && me_ != 0 && error_text_.empty() && !spans_.empty()) try { // entries came stream by stream: window order
                window_order<T>(idx_, val_, spans_);
                spans_.clear();
            } catch (...) {
                error_text_ = text_or_out_of_memory([&] { return current_failure_text(me_); });
            }
        return true;
    }

    // The whole broadcast, waiting.
    void run(const partial<T>& root, const T* root_dense, T* dense_out, std::vector<MPI_Request>& reqs)
    {
        source(&root, root_dense, dense_out);
        step(reqs, true);
    }

    const std::string& error_text() const { return error_text_; }
    index_value_vector<T, std::uint64_t> entries() const { return index_value_vector<T, std::uint64_t>(dimension_, idx_, val_); }

private:
    bool out_of_memory() const { return marker_sent_; }

    // Stream k's next message: encoded (the root) or received, kept, sent
    // on to the children; its windows, or none while it is not in (only
    // when !may_wait). Where this rank cannot allocate, the children get
    // the marker instead (0: the parent's message not taken).
    std::optional<std::size_t> forward(std::size_t k, std::size_t left, std::vector<MPI_Request>& reqs, bool may_wait)
    {
        std::size_t blocks = 0;
        try {
            if (!receiving_) { // a new message (a receive in progress goes on into messages_.back())
                messages_.emplace_back(1);
                receiver_ = {};
                dropped_ = false;
                receiving_ = true;
            }
            wire_buffer& buf = messages_.back();
            std::size_t n = 8;
            if (me_ == 0) {
                n = root_message(k, left, buf, blocks);
            } else {
                // no room for it: taken into the drain
                if (!receiver_.receive(streams_[k].parent, tag_ + static_cast<int>(k), pc_, buf, 0, drain_, &dropped_,
                                       may_wait))
                    return std::nullopt;
                n = receiver_.got;
                rep_.bytes_received += n;
                blocks = windows_of_message(dropped_ ? drain_.data() : reinterpret_cast<const std::byte*>(buf.data()),
                                            n, left);
                if (dropped_) throw std::bad_alloc();
            }
            receiving_ = false;
            last_size_ = n;
            room_for_requests(reqs, streams_[k].children.size() * (pieces_of(n, max_piece_bytes) + 1));
            for (int c : streams_[k].children) {
                isend_message(buf.data(), n, c, tag_ + static_cast<int>(k), pc_, reqs);
                rep_.bytes_sent += n;
                ++rep_.messages_sent;
            }
        } catch (...) {
            receiving_ = false;
            if (me_ == 0) blocks = 0; // the root's message was not sent: its stream ends with the marker
            send_markers(k);
        }
        return blocks;
    }

    std::size_t root_message(std::size_t k, std::size_t left, wire_buffer& buf, std::size_t& blocks) const
    {
        std::size_t n = 8, covered = 0;
        do { // a sparse result's empty windows as empty runs (over this stream's windows)
            n = append_window(*root_, root_dense_, 0, dimension_, next_[k] + blocks * streams_.size(), window_,
                              streams_.size(), id_, fmt_, buf, n, bitmap_, covered);
            blocks += covered;
        } while (blocks < left && n < seg_bytes_);
        buf[0] = blocks;
        return n;
    }

    // The windows a received message covers, from its first word; a message
    // no root sends, or a marker, ends the stream here (its error kept).
    std::size_t windows_of_message(const std::byte* m, std::size_t n, std::size_t left)
    {
        std::uint64_t word[2] = {0, 0};
        std::memcpy(word, m, std::min<std::size_t>(n, sizeof word));
        if (n == sizeof word && word[0] == out_of_memory_marker) {
            if (error_text_.empty())
                error_text_ = text_or_out_of_memory([&] {
                    return "allreduce failed on rank " + std::to_string(word[1]) +
                           ": out of memory for a broadcast message";
                });
            return left;
        }
        if (n < 8 || word[0] == 0 || word[0] > left) { // cannot be from the root: stop the stream here
            if (error_text_.empty())
                error_text_ = text_or_out_of_memory(
                    [&] { return "rank " + std::to_string(me_) + ": malformed broadcast message"; });
            return left;
        }
        return static_cast<std::size_t>(word[0]);
    }

    // This rank cannot go on: the marker to every child of each stream with
    // windows to come (the current one, k, included), once; its own error.
    void send_markers(std::size_t k)
    {
        if (marker_sent_) return;
        marker_sent_ = true;
        if (error_text_.empty())
            error_text_ = text_or_out_of_memory([&] { return "allreduce failed on " + rank_failure_text(me_); });
        for (std::size_t j = 0; j < streams_.size(); ++j) {
            if (j != k && next_[j] >= windows_) continue;
            for (int c : streams_[j].children) {
                marker_requests_.emplace_back(); // reserved
                MPI_Isend(marker_, 2, MPI_UINT64_T, c, tag_ + static_cast<int>(j), pc_,
                          &marker_requests_.back());
                rep_.bytes_sent += sizeof marker_;
                ++rep_.messages_sent;
            }
        }
    }

    // Stream k's next message taken into the drain and dropped (this rank
    // is out of memory); its windows, or none while it is not in.
    std::optional<std::size_t> drop_message(std::size_t k, std::size_t left, bool may_wait)
    {
        if (!receiving_) {
            receiver_ = {};
            receiving_ = true;
        }
        bool dropped = true;
        if (!receiver_.receive(streams_[k].parent, tag_ + static_cast<int>(k), pc_, no_buffer_, 0, drain_, &dropped,
                               may_wait))
            return std::nullopt;
        receiving_ = false;
        rep_.bytes_received += receiver_.got;
        return windows_of_message(drain_.data(), receiver_.got, left);
    }

    void decode_message(const wire_buffer& m, std::size_t first, std::size_t end)
    {
        T* const dense_out = dense_out_;
        const std::size_t n = last_size_;
        try {
            const auto bytes = bytes_of(m, n);
            const std::size_t S = streams_.size();
            std::size_t at = 8;
            for (std::size_t w = first; w < end;) {
                const std::size_t lo = w * window_;
                const auto v = wire::parse_block<T>(bytes.subspan(at), std::min(window_, dimension_ - lo), true);
                if (v.tag == wire::block_tag::empty_run) { // windows w, w + S, ...: the identity
                    if (v.count - 1 > (end - 1 - w) / S) fail("malformed broadcast message: an empty run passes its windows");
                    for (std::size_t i = 0; dense_out && i < v.count; ++i) {
                        const std::size_t lo2 = (w + i * S) * window_;
                        std::fill(dense_out + lo2, dense_out + std::min(dimension_, lo2 + window_), id_);
                    }
                    at += v.bytes;
                    w += v.count * S;
                    continue;
                }
                const std::size_t begin = idx_.size();
                at = decode_blocks(bytes, at, 0, lo, std::min(lo + window_, dimension_), window_, id_, dense_out, idx_, val_);
                if (S > 1 && !dense_out) spans_.push_back({w, begin, idx_.size()});
                w += S;
            }
            if (at != n) fail("malformed broadcast message: bytes after its blocks");
        } catch (...) { // this rank's own: the data were checked by the root
            error_text_ = text_or_out_of_memory([&] { return current_failure_text(me_); });
        }
    }

    MPI_Comm pc_;
    int me_;
    int tag_; // stream k's: tag_ + k
    std::size_t dimension_, window_, seg_bytes_;
    T id_;
    wire::format fmt_;
    bool bitmap_;
    const std::vector<broadcast_stream>& streams_;
    std::span<std::byte> drain_; // the plan's: room for the largest message
    report& rep_;
    std::size_t windows_;
    std::vector<std::size_t> next_;
    std::vector<window_span> spans_; // where each decoded window's entries went (several streams, sparse output)
    std::vector<wire_buffer> messages_;
    std::vector<std::uint64_t> idx_;
    value_vector<T> val_;
    std::string error_text_;
    std::size_t last_size_ = 0; // the bytes of messages_.back()
    std::uint64_t marker_[2];
    std::vector<MPI_Request> marker_requests_;
    bool marker_sent_ = false;
    wire_buffer no_buffer_; // drop_message's: never grown
    const partial<T>* root_ = nullptr; // source()'s
    const T* root_dense_ = nullptr;
    T* dense_out_ = nullptr;
    message_receiver receiver_; // the message being taken (receiving_)
    bool receiving_ = false, dropped_ = false;
    bool all_taken_ = false;
};

} // namespace sparse_reduce::detail
