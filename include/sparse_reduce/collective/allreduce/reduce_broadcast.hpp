#pragma once
// reduce_broadcast allreduce (detail; collective/allreduce.hpp): reduce's
// plan to rank 0, then a pipelined broadcast of the result: wire blocks of
// one segment of the index space each, packed into messages of about the
// segment size, each forwarded as soon as it arrives; over a binomial tree,
// or over two trees taking alternate windows after P = two_tree. The root
// sends its outcome down the first tree before any data, so a failed
// reduce ends in sparse_reduce::error on every rank.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../kernel/convert.hpp"
#include "../../policy.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../report.hpp"
#include "../../tree/two_tree.hpp"
#include "../../wire/block.hpp"
#include "../reduce_core.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// The reduce policy under an allreduce policy (automatic's own settings for automatic).
template <class P>
struct tree_policy_of {
    using type = policy::automatic;
};
template <class P>
    requires requires(const P& p) { p.tree; }
struct tree_policy_of<P> {
    using type = std::remove_cvref_t<decltype(std::declval<const P&>().tree)>;
};

// A rank's place in a broadcast from 0: its parent and children.
struct broadcast_stream {
    int parent = -1;
    std::vector<int> children;
};

// One binomial tree (parent clears the lowest set bit, children add bits
// below it), or the two trees of two_trees() with 0 feeding the second
// tree's top: inner ranks of one tree are leaves of the other, so every
// rank forwards about half the result twice, not log P times.
inline std::vector<broadcast_stream> broadcast_streams(int me, int P, bool two)
{
    if (!two || P < 3) {
        broadcast_stream s;
        const int low = me == 0 ? P : (me & -me);
        s.parent = me == 0 ? -1 : me - low;
        for (int b = 1; b < low && me + b < P; b <<= 1) s.children.push_back(me + b);
        return {s};
    }
    std::vector<broadcast_stream> out;
    for (const tree& t : two_trees(P, 0, true)) {
        broadcast_stream s;
        const auto m = static_cast<std::size_t>(me);
        if (me != 0) s.parent = t.parent[m] < 0 ? 0 : t.parent[m];
        for (int c : t.children[m])
            if (c != 0) s.children.push_back(c);
        if (me == 0 && t.top != 0) s.children.push_back(t.top);
        out.push_back(std::move(s));
    }
    return out;
}

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

// The root's outcome down the binomial tree from 0 (a byte 0, or 1 and its
// error text, of at most outcome_text_bytes), before any data; throws on
// every rank when the reduce failed. Allocates nothing where it cannot:
// the sends block (each child waits for just this message), and a text
// with no room goes through `drain`.
inline constexpr std::size_t outcome_text_bytes = 1024;

