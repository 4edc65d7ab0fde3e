#pragma once
// sparse_reduce::allreduce — MPI_Allreduce for sparse vectors.
//
//   report allreduce(comm, in, out, op [, policy]);
//   auto plan = make_allreduce_plan(comm, dimension [, policy]);
//   report r = plan.allreduce(in, out, op);
//
// Same vectors, operators and wire formats as reduce; out is written on
// every rank, in the caller's type. Algorithms (doc/allreduce.md):
//
//   policy::reduce_broadcast{.tree = P}  reduce's plan with policy P to rank 0,
//       then a pipelined broadcast of the result: wire blocks of one segment
//       of the index space each, packed into messages of about the segment
//       size, each forwarded as soon as it arrives; over a binomial tree, or
//       over two trees taking alternate windows after P = two_tree.
//   policy::recursive_doubling{}  log2 P exchanges of whole partial results
//       with rank ^ 2^k; a partial is index/value until that outgrows dense,
//       then dense (folded in place); on the wire, per block, whichever form
//       is smaller. P not a power of two: ranks 2i+1 < 2r (r = P -
//       2^floor(log2 P)) fold into 2i first and get the result back last.
//   policy::split_allgather{}  a reduce_scatter by block ranges (wire blocks,
//       one message per peer), then an allgather of the reduced ranges.
//   policy::grouped{}  seed 002 on a 2D mesh of ranks: reduce_scatter within
//       groups, recursive doubling across corresponding members, allgather
//       back (split_allgather is one group of all ranks).
//   policy::automatic (default)  the least of recursive doubling,
//       reduce_broadcast and split-allgather by the α-β-γ model, from the
//       mean entry count (one small allreduce per call).
//
// Non-commutative operations keep rank order: the reduce does; recursive
// doubling always puts the lower ranks' partial on the left; the pieces of a
// range are folded in rank order; grouped needs groups of consecutive ranks.
//
// Errors end in sparse_reduce::error on EVERY rank (not only the root and
// the detecting rank, as in reduce): reduce_broadcast sends the root's
// outcome down the broadcast tree before any data; the others carry a status
// in every message (a failed rank goes on exchanging empty messages) and end
// with one allreduce of the status, then the failing rank's message is
// broadcast. An op may throw anything (`throw 42;` too): every exception is
// caught and becomes that rank's failure. Before anything is sent, the plan
// refuses an intercommunicator and an invalid policy (validate in
// policy_check.hpp) on every rank.

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../mpi/transport.hpp"
#include "../error.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/convert.hpp"
#include "../kernel/entry_stream.hpp"
#include "../model/cost.hpp"
#include "../model/merged_size.hpp"
#include "../policy.hpp"
#include "../policy_check.hpp"
#include "../repr/index_value_vector.hpp"
#include "../report.hpp"
#include "../select/tuning.hpp"
#include "../wire/block.hpp"
#include "../select/group_shape.hpp"
#include "../tree/two_tree.hpp"
#include "reduce.hpp"
#include "reduce_scatter.hpp"

