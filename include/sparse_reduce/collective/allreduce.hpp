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
//       then a pipelined binomial broadcast of the result: wire blocks of one
//       segment of the index space each, packed into messages of about the
//       segment size, each forwarded as soon as it arrives.
//   policy::recursive_doubling{}  log2 P exchanges of whole partial results
//       with rank ^ 2^k; a partial is index/value until that outgrows dense,
//       then dense; on the wire, per block, whichever form is smaller.
//       P not a power of two: ranks 2i+1 < 2r (r = P - 2^floor(log2 P)) fold
//       into 2i first and get the result back last.
//   policy::automatic (default)  one of the two by the α-β-γ model, from the
//       mean entry count (one small allreduce per call).
//
// Non-commutative operations keep rank order: the reduce does; recursive
// doubling always puts the lower ranks' partial on the left.
//
// Errors end in sparse_reduce::error on EVERY rank (not only the root and
// the detecting rank, as in reduce): reduce_broadcast sends the root's
// outcome down the broadcast tree before any data; recursive doubling
// carries a status in every message (a failed rank goes on exchanging empty
// messages) and ends with one allreduce of the status, then the failing
// rank's message is broadcast.

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../error.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/convert.hpp"
#include "../kernel/entry_stream.hpp"
#include "../model/cost.hpp"
#include "../model/merged_size.hpp"
#include "../policy.hpp"
#include "../repr/index_value_vector.hpp"
#include "../report.hpp"
#include "../select/tuning.hpp"
#include "../wire/block.hpp"
#include "reduce.hpp"