inline void broadcast_outcome(MPI_Comm pc, int me, int P, const std::string& failure, report& rep,
                              std::span<std::byte> drain)
{
    const int low = me == 0 ? P : (me & -me); // parent me - low, children me + 1, 2, 4, ... below low
    const char ok = '\0';
    std::string text;
    const char* status = &ok;
    int n = 1;
    if (me == 0) {
        if (!failure.empty()) try {
                text = "\x01" + failure.substr(0, outcome_text_bytes);
                status = text.data();
                n = static_cast<int>(text.size());
            } catch (...) {
                status = "\x01" "out of memory for the reduce's error text";
                n = static_cast<int>(std::strlen(status));
            }
    } else {
        MPI_Status st;
        MPI_Probe(me - low, broadcast_status_tag, pc, &st);
        MPI_Get_count(&st, MPI_CHAR, &n);
        char* into = reinterpret_cast<char*>(drain.data()); // no room for the text: the drain holds it
        try {
            text.resize(static_cast<std::size_t>(n));
            into = text.data();
        } catch (...) {
        }
        MPI_Recv(into, n, MPI_CHAR, me - low, broadcast_status_tag, pc, MPI_STATUS_IGNORE);
        status = into;
        rep.bytes_received += static_cast<std::size_t>(n);
    }
    for (int b = 1; b < low && me + b < P; b <<= 1) {
        MPI_Send(status, n, MPI_CHAR, me + b, broadcast_status_tag, pc);
        rep.bytes_sent += static_cast<std::size_t>(n);
        ++rep.messages_sent;
    }
    if (n == 0 || status[0] != '\0')
        fail(!failure.empty() ? failure : n == 0 ? "allreduce: empty status" : std::string(status + 1, status + n));
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
                      std::span<std::byte> drain, report& rep)
        : pc_(pc), me_(me), dimension_(dimension), window_(window), seg_bytes_(seg_bytes), id_(id), fmt_(fmt),
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
    // others decode into dense_out (when given) else into entries().
    void run(const partial<T>& root, const T* root_dense, T* dense_out, std::vector<MPI_Request>& reqs)
    {
        const std::size_t S = streams_.size();
        for (;;) {
            const std::size_t k = static_cast<std::size_t>(std::min_element(next_.begin(), next_.end()) - next_.begin());
            if (next_[k] >= windows_) break;
            const std::size_t left = (windows_ - next_[k] + S - 1) / S; // windows still to come on this stream
            const std::size_t first = next_[k];
            std::size_t blocks = 0; // windows of the message taken (0: not taken yet)
            if (!out_of_memory()) blocks = forward(root, root_dense, k, left, reqs);
            if (out_of_memory()) { // the rest of the parent's messages dropped; the root has none
                if (blocks == 0) blocks = me_ == 0 ? left : drop_message(k, left);
            } else if (me_ != 0 && error_text_.empty()) {
                decode_message(messages_.back(), first, first + blocks * S, dense_out); // after forwarding: the subtree goes on
            }
            next_[k] += blocks * S;
        }
        if (!marker_requests_.empty())
            MPI_Waitall(static_cast<int>(marker_requests_.size()), marker_requests_.data(), MPI_STATUSES_IGNORE);
        if (S > 1 && !dense_out && me_ != 0 && error_text_.empty()) try { // entries came stream by stream: window order
                window_order<T>(idx_, val_, spans_);
            } catch (...) {
                error_text_ = text_or_out_of_memory([&] { return current_failure_text(me_); });
            }
    }

    const std::string& error_text() const { return error_text_; }
    index_value_vector<T, std::uint64_t> entries() const { return index_value_vector<T, std::uint64_t>(dimension_, idx_, val_); }

private:
    bool out_of_memory() const { return marker_sent_; }

    // Stream k's next message: encoded (the root) or received, kept, sent
    // on to the children; its windows. Where this rank cannot allocate, the
    // children get the marker instead (0: the parent's message not taken).
    std::size_t forward(const partial<T>& root, const T* root_dense, std::size_t k, std::size_t left,
                        std::vector<MPI_Request>& reqs)
    {
        std::size_t blocks = 0;
        try {
            messages_.emplace_back(1);
            wire_buffer& buf = messages_.back();
            std::size_t n = 8;
            if (me_ == 0) {
                n = root_message(root, root_dense, k, left, buf, blocks);
            } else {
                bool dropped = false; // no room for it: taken into the drain
                n = recv_message(streams_[k].parent, broadcast_block_tag + static_cast<int>(k), pc_, buf, 0, drain_,
                                 &dropped);
                rep_.bytes_received += n;
                blocks = windows_of_message(dropped ? drain_.data() : reinterpret_cast<const std::byte*>(buf.data()), n,
                                            left);
                if (dropped) throw std::bad_alloc();
            }
            last_size_ = n;
            room_for_requests(reqs, streams_[k].children.size() * (pieces_of(n, max_piece_bytes) + 1));
            for (int c : streams_[k].children) {
                isend_message(buf.data(), n, c, broadcast_block_tag + static_cast<int>(k), pc_, reqs);
                rep_.bytes_sent += n;
                ++rep_.messages_sent;
            }
        } catch (...) {
            if (me_ == 0) blocks = 0; // the root's message was not sent: its stream ends with the marker
            send_markers(k);
        }
        return blocks;
    }

    std::size_t root_message(const partial<T>& root, const T* root_dense, std::size_t k, std::size_t left,
                             wire_buffer& buf, std::size_t& blocks) const
    {
        std::size_t n = 8, covered = 0;
        do { // a sparse result's empty windows as empty runs (over this stream's windows)
            n = append_window(root, root_dense, 0, dimension_, next_[k] + blocks * streams_.size(), window_,
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
                MPI_Isend(marker_, 2, MPI_UINT64_T, c, broadcast_block_tag + static_cast<int>(j), pc_,
                          &marker_requests_.back());
                rep_.bytes_sent += sizeof marker_;
                ++rep_.messages_sent;
            }
        }
    }

    // Stream k's next message taken into the drain and dropped (this rank
    // is out of memory); its windows.
    std::size_t drop_message(std::size_t k, std::size_t left)
    {
        bool dropped = true;
        const std::size_t n = recv_message(streams_[k].parent, broadcast_block_tag + static_cast<int>(k), pc_,
                                           no_buffer_, 0, drain_, &dropped);
        rep_.bytes_received += n;
        return windows_of_message(drain_.data(), n, left);
    }

    void decode_message(const wire_buffer& m, std::size_t first, std::size_t end, T* dense_out)
    {
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
};