namespace sparse_reduce {
namespace detail {

// 8-aligned message storage (wire blocks are read in place).
using wire_buffer = std::vector<std::uint64_t>;
inline std::span<const std::byte> bytes_of(const wire_buffer& b, std::size_t n)
{
    return {reinterpret_cast<const std::byte*>(b.data()), n};
}
// `words` 8-byte words of b from word `first`.
inline std::span<const std::byte> bytes_of(const wire_buffer& b, std::size_t first, std::size_t words)
{
    return {reinterpret_cast<const std::byte*>(b.data() + first), words * 8};
}

// A partial result: index/value while that is smaller than dense.
template <class T>
struct partial {
    bool is_dense = false;
    std::vector<T> dense;
    index_value_vector<T, std::uint64_t> sparse;
    std::size_t entries() const { return is_dense ? dense.size() : sparse.nnz(); }
};

// Whether e entries of T are better held (and combined) dense.
template <class T>
bool dense_is_smaller(std::size_t entries, std::size_t dimension)
{
    return entries * (sizeof(std::uint64_t) + sizeof(T)) >= dimension * sizeof(T);
}

// Entries [lo, hi) of index/value arrays as a reader relative to lo. A
// value type: encode_block reads its reader twice (measure, then write), so
// exec/reduce_node.hpp's window_reader, which shares one persistent reader,
// does not fit here.
template <class T>
class block_window_reader {
public:
    block_window_reader(const std::uint64_t* idx, const T* val, std::size_t n, std::size_t lo)
        : idx_(idx), val_(val), n_(n), lo_(lo) {}
    bool done() const noexcept { return k_ == n_; }
    std::size_t index() const noexcept { return static_cast<std::size_t>(idx_[k_]) - lo_; }
    const T& value() const noexcept { return val_[k_]; }
    void next() noexcept { ++k_; }

private:
    const std::uint64_t* idx_;
    const T* val_;
    std::size_t n_, lo_, k_ = 0;
};

// Appends window [lo, lo + len) of a partial (or of the dense array
// `dense`, when given) as one wire block at byte offset `at` of buf;
// returns the new end.
template <class T>
std::size_t append_block(const partial<T>& p, const T* dense, std::size_t lo, std::size_t len, const T& id,
                         wire::format f, wire_buffer& buf, std::size_t at)
{
    const std::size_t need = at + wire::max_block_bytes<T>(len, f);
    if (buf.size() * 8 < need) buf.resize((need + 7) / 8);
    std::byte* out = reinterpret_cast<std::byte*>(buf.data()) + at;
    if (!dense && p.is_dense) dense = p.dense.data();
    if (dense) return at + wire::encode_block<T>(std::span<const T>(dense + lo, len), id, f, out);
    const auto idx = p.sparse.indices();
    const auto b = std::lower_bound(idx.begin(), idx.end(), static_cast<std::uint64_t>(lo));
    const auto e = std::lower_bound(b, idx.end(), static_cast<std::uint64_t>(lo + len));
    const std::size_t k = static_cast<std::size_t>(b - idx.begin());
    return at + wire::encode_block<T>(block_window_reader<T>(idx.data() + k, p.sparse.values().data() + k,
                                                             static_cast<std::size_t>(e - b), lo),
                                      len, id, f, out);
}

// Appends one decoded block (window at lo) to an index/value accumulator.
template <class T>
void append_entries(const wire::block_view<T>& v, std::size_t lo, const T& id, std::vector<std::uint64_t>& idx,
                    std::vector<T>& val)
{
    wire::visit_block(v, id, [&](auto r) {
        for (; !r.done(); r.next()) {
            idx.push_back(lo + r.index());
            val.push_back(r.value());
        }
    });
}

// Decodes the blocks of local windows [from, to) (`from` a multiple of
// `window`) starting at byte `at`: into dense_out + base (when given), else
// appended as entries at base + offset. Returns the byte after them.
template <class T>
std::size_t decode_blocks(std::span<const std::byte> bytes, std::size_t at, std::size_t base, std::size_t from,
                          std::size_t to, std::size_t window, const T& id, T* dense_out, std::vector<std::uint64_t>& idx,
                          std::vector<T>& val)
{
    for (std::size_t lo = from; lo < to; lo += window) {
        const std::size_t len = std::min(window, to - lo);
        const auto v = wire::parse_block<T>(bytes.subspan(at), len);
        at += v.bytes;
        if (dense_out) wire::decode_block_into(v, id, std::span<T>(dense_out + base + lo, len));
        else append_entries(v, base + lo, id, idx, val);
    }
    return at;
}

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

// Entries decoded stream by stream, window w's at [spans[w].first,
// spans[w].second), put back in window (so index) order.
template <class T>
void window_order(std::vector<std::uint64_t>& idx, std::vector<T>& val,
                  const std::vector<std::pair<std::size_t, std::size_t>>& spans)
{
    std::vector<std::uint64_t> i2;
    std::vector<T> v2;
    i2.reserve(idx.size());
    v2.reserve(val.size());
    for (const auto& [b, e] : spans) {
        i2.insert(i2.end(), idx.begin() + static_cast<std::ptrdiff_t>(b), idx.begin() + static_cast<std::ptrdiff_t>(e));
        v2.insert(v2.end(), val.begin() + static_cast<std::ptrdiff_t>(b), val.begin() + static_cast<std::ptrdiff_t>(e));
    }
    idx.swap(i2);
    val.swap(v2);
}

// A whole partial as blocks of `window` elements, behind an 8-byte status
// (0 ok; else 1 + the failing rank). A failed sender sends the status alone.
template <class T>
std::size_t encode_partial(const partial<T>* p, std::size_t dimension, std::size_t window, const T& id,
                           wire::format f, std::int64_t status, wire_buffer& buf)
{
    if (buf.empty()) buf.resize(1); // a kept buffer is not shrunk: growing it again would zero it
    buf[0] = static_cast<std::uint64_t>(status);
    std::size_t at = 8;
    if (status != 0) return at;
    for (std::size_t lo = 0; lo < dimension; lo += window)
        at = append_block<T>(*p, nullptr, lo, std::min(window, dimension - lo), id, f, buf, at);
    return at;
}

// A whole partial's blocks, parsed in place, and how many entries they hold
// (a dense or RLE block counted as full): the form to decode or fold into.
template <class T>
struct parsed_partial {
    std::vector<wire::block_view<T>> views;
    std::size_t entries = 0;
};

template <class T>
parsed_partial<T> parse_partial(std::span<const std::byte> bytes, std::size_t dimension, std::size_t window)
{
    parsed_partial<T> b;
    std::size_t at = 0;
    for (std::size_t lo = 0; lo < dimension; lo += window) {
        b.views.push_back(wire::parse_block<T>(bytes.subspan(at), std::min(window, dimension - lo)));
        const auto& v = b.views.back();
        const bool listed = v.tag == wire::block_tag::index_value16 || v.tag == wire::block_tag::index_value32;
        b.entries += listed ? v.count : v.length;
        at += v.bytes;
    }
    if (at != bytes.size()) fail("malformed message: " + std::to_string(bytes.size() - at) + " bytes after the last block");
    return b;
}

// The parsed blocks as a partial: dense (dense blocks by memcpy) when their
// entries fill it, else index/value.
template <class T>
partial<T> decode_partial(const parsed_partial<T>& b, std::size_t dimension, std::size_t window, const T& id)
{
    partial<T> p;
    if (dense_is_smaller<T>(b.entries, dimension)) {
        p.is_dense = true;
        p.dense.resize(dimension);
        for (std::size_t k = 0; k < b.views.size(); ++k)
            wire::decode_block_into(b.views[k], id, std::span<T>(p.dense.data() + k * window, b.views[k].length));
        return p;
    }
    std::vector<std::uint64_t> idx;
    std::vector<T> val;
    idx.reserve(b.entries);
    val.reserve(b.entries);
    for (std::size_t k = 0; k < b.views.size(); ++k) append_entries(b.views[k], k * window, id, idx, val);
    p.sparse = index_value_vector<T, std::uint64_t>(dimension, idx, val);
    return p;
}

// left ⊗ right, dense once the result's index/value form would be larger.
template <class T, class Op>
partial<T> combine_partials(const partial<T>& left, const partial<T>& right, const Op& op, std::size_t dimension)
{
    partial<T> out;
    const auto run = [&](const auto& a, const auto& b) {
        out.is_dense = left.is_dense || right.is_dense ||
                       dense_is_smaller<T>(std::max(stored_entries(a), stored_entries(b)), dimension);
        if (out.is_dense) combine_into(out.dense, a, b, op);
        else combine_into(out.sparse, a, b, op);
        if (!out.is_dense && dense_is_smaller<T>(out.sparse.nnz(), dimension)) {
            convert_into(out.dense, out.sparse, op);
            out.is_dense = true;
            out.sparse = {};
        }
    };
    if (left.is_dense && right.is_dense) run(left.dense, right.dense);
    else if (left.is_dense) run(left.dense, right.sparse);
    else if (right.is_dense) run(left.sparse, right.dense);
    else run(left.sparse, right.sparse);
    return out;
}

// Sends `n` bytes and receives whatever the partner sends (probed size).
inline std::size_t exchange(MPI_Comm comm, int partner, const wire_buffer& out, std::size_t n, wire_buffer& in,
                            bool send, bool receive)
{
    MPI_Request req = MPI_REQUEST_NULL;
    if (send) MPI_Isend(out.data(), static_cast<int>(n), MPI_BYTE, partner, doubling_tag, comm, &req);
    int count = 0;
    if (receive) {
        MPI_Status st;
        MPI_Probe(partner, doubling_tag, comm, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        const std::size_t words = (static_cast<std::size_t>(count) + 7) / 8 + 1;
        if (in.size() < words) in.resize(words);
        MPI_Recv(in.data(), count, MPI_BYTE, partner, doubling_tag, comm, MPI_STATUS_IGNORE);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return static_cast<std::size_t>(count);
}

// All ranks agree on the first failing rank (or none), and its message.
inline void agree_and_throw(MPI_Comm comm, int me, const std::string& local_failure, std::int64_t heard)
{
    int mine = !local_failure.empty() ? me : heard > 0 ? static_cast<int>(heard - 1) : INT_MAX;
    int first = INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) return;
    // the failing rank's own message for everyone (that rank may have heard of another's first)
    std::string text = me == first ? local_failure : std::string();
    int len = static_cast<int>(text.size());
    MPI_Bcast(&len, 1, MPI_INT, first, comm);
    text.resize(static_cast<std::size_t>(len));
    MPI_Bcast(text.data(), len, MPI_CHAR, first, comm);
    if (!local_failure.empty() && me != first) fail(local_failure);
    fail(text.empty() ? "allreduce failed on rank " + std::to_string(first) : text);
}

inline std::string failure_text(int me, const std::string& text)
{
    const std::string what = unprefixed(text);
    return what.find("rank ") != std::string::npos ? what : "rank " + std::to_string(me) + ": " + what;
}
// The exception being handled, whatever its type (an op may `throw 42;`).
inline std::string current_failure_text(int me) { return failure_text(me, current_exception_text()); }

// A call's outcome on this rank so far: its own failure, or 1 + a failed
// rank it heard of. Ranks that failed go on taking part with empty data, so
// nobody waits; agree_and_throw settles it at the end.
struct call_status {
    explicit call_status(int r) : rank(r) {}
    int rank; // in the plan's communicator (statuses name ranks by it)
    std::string failure;
    std::int64_t heard = 0;
    bool failed() const { return !failure.empty() || heard != 0; }
    std::int64_t word() const { return !failure.empty() ? rank + 1 : heard; }
    // In a catch block: the exception being handled, of any type.
    void fail_here()
    {
        if (failure.empty()) failure = current_failure_text(rank);
    }
    void hear(std::int64_t status)
    {
        if (!heard) heard = status;
    }
};

template <class T>
std::size_t window_of(std::size_t segment_bytes)
{
    return std::max<std::size_t>(1, (segment_bytes ? segment_bytes : default_segment_bytes) / sizeof(T));
}

// Non-identity entries of any input (a dense one counted: one pass that
// vectorises, bits compared for floating point).
template <class In, class T>
std::size_t count_entries(const In& in, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    if constexpr (R::kind == repr_kind::dense && (bit_comparable_float<T> || std::is_integral_v<T>)) {
        // x | -x has its top bit set iff x != 0: branch-free, and it
        // vectorises without SSE4.1's 64-bit compare
        using B = bits_of<T>;
        const B idb = std::bit_cast<B>(id);
        B e = 0;
        for (const T& x : R::read(in)) {
            const B d = static_cast<B>(std::bit_cast<B>(x) ^ idb);
            e += static_cast<B>(static_cast<B>(d | static_cast<B>(B(0) - d)) >> (sizeof(B) * 8 - 1));
        }
        return static_cast<std::size_t>(e);
    } else if constexpr (R::kind == repr_kind::dense) {
        std::size_t e = 0;
        for (const T& x : R::read(in)) e += !same_value(x, id);
        return e;
    } else {
        return stored_entries(in);
    }
}

// Any input as a partial: dense once that is smaller.
template <class In, class Op>
partial<value_type_of<In>> partial_of(const In& in, std::size_t dimension, const Op& op)
{
    using T = value_type_of<In>;
    partial<T> p;
    if (dense_is_smaller<T>(count_entries(in, identity<T>(op)), dimension)) {
        p.is_dense = true;
        convert_into(p.dense, in, op);
    } else {
        convert_into(p.sparse, in, op);
    }
    return p;
}

// Folds parsed blocks (a whole partial) into the dense accumulator in
// place: theirs on the left or on the right.
template <class T, class Op>
void fold_into_dense(const parsed_partial<T>& b, std::vector<T>& acc, std::size_t window, const T& id, const Op& op,
                     bool theirs_left)
{
    for (std::size_t k = 0; k < b.views.size(); ++k) {
        const auto& v = b.views[k];
        T* a = acc.data() + k * window;
        if (v.tag == wire::block_tag::dense) { // absent on one side: the other's value, bit for bit
            fold_dense(a, v.values, v.length, theirs_left, op, id);
            continue;
        }
        wire::visit_block(v, id, [&](auto r) {
            for (; !r.done(); r.next()) {
                T& x = a[r.index()];
                x = fold_onto(x, r.value(), theirs_left, op, id); // a block's entries are never the identity
            }
        });
    }
}

// Message buffers a plan keeps between calls (no page faults per call).
struct exchange_buffers {
    wire_buffer send, receive;
    std::vector<wire_buffer> pieces; // grouped's updating: one per member
};

// Recursive doubling over pc of the partials `acc` (dimension entries each);
// returns the whole reduction. A failed rank (st) exchanges status words only.
template <class T, class Op>
partial<T> recursive_doubling(MPI_Comm pc, partial<T> acc, std::size_t dimension, const Op& op, wire::format fmt,
                              std::size_t window, report& rep, call_status& st, exchange_buffers& buffers)
{
    if constexpr (!rle_value<T>)
        if (fmt == wire::rle) fail("the rle wire format needs float or double values");
    int me = 0, P = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &P);
    const T id = identity<T>(op);
    wire_buffer &sendbuf = buffers.send, &recvbuf = buffers.receive;
    // One step with `partner`: send ours (if send), receive theirs (if
    // receive) and fold it in on the side its ranks' order says, or take it.
    enum class fold { theirs_left, theirs_right, replace };
    const auto step = [&](int partner, bool send, bool receive, fold how) {
        std::size_t n = 0;
        if (send) {
            n = encode_partial(st.failed() ? nullptr : &acc, dimension, window, id, fmt, st.word(), sendbuf);
            rep.bytes_sent += n;
            ++rep.messages_sent;
        }
        const std::size_t got = exchange(pc, partner, sendbuf, n, recvbuf, send, receive);
        if (!receive) return;
        rep.bytes_received += got;
        try {
            if (got < 8) fail("malformed message: " + std::to_string(got) + " bytes");
            const auto their_status = static_cast<std::int64_t>(recvbuf[0]);
            if (their_status != 0) return st.hear(their_status);
            if (st.failed()) return;
            const auto blocks = parse_partial<T>(bytes_of(recvbuf, got).subspan(8), dimension, window);
            if (acc.is_dense && how != fold::replace) // in place: no new dense array per step
                return fold_into_dense(blocks, acc.dense, window, id, op, how == fold::theirs_left);
            auto theirs = decode_partial(blocks, dimension, window, id);
            acc = how == fold::replace      ? std::move(theirs)
                  : how == fold::theirs_left ? combine_partials(theirs, acc, op, dimension)
                                             : combine_partials(acc, theirs, op, dimension);
        } catch (...) {
            st.fail_here();
        }
    };

    const int pow2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(P)));
    const int extra = P - pow2;
    // fold: 2i+1 -> 2i for i < extra; virtual rank vr over pow2 ranks keeps the order
    int vr = -1;
    if (me < 2 * extra) {
        if (me % 2) step(me - 1, true, false, fold::replace);
        else {
            step(me + 1, false, true, fold::theirs_right);
            vr = me / 2;
        }
    } else {
        vr = me - extra;
    }
    const auto real = [&](int v) { return v < extra ? 2 * v : v + extra; };
    if (vr >= 0)
        for (int mask = 1; mask < pow2; mask <<= 1) {
            const int pv = vr ^ mask;
            step(real(pv), true, true, pv < vr ? fold::theirs_left : fold::theirs_right);
        }
    // send the result back to the folded ranks
    if (me < 2 * extra) {
        if (me % 2) step(me - 1, false, true, fold::replace);
        else step(me + 1, true, false, fold::replace);
    }
    return acc;
}