namespace sparse_reduce {
namespace detail {

inline constexpr int broadcast_status_tag = 61; // root -> children: outcome of the reduce
inline constexpr int broadcast_block_tag = 62;  // root -> children: one segment
inline constexpr int doubling_tag = 63;         // recursive doubling and its fold

// 8-aligned message storage (wire blocks are read in place).
using wire_buffer = std::vector<std::uint64_t>;
inline std::span<const std::byte> bytes_of(const wire_buffer& b, std::size_t n)
{
    return {reinterpret_cast<const std::byte*>(b.data()), n};
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

// A whole partial as blocks of `window` elements, behind an 8-byte status
// (0 ok; else 1 + the failing rank). A failed sender sends the status alone.
template <class T>
std::size_t encode_partial(const partial<T>* p, std::size_t dimension, std::size_t window, const T& id,
                           wire::format f, std::int64_t status, wire_buffer& buf)
{
    buf.resize(1);
    buf[0] = static_cast<std::uint64_t>(status);
    std::size_t at = 8;
    if (status != 0) return at;
    for (std::size_t lo = 0; lo < dimension; lo += window)
        at = append_block<T>(*p, nullptr, lo, std::min(window, dimension - lo), id, f, buf, at);
    return at;
}

template <class T>
partial<T> decode_partial(std::span<const std::byte> bytes, std::size_t dimension, std::size_t window, const T& id)
{
    // parse every block first: their forms say whether the result is dense
    std::vector<wire::block_view<T>> views;
    std::size_t at = 0, entries = 0;
    for (std::size_t lo = 0; lo < dimension; lo += window) {
        views.push_back(wire::parse_block<T>(bytes.subspan(at), std::min(window, dimension - lo)));
        const auto& v = views.back();
        const bool listed = v.tag == wire::block_tag::index_value16 || v.tag == wire::block_tag::index_value32;
        entries += listed ? v.count : v.length; // a dense or RLE block: counted as full
        at += v.bytes;
    }
    if (at != bytes.size()) fail("malformed message: " + std::to_string(bytes.size() - at) + " bytes after the last block");
    partial<T> p;
    if (dense_is_smaller<T>(entries, dimension)) { // decoded in place, dense blocks by memcpy
        p.is_dense = true;
        p.dense.resize(dimension);
        for (std::size_t k = 0; k < views.size(); ++k)
            wire::decode_block_into(views[k], id, std::span<T>(p.dense.data() + k * window, views[k].length));
        return p;
    }
    std::vector<std::uint64_t> idx;
    std::vector<T> val;
    idx.reserve(entries);
    val.reserve(entries);
    for (std::size_t k = 0; k < views.size(); ++k) append_entries(views[k], k * window, id, idx, val);
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
        in.resize((static_cast<std::size_t>(count) + 7) / 8 + 1);
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

inline std::string failure_text(int me, const std::exception& e)
{
    const std::string what = e.what();
    return what.find("rank ") != std::string::npos ? what : "rank " + std::to_string(me) + ": " + what;
}

// ---- the model automatic chooses with (doc/allreduce.md) ----

struct allreduce_estimate {
    double recursive_doubling, reduce_broadcast;
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
    return {rd, std::min(binomial, pipelined) + broadcast};
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

} // namespace detail

template <class P>
concept allreduce_policy = std::same_as<P, policy::recursive_doubling> || std::same_as<P, policy::automatic> ||
                           requires(const P& p) {
                               { p.tree } -> reduce_policy;
                               { p.broadcast_segment_bytes } -> std::convertible_to<std::size_t>;
                           };

template <allreduce_policy Policy = policy::automatic>
class allreduce_plan {
    using tree_policy = typename detail::tree_policy_of<Policy>::type;
    static constexpr bool has_reduce = !std::same_as<Policy, policy::recursive_doubling>;

public:
    allreduce_plan(const boost::mpi::communicator& comm, std::size_t dimension, Policy policy = {})
        : comm_(comm), private_(detail::private_comm(MPI_Comm(comm))), dimension_(dimension), policy_(policy)
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
        }
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
            double mine = static_cast<double>(stored_entries(in));
            if constexpr (repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense) // the drop-in: count
                if (sparse_reduce::dimension(in) == dimension_)
                    mine = detail::count_locally(in, dimension_, identity<T>(op), true).stats[0];
            double sum = 0;
            MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, private_);
            const tuning& t = policy_.tuned ? *policy_.tuned : current_tuning(policy_.tuning_file);
            const std::size_t seg = policy_.segment_bytes ? policy_.segment_bytes : default_segment_bytes;
            const auto est = detail::estimate_allreduce(comm_.size(), sum / comm_.size(), static_cast<double>(dimension_),
                                                        sizeof(T), static_cast<double>(seg), t.machine);
            report r = est.recursive_doubling <= est.reduce_broadcast
                           ? doubling(in, out, op, policy_.wire, policy_.segment_bytes)
                           : reduce_then_broadcast(in, out, op, 0);
            r.algorithm = "automatic: " + r.algorithm;
            return r;
        } else {
            return reduce_then_broadcast(in, out, op, policy_.broadcast_segment_bytes);
        }
    }

private:
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
        } catch (const std::exception& e) {
            failure = detail::failure_text(me, e);
        }
        const tree_policy& tp = reduce_->policy();
        const wire::format fmt = tp.wire;
        std::size_t seg_bytes = broadcast_segment ? broadcast_segment : tp.segment_bytes;
        if (!seg_bytes) seg_bytes = default_segment_bytes;
        const std::size_t window = std::max<std::size_t>(1, seg_bytes / sizeof(T));

        // binomial tree from 0: parent clears the lowest set bit, children add bits below it
        const int low = me == 0 ? P : (me & -me);
        const int parent = me == 0 ? -1 : me - low;
        std::vector<int> children;
        for (int b = 1; b < low && me + b < P; b <<= 1) children.push_back(me + b);
        std::vector<MPI_Request> reqs;

        // the outcome first: 0, or the root's error text
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
        // window each, cut once it reaches the segment size (a sparse result
        // travels in few messages, a dense one one window per message).
        const std::size_t windows = (dimension_ + window - 1) / window;
        std::vector<detail::wire_buffer> messages;
        std::string error_text;
        for (std::size_t next = 0; next < windows;) {
            detail::wire_buffer buf(1);
            std::size_t n = 8, blocks = 0;
            if (me == 0) {
                do {
                    const std::size_t lo = next * window;
                    n = detail::append_block(root_result, root_dense, lo, std::min(window, dimension_ - lo), id, fmt,
                                             buf, n);
                    ++next;
                    ++blocks;
                } while (next < windows && n < seg_bytes);
                buf[0] = blocks;
            } else {
                MPI_Status st;
                int count = 0;
                MPI_Probe(parent, detail::broadcast_block_tag, private_, &st);
                MPI_Get_count(&st, MPI_BYTE, &count);
                n = static_cast<std::size_t>(count);
                buf.resize(n / 8 + 1);
                MPI_Recv(buf.data(), count, MPI_BYTE, parent, detail::broadcast_block_tag, private_, MPI_STATUS_IGNORE);
                rep.bytes_received += n;
                blocks = n >= 8 ? static_cast<std::size_t>(buf[0]) : 0;
                if (blocks == 0 || blocks > windows - next) { // cannot be from the root: stop the stream here
                    error_text = "rank " + std::to_string(me) + ": malformed broadcast message";
                    blocks = windows - next;
                }
            }
            messages.push_back(std::move(buf));
            for (int c : children) {
                reqs.emplace_back();
                MPI_Isend(messages.back().data(), static_cast<int>(n), MPI_BYTE, c, detail::broadcast_block_tag,
                          private_, &reqs.back());
                rep.bytes_sent += n;
                ++rep.messages_sent;
            }
            if (me == 0) continue;
            const std::size_t first = next;
            next += blocks;
            if (!error_text.empty()) continue;
            try { // decoded after forwarding, so the subtree is not held up
                const auto bytes = detail::bytes_of(messages.back(), n);
                std::size_t at = 8;
                for (std::size_t w = first; w < next; ++w) {
                    const std::size_t lo = w * window, len = std::min(window, dimension_ - lo);
                    const auto v = wire::parse_block<T>(bytes.subspan(at), len);
                    at += v.bytes;
                    if (dense_out) wire::decode_block_into(v, id, std::span<T>(dense_out + lo, len));
                    else detail::append_entries(v, lo, id, idx, val);
                }
                if (at != n) detail::fail("malformed broadcast message: bytes after its blocks");
            } catch (const std::exception& e) {
                error_text = detail::failure_text(me, e); // this rank's own: the data were checked by the root
            }
        }
        MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
        if (!error_text.empty()) detail::fail(error_text);
        if (!failure.empty()) detail::fail(failure); // reduce reports every failure to the root: not expected here
        if constexpr (RO::kind != repr_kind::dense)
            if (me != 0) convert_into(out, index_value_vector<T, std::uint64_t>(dimension_, idx, val), op);
        rep.algorithm = "reduce_broadcast(" + rep.algorithm + ", broadcast segment=" +
                        std::to_string(window * sizeof(T)) + ")";
        return rep;
    }

    // ---- recursive doubling ----
    template <class In, class Out, class Op>
    report doubling(const In& in, Out& out, const Op& op, wire::format fmt, std::size_t segment_bytes)
    {
        using T = value_type_of<In>;
        if constexpr (!rle_value<T>)
            if (fmt == wire::rle) detail::fail("the rle wire format needs float or double values");
        const int me = comm_.rank(), P = comm_.size();
        const T id = identity<T>(op);
        const std::size_t window =
            std::max<std::size_t>(1, (segment_bytes ? segment_bytes : default_segment_bytes) / sizeof(T));
        report rep;
        std::string failure;
        std::int64_t heard = 0; // 1 + a failed rank we heard of
        detail::partial<T> acc;
        try {
            if (sparse_reduce::dimension(in) != dimension_)
                detail::fail("dimension mismatch: rank " + std::to_string(me) + " has dimension " +
                             std::to_string(sparse_reduce::dimension(in)) + ", the plan has " + std::to_string(dimension_));
            if (detail::dense_is_smaller<T>(stored_entries(in), dimension_)) {
                acc.is_dense = true;
                convert_into(acc.dense, in, op);
            } else {
                convert_into(acc.sparse, in, op);
            }
        } catch (const std::exception& e) {
            failure = detail::failure_text(me, e);
        }
        detail::wire_buffer sendbuf, recvbuf;
        const auto failed = [&] { return !failure.empty() || heard != 0; };
        // One step with `partner`: send ours (if send), receive theirs (if
        // receive) and fold it in on the side its ranks' order says, or take it.
        enum class fold { theirs_left, theirs_right, replace };
        const auto step = [&](int partner, bool send, bool receive, fold how) {
            const std::int64_t status = !failure.empty() ? me + 1 : heard;
            std::size_t n = 0;
            if (send) {
                n = detail::encode_partial(failed() ? nullptr : &acc, dimension_, window, id, fmt, status, sendbuf);
                rep.bytes_sent += n;
                ++rep.messages_sent;
            }
            const std::size_t got = detail::exchange(private_, partner, sendbuf, n, recvbuf, send, receive);
            if (!receive) return;
            rep.bytes_received += got;
            try {
                if (got < 8) detail::fail("malformed message: " + std::to_string(got) + " bytes");
                const auto their_status = static_cast<std::int64_t>(recvbuf[0]);
                if (their_status != 0) {
                    if (!heard) heard = their_status;
                    return;
                }
                if (failed()) return;
                auto theirs = detail::decode_partial<T>(detail::bytes_of(recvbuf, got).subspan(8), dimension_, window, id);
                acc = how == fold::replace      ? std::move(theirs)
                      : how == fold::theirs_left ? detail::combine_partials(theirs, acc, op, dimension_)
                                                 : detail::combine_partials(acc, theirs, op, dimension_);
            } catch (const std::exception& e) {
                if (failure.empty()) failure = detail::failure_text(me, e);
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
        detail::agree_and_throw(private_, me, failure, heard);
        if (acc.is_dense) convert_into(out, acc.dense, op);
        else convert_into(out, acc.sparse, op);
        rep.algorithm = std::string("recursive_doubling(wire=") + wire::to_string(fmt) +
                        ", segment=" + std::to_string(window * sizeof(T)) + ")";
        return rep;
    }

    boost::mpi::communicator comm_;
    MPI_Comm private_;
    std::size_t dimension_;
    Policy policy_;
    std::optional<reduce_plan<tree_policy>> reduce_;
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
