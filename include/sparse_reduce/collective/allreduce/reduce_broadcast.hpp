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
#include <optional>
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

// The root's outcome down the first tree (0, or its error text), before
// any data; throws on every rank when the reduce failed.
inline void broadcast_outcome(MPI_Comm pc, int me, const broadcast_stream& s, const std::string& failure,
                              report& rep, std::vector<MPI_Request>& reqs)
{
    std::string status;
    if (me == 0) {
        status = failure.empty() ? std::string(1, '\0') : "\x01" + failure;
    } else {
        MPI_Status st;
        int n = 0;
        MPI_Probe(s.parent, broadcast_status_tag, pc, &st);
        MPI_Get_count(&st, MPI_CHAR, &n);
        status.resize(static_cast<std::size_t>(n));
        MPI_Recv(status.data(), n, MPI_CHAR, s.parent, broadcast_status_tag, pc, MPI_STATUS_IGNORE);
        rep.bytes_received += static_cast<std::size_t>(n);
    }
    for (int c : s.children) {
        reqs.emplace_back();
        MPI_Isend(status.data(), static_cast<int>(status.size()), MPI_CHAR, c, broadcast_status_tag, pc, &reqs.back());
        rep.bytes_sent += status.size();
        ++rep.messages_sent;
    }
    if (status.empty() || status[0] != '\0') {
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        fail(!failure.empty() ? failure : status.empty() ? "allreduce: empty status" : status.substr(1));
    }
}

// The result's segments down the streams, each message forwarded on
// arrival. A message: a word with the number of windows it covers, then a
// block per window or an empty run over several (stream s has windows s,
// s + S, ...), cut once it reaches the
// segment size (a sparse result travels in few messages, a dense one one
// window per message). Messages go (and are taken) in the order of their
// first window, so no rank waits on a later one.
template <class T>
class segment_broadcast {
public:
    segment_broadcast(MPI_Comm pc, int me, std::size_t dimension, std::size_t window, std::size_t seg_bytes,
                      const T& id, wire::format fmt, bool bitmap, const std::vector<broadcast_stream>& streams,
                      report& rep)
        : pc_(pc), me_(me), dimension_(dimension), window_(window), seg_bytes_(seg_bytes), id_(id), fmt_(fmt),
          bitmap_(bitmap),
          streams_(streams), rep_(rep), windows_((dimension + window - 1) / window), next_(streams.size())
    {
        for (std::size_t k = 0; k < next_.size(); ++k) next_[k] = k;
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
            wire_buffer buf(1);
            std::size_t n = 8, blocks = 0;
            if (me_ == 0) n = root_message(root, root_dense, k, left, buf, blocks);
            else n = receive_message(k, left, buf, blocks);
            messages_.push_back(std::move(buf));
            for (int c : streams_[k].children) {
                isend_message(messages_.back().data(), n, c, broadcast_block_tag + static_cast<int>(k), pc_, reqs);
                rep_.bytes_sent += n;
                ++rep_.messages_sent;
            }
            const std::size_t first = next_[k];
            next_[k] += blocks * S;
            if (me_ == 0 || !error_text_.empty()) continue;
            decode_message(messages_.back(), n, first, next_[k], dense_out); // after forwarding: the subtree goes on
        }
        if (S > 1 && !dense_out && me_ != 0 && error_text_.empty()) // entries came stream by stream: window order
            window_order<T>(idx_, val_, spans_);
    }

    const std::string& error_text() const { return error_text_; }
    index_value_vector<T, std::uint64_t> entries() const { return index_value_vector<T, std::uint64_t>(dimension_, idx_, val_); }