// ---- the model automatic chooses with (doc/allreduce.md) ----

struct allreduce_estimate {
    double recursive_doubling, reduce_broadcast, split_allgather;
};
// P ranks, `entries` per rank (mean), dimension C, values of v bytes.
inline allreduce_estimate estimate_allreduce(int ranks, double entries, double dimension, double v,
                                             double segment_bytes, const cost_model& m)
{
    const auto merged = [&](double k) { return std::min(dimension, merged_entries(k, entries, dimension, m.merge)); };
    const auto bytes = [&](double e) { return std::min(e * (m.index_bytes + v), dimension * v) + m.header_bytes; };
    const auto step = [&](double k) { // send a partial of k inputs, merge two
        const double e = merged(k);
        return m.alpha + m.beta * bytes(e) + (e * (m.index_bytes + v) < dimension * v ? m.gamma * 2 * e
                                                                                     : m.gamma_dense * dimension);
    };
    int levels = 0;
    while ((1 << (levels + 1)) <= ranks) ++levels;
    const bool extra = (1 << levels) != ranks;
    double rd = 0, binomial = 0;
    for (int k = 0; k < levels; ++k) rd += step(std::ldexp(extra ? 2.0 : 1.0, k));
    if (extra) rd += step(1) + m.alpha + m.beta * bytes(merged(ranks)); // fold in, send back
    // reduce: a binomial tree's rounds, or a pipeline at ~ the result's bytes once per link
    int rounds = 0;
    while ((1 << rounds) < ranks) ++rounds;
    for (int k = 0; k < rounds; ++k) binomial += step(std::ldexp(1.0, k));
    const double result = bytes(merged(ranks));
    const double segments = std::max(1.0, std::ceil(result / segment_bytes));
    const double per_segment = m.alpha + m.beta * std::min(result, segment_bytes);
    const double pipelined = (segments + 2 * rounds) * per_segment + m.gamma_dense * dimension;
    const double broadcast = (segments + rounds - 1) * per_segment;
    // split-allgather: every rank sends (P-1)/P of its entries directly
    // (one message of wire blocks per peer), folds P pieces (pairwise while
    // sparse: log2 P passes over its share; in place once dense), then a
    // ring allgather of the reduced ranges; plus the sizes (an alltoall, an allgather).
    const double P = ranks, share = (P - 1) / P, log_p = std::log2(std::max(P, 1.0));
    const double scatter = (P - 1) * m.alpha + m.beta * bytes(entries) * share +
                           (entries * (m.index_bytes + v) < dimension * v ? m.gamma * entries * log_p
                                                                         : m.gamma_dense * dimension);
    const double u = merged(ranks);
    const double gather = (P - 1) * m.alpha + m.beta * bytes(u) * share +
                          (u * (m.index_bytes + v) < dimension * v ? m.gamma * u : m.gamma_dense * dimension);
    const double counts = 2 * log_p * m.alpha;
    return {rd, std::min(binomial, pipelined) + broadcast, ranks > 1 ? scatter + gather + counts : 0};
}

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