// reduce to 0 with `reduce`, then the pipelined broadcast of the result.
template <class In, class Out, class Op>
report reduce_then_broadcast(reduce_core& reduce, MPI_Comm pc, std::size_t dimension, const In& in,
                             Out& out, const Op& op, std::size_t broadcast_segment, bool bitmap,
                             std::span<std::byte> drain)
{
    using T = value_type_of<In>;
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    int me = 0, P = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &P);
    report rep;
    std::string failure;
    // A non-root's output is checked before the reduce, whose failure
    // protocol carries it to the root and the root's outcome to everyone.
    T* dense_out = nullptr;
    if constexpr (RO::kind == repr_kind::dense)
        if (me != 0) try {
                dense_out = RO::output(out, dimension).data();
            } catch (...) {
                failure = caught_text();
            }
    std::size_t seg_bytes = broadcast_segment ? broadcast_segment : reduce.policy().segment_bytes();
    if (!seg_bytes) seg_bytes = default_segment_bytes;
    const std::size_t window = std::max<std::size_t>(1, seg_bytes / sizeof(T));
    // One broadcast tree from 0 (binomial), or two (two_tree) that take
    // alternate windows: every rank then forwards about the result once.
    std::vector<broadcast_stream> streams;
    // The broadcast is made before the reduce, whose protocol carries a
    // rank's failure to the root, and the root's outcome goes to every rank
    // before any data: a rank that cannot make it (the root too) fails the
    // call everywhere instead of leaving its peers waiting. What it grows
    // later (a message, the spans of decoded windows) fails that rank and
    // the ranks below it (segment_broadcast), with nothing left queued.
    std::optional<segment_broadcast<T>> b;
    if (failure.empty()) try {
            streams = broadcast_streams(me, P, reduce.policy().two_trees());
            b.emplace(pc, me, dimension, window, seg_bytes, identity<T>(op), reduce.policy().wire(), bitmap, streams,
                      drain, rep);
        } catch (...) {
            failure = caught_text();
        }
    try {
        rep = reduce.reduce_failed_before(in, out, op, failure);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return current_failure_text(me); });
    }
    partial<T> root_result; // a sparse result, as index/value
    if constexpr (RO::kind != repr_kind::dense)
        if (me == 0 && failure.empty()) try {
                convert_into(root_result.sparse, out, op);
            } catch (...) {
                failure = text_or_out_of_memory([&] { return current_failure_text(me); });
            }
    broadcast_outcome(pc, me, P, failure, rep, drain);
    if (!b) fail(failure); // (a failed rank's outcome has thrown above)

    const T* root_dense = nullptr; // a dense result is encoded straight from out
    if constexpr (RO::kind == repr_kind::dense)
        if (me == 0 && failure.empty()) root_dense = RO::output(out, dimension).data(); // checked by the reduce
    std::vector<MPI_Request> reqs; // grown inside the broadcast's own protocol
    b->run(root_result, root_dense, dense_out, reqs);
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    if (!b->error_text().empty()) fail(b->error_text());
    if (!failure.empty()) fail(failure); // reduce reports every failure to the root: not expected here
    // Every message is in: what fails below fails this rank alone.
    if constexpr (RO::kind != repr_kind::dense)
        if (me != 0) try {
                convert_into(out, b->entries(), op);
            } catch (...) {
                fail("allreduce failed on " + text_or_out_of_memory([&] { return current_failure_text(me); }));
            }
    try { // the call succeeded: a text that cannot be made is left empty
        rep.algorithm = "reduce_broadcast(" + rep.algorithm + (streams.size() > 1 ? ", two-tree" : ", binomial") +
                        " broadcast, segment=" + std::to_string(window * sizeof(T)) + ")";
    } catch (...) {
        rep.algorithm = report_text();
    }
    return rep;
}

} // namespace sparse_reduce::detail