private:
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

    std::size_t receive_message(std::size_t k, std::size_t left, wire_buffer& buf, std::size_t& blocks)
    {
        const std::size_t n = recv_message(streams_[k].parent, broadcast_block_tag + static_cast<int>(k), pc_, buf);
        rep_.bytes_received += n;
        blocks = n >= 8 ? static_cast<std::size_t>(buf[0]) : 0;
        if (blocks == 0 || blocks > left) { // cannot be from the root: stop the stream here
            error_text_ = "rank " + std::to_string(me_) + ": malformed broadcast message";
            blocks = left;
        }
        return n;
    }

    void decode_message(const wire_buffer& m, std::size_t n, std::size_t first, std::size_t end, T* dense_out)
    {
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
        } catch (...) {
            error_text_ = current_failure_text(me_); // this rank's own: the data were checked by the root
        }
    }

    MPI_Comm pc_;
    int me_;
    std::size_t dimension_, window_, seg_bytes_;
    T id_;
    wire::format fmt_;
    bool bitmap_;
    const std::vector<broadcast_stream>& streams_;
    report& rep_;
    std::size_t windows_;
    std::vector<std::size_t> next_;
    std::vector<window_span> spans_; // where each decoded window's entries went (several streams, sparse output)
    std::vector<wire_buffer> messages_;
    std::vector<std::uint64_t> idx_;
    value_vector<T> val_;
    std::string error_text_;
};

// reduce to 0 with `reduce`, then the pipelined broadcast of the result.
template <class In, class Out, class Op>
report reduce_then_broadcast(reduce_core& reduce, MPI_Comm pc, std::size_t dimension, const In& in,
                             Out& out, const Op& op, std::size_t broadcast_segment, bool bitmap)
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
                failure = unprefixed(current_exception_text());
            }
    std::size_t seg_bytes = broadcast_segment ? broadcast_segment : reduce.policy().segment_bytes();
    if (!seg_bytes) seg_bytes = default_segment_bytes;
    const std::size_t window = std::max<std::size_t>(1, seg_bytes / sizeof(T));
    // One broadcast tree from 0 (binomial), or two (two_tree) that take
    // alternate windows: every rank then forwards about the result once.
    const auto streams = broadcast_streams(me, P, reduce.policy().two_trees());
    // The broadcast is made before the reduce, whose protocol carries a
    // rank's failure to the root, and the root's outcome goes to every rank
    // before any data: a rank that cannot make it (the root too) fails the
    // call everywhere instead of leaving its peers waiting. What it grows
    // later (the spans of decoded windows) can fail on that rank only, inside
    // its receive: that rank throws, with nothing left queued.
    std::optional<segment_broadcast<T>> b;
    if (failure.empty()) try {
            b.emplace(pc, me, dimension, window, seg_bytes, identity<T>(op), reduce.policy().wire(), bitmap, streams,
                      rep);
        } catch (...) {
            failure = unprefixed(current_exception_text());
        }
    try {
        rep = reduce.reduce_failed_before(in, out, op, failure);
    } catch (...) {
        failure = current_failure_text(me);
    }
    partial<T> root_result; // a sparse result, as index/value
    if constexpr (RO::kind != repr_kind::dense)
        if (me == 0 && failure.empty()) try {
                convert_into(root_result.sparse, out, op);
            } catch (...) {
                failure = current_failure_text(me);
            }
    std::vector<MPI_Request> reqs;
    broadcast_outcome(pc, me, streams[0], failure, rep, reqs);
    if (!b) fail(failure); // (a failed rank's outcome has thrown above)

    const T* root_dense = nullptr; // a dense result is encoded straight from out
    if constexpr (RO::kind == repr_kind::dense)
        if (me == 0 && failure.empty()) root_dense = RO::output(out, dimension).data(); // checked by the reduce
    b->run(root_result, root_dense, dense_out, reqs);
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    if (!b->error_text().empty()) fail(b->error_text());
    if (!failure.empty()) fail(failure); // reduce reports every failure to the root: not expected here
    if constexpr (RO::kind != repr_kind::dense)
        if (me != 0) convert_into(out, b->entries(), op);
    rep.algorithm = "reduce_broadcast(" + rep.algorithm + (streams.size() > 1 ? ", two-tree" : ", binomial") +
                    " broadcast, segment=" + std::to_string(window * sizeof(T)) + ")";
    return rep;
}

} // namespace sparse_reduce::detail