// ---- grouped (seed 002) and split-allgather ----

template <class P>
inline constexpr bool is_grouped = std::same_as<P, policy::grouped> || std::same_as<P, policy::split_allgather>;

// The mesh a grouped plan sees (policy::grouped's comment).
inline mesh_shape mesh_of(MPI_Comm comm, int rows, int cols)
{
    int P = 1, topo = MPI_UNDEFINED;
    MPI_Comm_size(comm, &P);
    MPI_Topo_test(comm, &topo);
    if (topo == MPI_CART && rows == 0 && cols == 0) {
        int nd = 0;
        MPI_Cartdim_get(comm, &nd);
        if (nd < 1 || nd > 2)
            fail("grouped: the communicator is a " + std::to_string(nd) + "-dimensional cartesian one; 1 or 2 needed");
        int dims[2] = {1, 1}, periods[2] = {1, 1}, coords[2] = {0, 0};
        MPI_Cart_get(comm, nd, dims + (2 - nd), periods + (2 - nd), coords + (2 - nd));
        return {dims[0], dims[1], periods[0] && periods[1]};
    }
    if (rows || cols) {
        if (rows < 1 || cols < 1 || static_cast<long long>(rows) * cols != P)
            fail("grouped: a " + std::to_string(rows) + "x" + std::to_string(cols) + " mesh for " + std::to_string(P) +
                 " ranks");
        return {rows, cols, false};
    }
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    return {dims[0], dims[1], false};
}

