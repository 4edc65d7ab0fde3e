#pragma once
// The simulator's model of the whole-message path (exec/whole_reduce.hpp),
// which the MPI executor runs for sparse inputs under the adaptive wire: one
// message per tree edge, no windows, so no pipelining. Each rank receives its
// children's messages one at a time in fold order (blocking receives),
// folds each as it arrives, then sends its partial result whole (a blocking
// send):
//
//   a child's transfer   alpha + beta * bytes, from max(child done folding,
//                        parent ready to receive it), less beta * the bytes
//                        the child's uplink and the parent's downlink let
//                        through at once (link_bucket: tc tbf's burst, when
//                        the tuning has one; the buckets as the previous
//                        call left them, whole_links); the child is then done
//   folding a child      gamma * (entries of both sides), or gamma_dense *
//                        dimension once the partial result is dense; a
//                        dense message is folded piece by piece as it
//                        arrives (whole_piece_bytes): done at the later of
//                        its last piece's fold and the first piece plus
//                        the whole fold
//   a leaf's copy        gamma * entries (none when it holds every element:
//                        its own array is sent); the last fold writes
//                        straight into the message or the root's sparse
//                        output; a dense output costs gamma_dense * dimension
//
// Messages are the executor's to the byte (exec/partial_message.hpp: 64-byte
// header, values, 2-byte blocked indices when that is smaller, or dense once
// entries * (4 + sizeof(T)) exceed dimension * sizeof(T)). No link calendar
// is needed: a rank's link carries its receives one after another (it blocks
// on each) and its one send after them, so no two of its transfers overlap.
// The windowed pipeline's model does not fit such calls, which the executor
// runs unpipelined: on the 1 Gbit/s network at P = 8 and full density it
// gives a chain 0.42 s against the 1.11 s measured (doc/selection.md,
// "Validation on the shaped network").

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../kernel/merge_arrays.hpp"
#include "../model/cost.hpp"
#include "../op/associative_op.hpp"
#include "../tree/tree.hpp"
#include "../exec/partial_message.hpp"

