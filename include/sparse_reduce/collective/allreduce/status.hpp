#pragma once
// allreduce's errors and shared state (detail; collective/allreduce.hpp):
// a call's status on this rank, the agreement on the first failure at the
// end of a call, the message buffers a plan keeps, the window size.
//
// Errors end in sparse_reduce::error on EVERY rank: each message carries its
// sender's status (a failed rank goes on exchanging empty messages) and a
// call ends with one allreduce of the status, then the failing rank's
// message is broadcast.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include "../../detail/uninit_vector.hpp"
#include "../../error.hpp"
#include "../../exec/started_call.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../policy.hpp"
#include "../../repr/representation.hpp"
#include "messages.hpp"
#include "partial_codec.hpp"
#include "partial_ops.hpp"

namespace sparse_reduce::detail {

// The lowest failing rank this rank knows of: itself (local_failure), the
// one it heard of (heard: 1 + its rank), or INT_MAX for none.
inline int failure_candidate(int me, const std::string& local_failure, std::int64_t heard)
{
    return !local_failure.empty() ? me : heard > 0 ? static_cast<int>(heard - 1) : INT_MAX;
}

// Once the ranks agree on the first failing rank (`first`; none: return),
// every rank throws: a failed rank its own message (the first one too: the
// agreement may carry only the start of it), the others the first failing
// rank's.
inline void throw_agreed(const std::string& local_failure, const std::optional<failed_rank>& first)
{
    if (!first) return;
    if (!local_failure.empty()) fail(local_failure);
    fail(first->text.empty() ? "allreduce failed on rank " + std::to_string(first->rank) : first->text);
}

// All ranks agree on the first failing rank (or none), and its message.
inline void agree_and_throw(MPI_Comm comm, int me, const std::string& local_failure, std::int64_t heard)
{
    throw_agreed(local_failure, first_failure(comm, me, failure_candidate(me, local_failure, heard), local_failure));
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
    // In a catch block: the exception being handled, of any type ("out of
    // memory" when its text cannot be made).
    void fail_here()
    {
        if (failure.empty()) failure = text_or_out_of_memory([&] { return current_failure_text(rank); });
    }
    void hear(std::int64_t status)
    {
        if (!heard) heard = status;
    }
    // A message of `bytes` from rank `from` taken into the drain: no room for it.
    void fail_no_room(std::size_t bytes, int from)
    {
        if (failure.empty())
            failure = text_or_out_of_memory(
                [&] { return "rank " + std::to_string(rank) + ": " + no_room_text(bytes, from); });
    }
};

template <class T>
std::size_t window_of(std::size_t segment_bytes)
{
    return std::max<std::size_t>(1, (segment_bytes ? segment_bytes : default_segment_bytes) / sizeof(T));
}

// The largest message recursive doubling sends for segments of
// segment_bytes (0: the default): a message of whole windows of about
// stream_message_bytes, one window more, block headers and the trailer.
inline std::size_t doubling_drain_bytes(std::size_t segment_bytes)
{
    const std::size_t seg = segment_bytes ? segment_bytes : default_segment_bytes;
    return std::max(stream_message_bytes, seg) + 2 * seg + 4096;
}

// split_allgather's and grouped's per-member bookkeeping (the counts, the
// segments owed and taken, the requests, the sparse pieces gathered), made
// with the plan for groups of up to all its ranks (make_stream_room): a
// call allocates none of it, so a rank out of memory still takes part in
// every exchange.
struct stream_scratch {
    std::vector<std::uint64_t> count_send, count_recv, raw;
    std::vector<std::uint64_t> counted; // a started call's copy of automatic's counts per range
    std::vector<std::size_t> sends, recvs, filled, to_send, to_take, sent;
    std::vector<std::vector<MPI_Request>> requests; // two per member
    std::vector<MPI_Request> raw_requests;          // a raw segment's receive
    std::vector<MPI_Request> count_requests;        // the counts' (or raw flags') exchange: two per member
    std::vector<wire_buffer> whole;                 // one per member
};

// The largest message of split_allgather's and grouped's exchanges
// (segment_stream.hpp) for segments of segment_bytes under wire format f: a
// segment of about stream_message_bytes (or one window of a value below
// 4 KiB) as blocks: its dense bytes at most, twice that as RLE, five times
// as index/value (a one-byte value and a four-byte offset); block headers
// and padding (24 bytes a window), an empty run and the trailer.
inline std::size_t stream_drain_bytes(std::size_t segment_bytes, wire::format f)
{
    const std::size_t seg = segment_bytes ? segment_bytes : default_segment_bytes;
    const std::size_t factor = f == wire::index_value ? 5 : f == wire::rle ? 2 : 1;
    const std::size_t windows = std::max<std::size_t>(1, stream_message_bytes / seg) + 2;
    return factor * std::max(stream_message_bytes, seg) + 24 * windows + 4096;
}

// Message buffers a plan keeps between calls (no page faults per call).
// The room a started allreduce's state takes (allreduce_start.hpp checks it).

struct exchange_buffers {
    wire_buffer send, receive;
    wire_buffer send_next; // recursive doubling: the second of two messages in flight
    // Recursive doubling: room for its largest message, made with the plan
    // (inside its agreement): a rank that cannot grow `receive` for a
    // message receives it here and drops it, so nothing stays queued.
    byte_room drain;
    std::vector<wire_buffer> pieces; // split_allgather's and grouped's messages: two per member
    stream_scratch stream;
    bool bitmap = true; // adaptive blocks may take the bitmap form (the plan's tuning: cost_model::bitmap_pays)
    const void* identity_tested = nullptr; // the operation type whose identity law was tested
    std::shared_ptr<const std::string> tuning; // automatic's tuning, named for the report
    started_call started; // the plan's started call (collective/allreduce_start.hpp)
    // Its state, built here by each start: made with the plan, so that no
    // start allocates it (nor fails on one rank alone for want of it).
    alignas(std::max_align_t) std::byte started_room[started_room_bytes];
};

// Room in b for split_allgather's and grouped's exchanges in groups of up
// to `members`: the bookkeeping, a message buffer of one word (a failed
// member's status) for each send slot, and the requests of a message's
// pieces (a segment is far below 2 GiB).
inline void make_stream_room(exchange_buffers& b, std::size_t members)
{
    auto& s = b.stream;
    for (auto* v : {&s.count_send, &s.count_recv, &s.raw, &s.counted}) v->reserve(members);
    for (auto* v : {&s.sends, &s.recvs, &s.filled, &s.to_send, &s.to_take, &s.sent}) v->reserve(members);
    if (s.requests.size() < 2 * members) s.requests.resize(2 * members);
    for (auto& r : s.requests) r.reserve(4);
    s.raw_requests.reserve(4);
    s.count_requests.reserve(2 * members);
    if (s.whole.size() < members) s.whole.resize(members);
    if (b.pieces.size() < 2 * members) b.pieces.resize(2 * members);
    for (auto& p : b.pieces)
        if (p.empty()) p.resize(1);
}

// A range's count that was not taken (mean_entries' `own`).
inline constexpr std::uint64_t not_counted = ~std::uint64_t{0};

// Mean non-identity entries per rank over pc (dense inputs counted), and
// whether any rank failed to read its tuning (`bad`, also reported).
// `counted`, when given and the input has pc's plan's dimension: the
// entries of a dense input per block range of `ranges` (what
// split-allgather's updating sends each member), counted in the same pass.
// The range `own` (this member's, which split-allgather keeps) is then not
// counted when the others are at least half full, but estimated at their
// density (not_counted in `counted`): the mean only chooses an algorithm
// (dense blocks, there), and split-allgather reads its own range only as
// far as its format needs (at full density, not at all). Otherwise it is
// counted: a rank's entries often lie in its own part of the index space
// (a domain decomposition), which an estimate would miss.
template <class In, class T>
double mean_entries(MPI_Comm pc, const In& in, const T& id, bool bad = false, bool* any_bad = nullptr,
                    std::span<const std::size_t> ranges = {}, std::vector<std::uint64_t>* counted = nullptr,
                    std::size_t own = not_counted)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    std::size_t local = 0;
    bool by_range = false;
    if constexpr (R::kind == repr_kind::dense) {
        const auto xs = R::read(in);
        if (counted && !ranges.empty() && xs.size() == ranges.back()) {
            by_range = true;
            const std::size_t n = ranges.size() - 1;
            const std::size_t own_len = own < n ? ranges[own + 1] - ranges[own] : 0;
            counted->resize(n);
            for (std::size_t d = 0; d < n; ++d)
                if (d != own)
                    local += (*counted)[d] = count_dense_entries<T>(xs.subspan(ranges[d], ranges[d + 1] - ranges[d]), id);
            if (own < n) {
                const std::size_t others_len = xs.size() - own_len;
                const bool estimated = others_len > 0 && 2 * local >= others_len;
                (*counted)[own] = estimated ? not_counted : count_dense_entries<T>(xs.subspan(ranges[own], own_len), id);
                local += estimated ? static_cast<std::size_t>(std::llround(static_cast<double>(local) *
                                                                           static_cast<double>(own_len) /
                                                                           static_cast<double>(others_len)))
                                   : (*counted)[own];
            }
        }
    }
    if (!by_range) {
        if (counted) counted->clear();
        local = count_entries(in, id);
    }
    double mine[2] = {static_cast<double>(local), bad ? 1.0 : 0.0};
    double sum[2] = {0, 0};
    MPI_Allreduce(mine, sum, 2, MPI_DOUBLE, MPI_SUM, pc);
    if (any_bad) *any_bad = sum[1] > 0;
    int P = 1;
    MPI_Comm_size(pc, &P);
    return sum[0] / P;
}

// A call's vector against the plan (the ranks agreed on the plan's dimension).
template <class In>
void check_dimension(const In& in, std::size_t dimension, int me)
{
    if (sparse_reduce::dimension(in) != dimension)
        fail("dimension mismatch: rank ", me, " has dimension ", sparse_reduce::dimension(in), ", the plan has ",
             dimension);
}

} // namespace sparse_reduce::detail