// A grouped plan's communicators: `group` (its members, in member order)
// and `across` (the members of the same position in every group, in group
// order), and the block ranges of the members.
struct group_layout {
    group_shape shape;
    boost::mpi::communicator group, across;
    MPI_Comm group_pc = MPI_COMM_NULL, across_pc = MPI_COMM_NULL;
    std::vector<std::size_t> ranges;
    int member = 0;
};

inline group_layout make_group_layout(MPI_Comm pc, const mesh_shape& m, const group_shape& g, std::size_t dimension)
{
    int me = 0;
    MPI_Comm_rank(pc, &me);
    const int row = me / m.cols, col = me % m.cols;
    const int gid = (row / g.rows) * (m.cols / g.cols) + col / g.cols;
    group_layout l;
    l.shape = g;
    l.member = (row % g.rows) * g.cols + col % g.cols;
    MPI_Comm group = MPI_COMM_NULL, across = MPI_COMM_NULL;
    MPI_Comm_split(pc, gid, l.member, &group);
    MPI_Comm_split(pc, l.member, gid, &across);
    l.group = boost::mpi::communicator(group, boost::mpi::comm_take_ownership);
    l.across = boost::mpi::communicator(across, boost::mpi::comm_take_ownership);
    l.group_pc = group; // new communicators: nobody else's messages on them
    l.across_pc = across;
    l.ranges = block_ranges(dimension, g.size());
    return l;
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

    const std::size_t len = ranges[me + 1] - ranges[me];
    partial<T> acc;
    acc.sparse = index_value_vector<T, std::uint64_t>(len);
    try {
        // statuses first; each piece parsed once, its entries say dense or sparse
        std::vector<parsed_partial<T>> pieces(n);
        std::size_t entries = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const auto bytes = bytes_of(in, displ[k], recv[k]);
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

// Mean non-identity entries per rank over pc (dense inputs counted), and
// whether any rank failed to read its tuning (`bad`, also reported).
template <class In, class T>
double mean_entries(MPI_Comm pc, const In& in, const T& id, bool bad = false, bool* any_bad = nullptr)
{
    double mine[2] = {static_cast<double>(count_entries(in, id)), bad ? 1.0 : 0.0};
    double sum[2] = {0, 0};
    MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, pc);
    if (any_bad) *any_bad = sum[1] > 0;
    int P = 1;
    MPI_Comm_size(pc, &P);
    return sum[0] / P;
}

} // namespace detail

template <class P>
concept allreduce_policy = std::same_as<P, policy::recursive_doubling> || std::same_as<P, policy::automatic> ||
                           detail::is_grouped<P> ||
                           requires(const P& p) {
                               { p.tree } -> reduce_policy;
                               { p.broadcast_segment_bytes } -> std::convertible_to<std::size_t>;
                           };