namespace sparse_reduce::detail {

// Bytes of a whole message holding these sorted indices (32-bit wire indices).
template <class T>
std::size_t whole_message_bytes(std::span<const std::uint32_t> idx, std::size_t dimension)
{
    const std::size_t n = idx.size();
    if (n * (sizeof(std::uint32_t) + sizeof(T)) > dimension * sizeof(T)) return dense_partial_bytes<T>(dimension);
    const std::size_t at = partial_indices_at<T, std::uint32_t>(n);
    std::size_t windows = 0; // distinct 65536-element windows; blocked while at most n / 4
    for (std::size_t k = 0; k < n; ++k) windows += k == 0 || (idx[k] >> 16) != (idx[k - 1] >> 16);
    if (n >= 8 && windows <= n / 4) return pad8(at + 2 * n) + 8 * windows;
    return at + n * sizeof(std::uint32_t);
}

// Each rank's two token buckets (model/cost.hpp), uplink and downlink.
struct whole_links {
    std::vector<link_bucket> up, down;
    whole_links(std::size_t p, const cost_model& m) : up(p, link_bucket(m)), down(p, link_bucket(m)) {}
    // The buckets as the next call finds them, `after` seconds after this one began.
    void shift(double after)
    {
        for (auto* v : {&up, &down})
            for (auto& b : *v) b.at -= after;
    }
};

struct whole_timing {
    double time = 0; // the root's completion
    std::vector<std::size_t> bytes_sent, messages_sent;
    std::size_t critical_path_bytes = 0;
};

// A rank's partial result: sorted indices and their values (never the identity).
template <class T>
struct whole_partial {
    std::vector<std::uint32_t> idx;
    std::vector<T> val;
};

// Times one tree's whole-message reduce; held[r]: rank r's entries, start[r]:
// when rank r begins (after any statistics and its input's scan). The folds
// are real (op, fold order, identities dropped, as the executor's), so every
// message has the executor's entries.
template <class T, class Op>
whole_timing time_whole_reduce(const tree& t, std::vector<whole_partial<T>> held, std::span<const double> start,
                               std::size_t dimension, const Op& op, const cost_model& net, bool dense_output,
                               whole_links& links)
{
    const auto p = static_cast<std::size_t>(t.size);
    whole_timing w;
    w.bytes_sent.assign(p, 0);
    w.messages_sent.assign(p, 0);
    const T id = identity<T>(op);
    std::vector<double> done(p, 0);          // when a rank's partial is complete (before its send)
    std::vector<double> sent(p, 0);          // when its send ended
    std::vector<std::size_t> chain(p, 0);    // bytes on the longest chain into it
    const double dense_fold = net.gamma_dense * static_cast<double>(dimension);
    auto is_dense = [&](std::size_t n) { return n * (sizeof(std::uint32_t) + sizeof(T)) > dimension * sizeof(T); };
    // A child's message into rank r, r's clock at `now`: returns the new clock.
    auto receive = [&](std::size_t r, std::size_t c, double now, bool left, bool as_it_arrives = true) {
        const std::size_t bytes = whole_message_bytes<T>(held[c].idx, dimension);
        const bool dense_message = is_dense(held[c].idx.size());
        const double begin = std::max(now, done[c]) + net.alpha;
        const double burst = spend_burst(links.up[c], links.down[r], begin, static_cast<double>(bytes), net);
        const double end = begin + net.beta * (static_cast<double>(bytes) - burst);
        sent[c] = end;
        w.bytes_sent[c] += bytes;
        ++w.messages_sent[c];
        chain[r] = std::max(chain[r], chain[c] + bytes);
        const whole_partial<T>& a = left ? held[c] : held[r]; // the earlier operand first
        const whole_partial<T>& b = left ? held[r] : held[c];
        whole_partial<T> u;
        const std::size_t cap = a.idx.size() + b.idx.size();
        u.idx.resize(cap);
        u.val.resize(cap);
        const std::size_t n = merge_arrays(a.idx.data(), a.val.data(), a.idx.size(), b.idx.data(), b.val.data(),
                                           b.idx.size(), u.idx.data(), u.val.data(), op, id);
        u.idx.resize(n);
        u.val.resize(n);
        const double fold = is_dense(cap) ? dense_fold : net.gamma * static_cast<double>(cap);
        held[r] = std::move(u);
        held[c] = {}; // merged: a chain would otherwise hold P partials of up to P inputs each
        if (as_it_arrives && dense_message && bytes > whole_piece_bytes) { // folded as its pieces arrive
            const double pieces = std::ceil(static_cast<double>(bytes) / static_cast<double>(whole_piece_bytes));
            const double first = std::max(0.0, static_cast<double>(whole_piece_bytes) - burst);
            return std::max(end + fold / pieces, begin + net.beta * first + fold);
        }
        return end + fold;
    };
    // Ranks in an order where every child comes before its parent.
    std::vector<int> order{t.top};
    for (std::size_t k = 0; k < order.size(); ++k)
        for (int c : t.children[static_cast<std::size_t>(order[k])]) order.push_back(c);
    std::reverse(order.begin(), order.end());
    for (int ri : order) {
        const auto r = static_cast<std::size_t>(ri);
        const auto v = t.local(ri);
        const std::size_t nc = v.children.size(), self = static_cast<std::size_t>(std::max(0, v.self_position));
        double now = start[r];
        // A leaf copies its entries into its message, unless it holds every
        // element (it sends its own array); the root with no child copies
        // them into the output. Otherwise the last fold writes straight into
        // the message or the output.
        if (nc == 0 && held[r].idx.size() < dimension) now += net.gamma * static_cast<double>(held[r].idx.size());
        for (std::size_t s = 0; s < nc; ++s) { // whole_reduce's receive order: right children, then left ones reversed
            const std::size_t c = s < nc - self ? self + s : nc - 1 - s;
            now = receive(r, static_cast<std::size_t>(v.children[c]), now, c < self);
        }
        done[r] = now;
    }
    const auto dest = static_cast<std::size_t>(t.destination);
    double end = done[static_cast<std::size_t>(t.top)];
    if (t.top != t.destination) { // the top forwards the result; the destination sent its own part first
        held[dest] = {};             // then copies the message into the output (the receive's "fold")
        end = receive(dest, static_cast<std::size_t>(t.top), t.parent[dest] >= 0 ? sent[dest] : done[dest], false,
                      false); // received whole, then written out
    }
    // A dense output is filled with the identity and the result scattered in:
    // one pass over the dimension (a sparse one took the last fold).
    w.time = end + (dense_output ? dense_fold : 0.0);
    w.critical_path_bytes = chain[dest];
    return w;
}

} // namespace sparse_reduce::detail
