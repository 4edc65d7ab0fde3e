#pragma once
// reduce_scatter's headers (collective/reduce_scatter.hpp): a small message
// from every rank to every other, posted with the slices, so the arguments'
// agreement takes no round of its own. A header carries
//   - what the ranks agree on: the dimension, the ranges' hash, whether the
//     rank failed before it sent (then it sends no slices);
//   - the bytes of the slice's indices to its receiver, so a receiver can
//     take any slice (into the drain, where the call fails);
//   - the rank's caps (scatter/room.hpp): what it receives without
//     allocating;
//   - its row: the count words of all its slices (count | form), up to
//     header_row_limit ranks; above, the one to the receiver.
// With every row and cap in hand, every rank knows every rank's need: where
// none must allocate (a loop of calls once its sizes settle) nothing can
// fail after the headers, and the call takes one round; else, and above
// header_row_limit ranks, the ranks agree on their room and output by
// status words (mpi/first_failure.hpp) before they fold.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../exec/comm_state.hpp"
#include "../../exec/node_buffers.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../mpi/tags.hpp"
#include "../range_agreement.hpp"
#include "room.hpp"
#include "slices.hpp"

namespace sparse_reduce::detail {

// A header's words: those below, then the row.
enum header_word : std::size_t { h_index_bytes, h_dimension, h_ranges, h_failed, h_caps, header_fixed_words = h_caps + 5 };
// Rows up to this many ranks (a communicator's first call reads it; tests
// lower it to run the calls without rows at few ranks).
inline std::size_t header_row_limit = 64;

// The headers both ways, kept on the communicator (a memo of comm_state)
// from its first reduce_scatter, which agrees in one allreduce that every
// rank made them and its drain: a rank that could not still takes part,
// and every rank throws (the next call tries again).
struct scatter_headers {
    std::size_t P = 0, self = 0, width = 0;
    bool rows = false;
    std::vector<std::uint64_t> out, in; // width words per rank each way
    std::vector<MPI_Request> reqs;
    bool agreed = false;

    const std::uint64_t* from(std::size_t q) const { return in.data() + width * q; } // rank q's header here
    // The count word of the slice rank q sends rank d: from the rows, or,
    // without them, q's header to this rank (d: this rank) or this rank's to
    // d (q: this rank).
    std::uint64_t count_word(std::size_t q, std::size_t d) const
    {
        if (rows) return from(q)[header_fixed_words + d];
        return q == self ? out[width * d + header_fixed_words] : from(q)[header_fixed_words];
    }
    scatter_caps caps(std::size_t q) const
    {
        const std::uint64_t* c = from(q) + h_caps;
        return {c[0], c[1], c[2], c[3], c[4]};
    }
};

inline scatter_headers& agreed_headers(comm_state& st, MPI_Comm comm, node_buffers& drain_holder, std::size_t piece)
{
    int me = 0, ranks = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &ranks);
    scatter_headers* h = nullptr;
    std::string failure;
    try {
        h = &st.memo<scatter_headers>();
        if (h->agreed) return *h;
        h->P = static_cast<std::size_t>(ranks);
        h->self = static_cast<std::size_t>(me);
        h->rows = h->P <= header_row_limit;
        h->width = header_fixed_words + (h->rows ? h->P : 1);
        h->out.assign(h->width * h->P, 0);
        h->in.assign(h->width * h->P, 0);
        h->reqs.reserve(2 * h->P);
        if (drain_holder.drain().size() < piece) drain_holder.make_drain(piece);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
    throw_if_any_failed(comm, failure, "reduce_scatter failed on");
    h->agreed = true;
    return *h;
}

// Fills this rank's headers and posts them both ways. row: the count words
// of its slices (empty where it failed before it counted: it sends none);
// index_bytes(d): the bytes of the indices of its slice to d.
template <class IndexBytes>
void post_headers(MPI_Comm comm, scatter_headers& h, bool failed, std::size_t dimension, std::uint64_t ranges_hash,
                  const scatter_caps& caps, std::span<const std::uint64_t> row, IndexBytes index_bytes)
{
    const std::size_t W = h.width;
    const bool sends = !failed && !row.empty();
    const std::uint64_t c[5] = {caps.arriving, caps.total, caps.words, caps.requests, caps.output};
    for (std::size_t d = 0; d < h.P; ++d) {
        std::uint64_t* o = h.out.data() + W * d;
        o[h_index_bytes] = sends && d != h.self && count_of(row[d]) ? index_bytes(d) : 0;
        o[h_dimension] = dimension;
        o[h_ranges] = ranges_hash;
        o[h_failed] = failed ? 1 : 0;
        std::copy(c, c + 5, o + h_caps);
        for (std::size_t k = 0; k < W - header_fixed_words; ++k)
            o[header_fixed_words + k] = sends ? row[h.rows ? k : d] : 0;
    }
    post_words(comm, h.out, h.in, scatter_header_tag, h.reqs, W);
}

// Once the headers are in: the same verdict on every rank. Where a rank
// failed, or the ranks disagree on the dimension or the ranges, this rank
// takes every slice sent to it into the drain and drops it, waits for its
// own sends (sends), and throws as every rank does.
inline void header_verdict(MPI_Comm comm, const scatter_headers& h, std::size_t dimension, const std::string& local_failure,
                           std::size_t value_bytes, std::span<std::byte> drain, std::vector<MPI_Request>& sends)
{
    int first = -1;
    bool dimensions_differ = false, ranges_differ = false;
    const std::uint64_t* mine = h.from(h.self);
    for (std::size_t q = 0; q < h.P; ++q) {
        const std::uint64_t* w = h.from(q);
        if (w[h_failed] && first < 0) first = static_cast<int>(q);
        dimensions_differ = dimensions_differ || w[h_dimension] != mine[h_dimension];
        ranges_differ = ranges_differ || w[h_ranges] != mine[h_ranges];
    }
    if (first < 0 && !dimensions_differ && !ranges_differ) return;
    for (std::size_t q = 0; q < h.P; ++q) {
        if (q == h.self) continue;
        const std::size_t n = count_of(h.count_word(q, h.self));
        if (!n) continue;
        if (const std::size_t b = h.from(q)[h_index_bytes])
            drop_bytes(drain, b, scatter_piece_bytes, static_cast<int>(q), scatter_offset_tag, comm);
        drop_bytes(drain, n * value_bytes, scatter_piece_bytes, static_cast<int>(q), scatter_value_tag, comm);
    }
    wait_all(sends);
    throw_verdict(comm, first, dimensions_differ, ranges_differ, dimension, local_failure, "reduce_scatter");
}

// Whether the ranks must agree on room and output by status words: some
// rank's need exceeds its caps, or a slice to it came in no valid form (all
// known to every rank from the rows), or there are no rows.
inline bool needs_status(const scatter_headers& h, std::span<const std::size_t> ranges, std::size_t index_bytes,
                         std::size_t value_bytes)
{
    if (!h.rows) return true;
    for (std::size_t r = 0; r < h.P; ++r) {
        const auto to = [&](std::size_t q) { return h.count_word(q, r); };
        const auto from = [&](std::size_t d) { return h.count_word(r, d); };
        if (!fits(need_of(to, from, ranges, r, index_bytes, value_bytes), h.caps(r))) return true;
        if (!forms_fault(to, h.P, ranges[r + 1] - ranges[r], r).empty()) return true;
    }
    return false;
}

} // namespace sparse_reduce::detail