template <allreduce_policy Policy = policy::automatic>
class allreduce_plan {
    using tree_policy = typename detail::tree_policy_of<Policy>::type;
    static constexpr bool has_reduce = !std::same_as<Policy, policy::recursive_doubling> && !detail::is_grouped<Policy>;

public:
    allreduce_plan(const boost::mpi::communicator& comm, std::size_t dimension, Policy policy = {})
        : comm_(comm), private_(checked_private_comm(comm, policy)), dimension_(dimension), policy_(policy)
    {
        // The ranks agree on the dimension once; a call's vector is then
        // checked against the plan's locally.
        const long long mine[2] = {static_cast<long long>(dimension), -static_cast<long long>(dimension)};
        long long all[2];
        MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MAX, private_);
        if (all[0] != -all[1])
            detail::fail("dimension mismatch: the ranks' dimensions range from " + std::to_string(-all[1]) + " to " +
                         std::to_string(all[0]));
        if constexpr (has_reduce) {
            if constexpr (std::same_as<Policy, policy::automatic>) reduce_.emplace(comm, 0, dimension, policy_);
            else reduce_.emplace(comm, 0, dimension, policy_.tree);
            reduce_->use_windows_only(); // its broadcast pairs with the windowed stream (whole messages: not yet)
        }
        if constexpr (std::same_as<Policy, policy::split_allgather>) {
            mesh_ = {1, comm.size(), false};
            layout_ = std::make_shared<detail::group_layout>(
                detail::make_group_layout(private_, mesh_, {1, comm.size()}, dimension_));
        }
        if constexpr (std::same_as<Policy, policy::grouped>) {
            mesh_ = detail::mesh_of(MPI_Comm(comm), policy_.mesh_rows, policy_.mesh_cols);
            if (policy_.group_rows || policy_.group_cols) {
                const group_shape g{policy_.group_rows, policy_.group_cols};
                if (const auto why = check_group_shape(g, mesh_); !why.empty()) detail::fail(why);
                layout_ = std::make_shared<detail::group_layout>(detail::make_group_layout(private_, mesh_, g, dimension_));
            }
        }
    }

    // grouped and split_allgather: the mesh and the groups (none until the
    // first call when the model chooses them).
    const mesh_shape& mesh() const { return mesh_; }
    std::optional<group_shape> groups() const
    {
        return layout_ ? std::optional<group_shape>(layout_->shape) : std::nullopt;
    }

    std::size_t dimension() const { return dimension_; }
    const Policy& policy() const { return policy_; }

    template <representation In, representation Out, class Op>
        requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>> &&
                 wire::wire_value<value_type_of<In>>
    report allreduce(const In& in, Out&& out, const Op& op)
    {
        if constexpr (std::same_as<Policy, policy::recursive_doubling>) {
            return doubling(in, out, op, policy_.wire, policy_.segment_bytes);
        } else if constexpr (std::same_as<Policy, policy::automatic>) {
            using T = value_type_of<In>;
            // mean entries, for the model (dimension mismatches are caught by either algorithm)
            const double sum = detail::mean_entries(private_, in, identity<T>(op)) * comm_.size();
            const tuning& t = policy_.tuned ? *policy_.tuned : current_tuning(policy_.tuning_file);
            const std::size_t seg = policy_.segment_bytes ? policy_.segment_bytes : default_segment_bytes;
            const auto est = detail::estimate_allreduce(comm_.size(), sum / comm_.size(), static_cast<double>(dimension_),
                                                        sizeof(T), static_cast<double>(seg), t.machine);
            report r;
            if (est.recursive_doubling <= std::min(est.reduce_broadcast, est.split_allgather))
                r = doubling(in, out, op, policy_.wire, policy_.segment_bytes);
            else if (est.split_allgather < est.reduce_broadcast)
                r = split_plan().allreduce(in, out, op);
            else
                r = reduce_then_broadcast(in, out, op, 0);
            r.algorithm = "automatic: " + r.algorithm;
            return r;
        } else if constexpr (detail::is_grouped<Policy>) {
            return grouped_call(in, out, op);
        } else {
            return reduce_then_broadcast(in, out, op, policy_.broadcast_segment_bytes);
        }
    }

private:
    // Before anything is sent, on every rank alike: an intracommunicator, a
    // valid policy (segment sizes, finite cost models); then the library's
    // private duplicate of comm.
    static MPI_Comm checked_private_comm(const boost::mpi::communicator& comm, const Policy& policy)
    {
        detail::require_intracommunicator(MPI_Comm(comm), "allreduce");
        if constexpr (requires { validate(policy); }) validate(policy);
        return detail::private_comm(MPI_Comm(comm));
    }

    // ---- reduce to 0, then a pipelined binomial broadcast ----
    template <class In, class Out, class Op>
    report reduce_then_broadcast(const In& in, Out& out, const Op& op, std::size_t broadcast_segment)
    {
        using T = value_type_of<In>;
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        const int me = comm_.rank(), P = comm_.size();
        const T id = identity<T>(op);
        report rep;
        std::string failure;
        try {
            rep = reduce_->reduce(in, out, op);
        } catch (...) {
            failure = detail::current_failure_text(me);
        }
        const tree_policy& tp = reduce_->policy();
        const wire::format fmt = tp.wire;
        std::size_t seg_bytes = broadcast_segment ? broadcast_segment : tp.segment_bytes;
        if (!seg_bytes) seg_bytes = default_segment_bytes;
        const std::size_t window = std::max<std::size_t>(1, seg_bytes / sizeof(T));

        // One broadcast tree from 0 (binomial), or two (two_tree) that take
        // alternate windows: every rank then forwards about the result once.
        const auto streams = detail::broadcast_streams(me, P, std::same_as<tree_policy, policy::two_tree>);
        const int parent = streams[0].parent;
        const std::vector<int>& children = streams[0].children;
        std::vector<MPI_Request> reqs;

        // the outcome first (down the first tree): 0, or the root's error text
        std::string status;
        if (me == 0) {
            status = failure.empty() ? std::string(1, '\0') : "\x01" + failure;
        } else {
            MPI_Status st;
            int n = 0;
            MPI_Probe(parent, detail::broadcast_status_tag, private_, &st);
            MPI_Get_count(&st, MPI_CHAR, &n);
            status.resize(static_cast<std::size_t>(n));
            MPI_Recv(status.data(), n, MPI_CHAR, parent, detail::broadcast_status_tag, private_, MPI_STATUS_IGNORE);
            rep.bytes_received += static_cast<std::size_t>(n);
        }
        for (int c : children) {
            reqs.emplace_back();
            MPI_Isend(status.data(), static_cast<int>(status.size()), MPI_CHAR, c, detail::broadcast_status_tag,
                      private_, &reqs.back());
            rep.bytes_sent += status.size();
            ++rep.messages_sent;
        }
        if (status.empty() || status[0] != '\0') {
            MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
            detail::fail(!failure.empty() ? failure : status.empty() ? "allreduce: empty status" : status.substr(1));
        }

        // then the segments, each forwarded on arrival
        detail::partial<T> root_result; // a sparse result, as index/value
        if constexpr (RO::kind != repr_kind::dense)
            if (me == 0) convert_into(root_result.sparse, out, op);
        const T* root_dense = nullptr; // a dense result is encoded straight from out
        if constexpr (RO::kind == repr_kind::dense)
            if (me == 0) root_dense = RO::output(out, dimension_).data();
        T* dense_out = nullptr;
        if constexpr (RO::kind == repr_kind::dense)
            if (me != 0) dense_out = RO::output(out, dimension_).data();
        std::vector<std::uint64_t> idx;
        std::vector<T> val;
        // A message: a word with its number of blocks, then blocks of one
        // window each (stream s has windows s, s + S, ...), cut once it
        // reaches the segment size (a sparse result travels in few messages,
        // a dense one one window per message). Messages go (and are taken) in
        // the order of their first window, so no rank waits on a later one.
        const std::size_t windows = (dimension_ + window - 1) / window, S = streams.size();
        std::vector<std::size_t> next(S);
        std::vector<std::pair<std::size_t, std::size_t>> spans(windows); // where each window's entries went
        for (std::size_t k = 0; k < S; ++k) next[k] = k;
        std::vector<detail::wire_buffer> messages;
        std::string error_text;
        for (;;) {
            const std::size_t k = static_cast<std::size_t>(std::min_element(next.begin(), next.end()) - next.begin());
            if (next[k] >= windows) break;
            const detail::broadcast_stream& sk = streams[k];
            const int tag = detail::broadcast_block_tag + static_cast<int>(k);
            const std::size_t left = (windows - next[k] + S - 1) / S; // windows still to come on this stream
            detail::wire_buffer buf(1);
            std::size_t n = 8, blocks = 0;
            if (me == 0) {
                do {
                    const std::size_t lo = (next[k] + blocks * S) * window;
                    n = detail::append_block(root_result, root_dense, lo, std::min(window, dimension_ - lo), id, fmt,
                                             buf, n);
                    ++blocks;
                } while (blocks < left && n < seg_bytes);
                buf[0] = blocks;
            } else {
                MPI_Status st;
                int count = 0;
                MPI_Probe(sk.parent, tag, private_, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                n = static_cast<std::size_t>(count);
                buf.resize(n / 8 + 1);
                MPI_Recv(buf.data(), count, MPI_BYTE, sk.parent, tag, private_, MPI_STATUS_IGNORE);
                rep.bytes_received += n;
                blocks = n >= 8 ? static_cast<std::size_t>(buf[0]) : 0;
                if (blocks == 0 || blocks > left) { // cannot be from the root: stop the stream here
                    error_text = "rank " + std::to_string(me) + ": malformed broadcast message";
                    blocks = left;
                }
            }
            messages.push_back(std::move(buf));
            for (int c : sk.children) {
                reqs.emplace_back();
                MPI_Isend(messages.back().data(), static_cast<int>(n), MPI_BYTE, c, tag, private_, &reqs.back());
                rep.bytes_sent += n;
                ++rep.messages_sent;
            }
            const std::size_t first = next[k];
            next[k] += blocks * S;
            if (me == 0 || !error_text.empty()) continue;
            try { // decoded after forwarding, so the subtree is not held up
                const auto bytes = detail::bytes_of(messages.back(), n);
                std::size_t at = 8;
                for (std::size_t w = first; w < next[k]; w += S) {
                    spans[w].first = idx.size();
                    at = detail::decode_blocks(bytes, at, 0, w * window, std::min((w + 1) * window, dimension_), window,
                                               id, dense_out, idx, val);
                    spans[w].second = idx.size();
                }
                if (at != n) detail::fail("malformed broadcast message: bytes after its blocks");
            } catch (...) {
                error_text = detail::current_failure_text(me); // this rank's own: the data were checked by the root
            }
        }
        if (S > 1 && !dense_out && me != 0 && error_text.empty()) // entries came stream by stream: window order
            detail::window_order(idx, val, spans);
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        if (!error_text.empty()) detail::fail(error_text);
        if (!failure.empty()) detail::fail(failure); // reduce reports every failure to the root: not expected here
        if constexpr (RO::kind != repr_kind::dense)
            if (me != 0) convert_into(out, index_value_vector<T, std::uint64_t>(dimension_, idx, val), op);
        rep.algorithm = "reduce_broadcast(" + rep.algorithm + (S > 1 ? ", two-tree" : ", binomial") +
                        " broadcast, segment=" +
                        std::to_string(window * sizeof(T)) + ")";
        return rep;
    }

    // A call's vector against the plan (the ranks agreed on the plan's dimension).
    template <class In>
    void check_dimension(const In& in, int me) const
    {
        if (sparse_reduce::dimension(in) != dimension_)
            detail::fail("dimension mismatch: rank " + std::to_string(me) + " has dimension " +
                         std::to_string(sparse_reduce::dimension(in)) + ", the plan has " + std::to_string(dimension_));
    }

    // ---- recursive doubling ----
    template <class In, class Out, class Op>
    report doubling(const In& in, Out& out, const Op& op, wire::format fmt, std::size_t segment_bytes)
    {
        using T = value_type_of<In>;
        const int me = comm_.rank();
        report rep;
        detail::call_status st{me};
        detail::partial<T> acc;
        try {
            check_dimension(in, me);
            acc = detail::partial_of(in, dimension_, op);
        } catch (...) {
            st.fail_here();
        }
        const std::size_t window = detail::window_of<T>(segment_bytes);
        acc = detail::recursive_doubling(private_, std::move(acc), dimension_, op, fmt, window, rep, st, *buffers_);
        detail::agree_and_throw(private_, me, st.failure, st.heard);
        if (acc.is_dense) convert_into(out, acc.dense, op);
        else convert_into(out, acc.sparse, op);
        rep.algorithm = std::string("recursive_doubling(wire=") + wire::to_string(fmt) +
                        ", segment=" + std::to_string(window * sizeof(T)) + ")";
        return rep;
    }

    // automatic's split-allgather, made on first use
    allreduce_plan<policy::split_allgather>& split_plan()
    {
        if (!split_)
            split_ = std::make_shared<allreduce_plan<policy::split_allgather>>(
                comm_, dimension_, policy::split_allgather{.wire = policy_.wire, .segment_bytes = policy_.segment_bytes});
        return *split_;
    }

    // ---- grouped: updating, integration, broadcasting ----
    template <class In, class Out, class Op>
    report grouped_call(const In& in, Out& out, const Op& op)
    {
        using T = value_type_of<In>;
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        const int me = comm_.rank();
        const T id = identity<T>(op);
        constexpr bool commutative = is_commutative_v<Op, T>;
        if constexpr (!rle_value<T>)
            if (policy_.wire == wire::rle) detail::fail("the rle wire format needs float or double values");
        if constexpr (std::same_as<Policy, policy::grouped>)
            if (!layout_) choose_groups<T>(in, id, commutative);
        const detail::group_layout& g = *layout_;
        if (!commutative && !contiguous_in_rank_order(g.shape, mesh_)) // the same on every rank
            detail::fail("grouped: groups of " + to_string(g.shape) + " on a " + to_string(mesh_) +
                         " mesh are not runs of consecutive ranks, which a non-commutative operation needs "
                         "(use 1 x b groups or whole rows)");
        const std::size_t window = detail::window_of<T>(policy_.segment_bytes);
        const auto m = static_cast<std::size_t>(g.member);
        const std::size_t lo = g.ranges[m], len = g.ranges[m + 1] - lo;
        report rep;
        detail::call_status st{me};

        // updating: a failed rank contributes nothing and goes on
        using RI = repr_traits<std::remove_cvref_t<In>>;
        detail::partial<T> mine;
        const T* dense_in = nullptr; // a dense input is encoded from the caller's array
        try {
            check_dimension(in, me);
            // groups of one: no updating or broadcasting, the input is the replica
            if constexpr (RI::kind == repr_kind::dense)
                if (g.shape.size() > 1) dense_in = RI::read(in).data();
            if (!dense_in) mine = detail::partial_of(in, dimension_, op);
        } catch (...) {
            st.fail_here();
        }
        detail::partial<T> acc =
            g.shape.size() == 1 ? std::move(mine)
                                : detail::scatter_ranges(g.group_pc, mine, dense_in, g.ranges, window, id, policy_.wire,
                                                         op, rep, st, *buffers_);
        // integration across the groups, in group order
        if (g.across.size() > 1)
            acc = detail::recursive_doubling(g.across_pc, std::move(acc), len, op, policy_.wire, window, rep, st,
                                             *buffers_);
        // broadcasting
        T* dense_out = nullptr;
        if constexpr (RO::kind == repr_kind::dense) dense_out = RO::output(out, dimension_).data();
        std::vector<std::uint64_t> idx;
        std::vector<T> val;
        if (g.shape.size() > 1)
            detail::allgather_ranges(g.group_pc, acc, g.ranges, window, id, policy_.wire, dense_out, idx, val, rep, st,
                                     *buffers_);
        detail::agree_and_throw(private_, me, st.failure, st.heard);
        if (g.shape.size() == 1) {
            if (acc.is_dense) convert_into(out, acc.dense, op);
            else convert_into(out, acc.sparse, op);
        } else if constexpr (RO::kind != repr_kind::dense) {
            convert_into(out, index_value_vector<T, std::uint64_t>(dimension_, idx, val), op);
        }
        const std::string params = "wire=" + std::string(wire::to_string(policy_.wire)) +
                                   ", segment=" + std::to_string(window * sizeof(T)) + ")";
        rep.algorithm = std::same_as<Policy, policy::split_allgather>
                            ? "split_allgather(" + params
                            : "grouped(mesh " + to_string(mesh_) + ", groups " + to_string(g.shape) + ", " + params;
        return rep;
    }

    // The model's group shape (policy::grouped without one), from this
    // call's mean density; collective, once per plan.
    template <class T, class In>
    void choose_groups(const In& in, const T& id, bool commutative)
    {
        std::string tuning_error;
        const tuning* t = policy_.tuned ? &*policy_.tuned : nullptr;
        try {
            if (!t) t = &current_tuning(policy_.tuning_file);
        } catch (const std::exception& e) {
            tuning_error = detail::unprefixed(e.what());
        }
        bool any_bad = false;
        const double mean = detail::mean_entries(private_, in, id, !tuning_error.empty(), &any_bad);
        if (any_bad)
            detail::fail("grouped: the tuning could not be read on some rank" +
                         (tuning_error.empty() ? std::string() : ": " + tuning_error));
        const double v = sizeof(T);
        replication::params p;
        p.N_a = dimension_ ? mean / static_cast<double>(dimension_) : 0;
        p.T_x = (t->machine.index_bytes + v) / v;     // a sparse entry against a dense datum
        p.T_m = t->machine.gamma / (t->machine.beta * v); // one merge against one datum's transfer
        const group_shape g = choose_group_shape(mesh_, policy_.bidirectional_links, p, !commutative);
        layout_ = std::make_shared<detail::group_layout>(detail::make_group_layout(private_, mesh_, g, dimension_));
    }

    boost::mpi::communicator comm_;
    MPI_Comm private_;
    std::size_t dimension_;
    Policy policy_;
    std::optional<reduce_plan<tree_policy>> reduce_;
    mesh_shape mesh_{};
    std::shared_ptr<detail::group_layout> layout_; // shared by copies of a plan
    std::shared_ptr<allreduce_plan<policy::split_allgather>> split_; // automatic's, made on first use
    std::shared_ptr<detail::exchange_buffers> buffers_ = std::make_shared<detail::exchange_buffers>();
};

template <allreduce_policy Policy = policy::automatic>
allreduce_plan<Policy> make_allreduce_plan(const boost::mpi::communicator& comm, std::size_t dimension,
                                           Policy policy = {})
{
    return allreduce_plan<Policy>(comm, dimension, policy);
}

template <representation In, representation Out, class Op, allreduce_policy Policy = policy::automatic>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
report allreduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, Policy policy = {})
{
    return make_allreduce_plan(comm, dimension(in), policy).allreduce(in, std::forward<Out>(out), op);
}

} // namespace sparse_reduce
