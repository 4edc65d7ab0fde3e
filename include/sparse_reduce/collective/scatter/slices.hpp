#pragma once
// reduce_scatter's slices (collective/reduce_scatter.hpp): one rank's
// entries cut by the owners' ranges, the form each slice's indices travel
// in, and the counts of the exchange, which carry those forms.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include "../../detail/uninit_vector.hpp"
#include "../../detail/value_equal.hpp"
#include "../../kernel/entry_stream.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../mpi/tags.hpp"
#include "../../repr/representation.hpp"
#include "../../report.hpp"
#include "../../wire/bitmap.hpp"
#include "../../wire/index_gaps.hpp"

namespace sparse_reduce::detail {

// Capacity for at least n in v; where it must grow, a quarter more, so a
// loop of calls whose sizes vary a little settles (scatter/room.hpp).
template <class V>
void reserve_more(V& v, std::size_t n)
{
    if (v.capacity() < n) v.reserve(n + n / 4);
}

// One rank's non-identity entries cut by range, contiguous per destination:
// idx / val [cut[d], cut[d + 1]). Indices are global where the dimension
// fits 32 bits, else offsets within the owner's range. idx / val point into
// the caller's input (an index/value input that needs no change: nothing is
// copied) or into index / value, this rank's copy. bits: the bitmaps and
// gaps of the slices sent so, from word bits_at[d] (slice_counts::count_sends).
template <class I, class T>
struct slices {
    std::vector<I> index;
    value_vector<T> value;
    const I* idx = nullptr;
    const T* val = nullptr;
    std::vector<std::size_t> cut;
    std::vector<std::uint64_t> bits;
    std::vector<std::size_t> bits_at;
};

// How a slice's indices travel, told to the owner in the top bits of the
// slice's count (its header carries it, scatter/headers.hpp):
//   listed  sizeof(I) bytes an entry;
//   bitmap  a bit per element of the owner's range (wire/bitmap.hpp), or
//   gaps    a varint per entry, the gap from the one before (wire/index_gaps.hpp),
//           each where it is the fewest bytes and the tuning makes bytes
//           dear (cost_model::bitmap_pays: a network, not shared memory);
//   full    none: the slice holds every element of the range.
enum class slice_form : std::uint64_t { listed = 0, bitmap = 1, full = 2, gaps = 3 };
inline constexpr int slice_form_shift = 62;
inline constexpr std::uint64_t slice_count_mask = (std::uint64_t{1} << slice_form_shift) - 1;

// The fewest bytes: listed, else bitmap, else gaps on a tie; gaps(): the
// bytes of the slice's gaps, counted only where bytes are dear.
template <class Gaps>
slice_form form_of_slice(std::size_t n, std::size_t len, std::size_t index_bytes, bool dear, Gaps gaps)
{
    if (n != 0 && n == len) return slice_form::full;
    if (!dear || n == 0) return slice_form::listed;
    const std::size_t listed = n * index_bytes, bitmap = 8 * bitmap_words(len);
    // a gap takes a byte at least: counted (a pass over the indices) only where they may win
    if (n < std::min(listed, bitmap))
        if (const std::size_t g = gaps(); g < listed && g < bitmap) return slice_form::gaps;
    return bitmap < listed ? slice_form::bitmap : slice_form::listed;
}

// The bytes of a slice's indices on the wire; for gaps, a bound (they are
// sent only where fewer than listed).
inline std::size_t index_wire_bytes(slice_form f, std::size_t n, std::size_t len, std::size_t index_bytes)
{
    return f == slice_form::bitmap ? 8 * bitmap_words(len) : f == slice_form::full ? 0 : n * index_bytes;
}

template <class I, class In, class T>
void cut_by_range(const In& in, std::span<const std::size_t> ranges, const T& id, bool global, slices<I, T>& s)
{
    const std::size_t P = ranges.size() - 1;
    s.cut.assign(P + 1, 0);
    const std::size_t hint = std::min(stored_entries(in), dimension(in));
    s.index.clear();
    s.value.clear();
    s.index.reserve(hint);
    s.value.reserve(hint);
    std::size_t d = 0;
    for (auto r = make_reader(in, id); !r.done(); r.next()) {
        if (same_value(r.value(), id)) continue; // an explicit identity stored in a sparse input
        const std::size_t i = r.index();
        while (i >= ranges[d + 1]) s.cut[++d] = s.index.size();
        s.index.push_back(static_cast<I>(global ? i : i - ranges[d]));
        s.value.push_back(r.value());
    }
    while (d < P) s.cut[++d] = s.index.size();
    s.idx = s.index.data();
    s.val = s.value.data();
}

// An index/value input with 32-bit indices, sent as it is: one pass checks
// that its indices increase within the dimension and that it stores no
// identity, then the cuts are binary searches. False (nothing decided) for
// any other input: the copying cut then reads it, and throws on a corrupt one.
template <class In, class T>
bool cut_in_place(const In& in, std::span<const std::size_t> ranges, const T& id, slices<std::uint32_t, T>& s)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    if constexpr (R::kind != repr_kind::index_value) return false;
    else {
        using Idx = typename R::index_type;
        if constexpr (sizeof(Idx) != 4 || !std::is_integral_v<Idx>) return false;
        else {
            // a signed index reads as its unsigned twin, so a negative one is out
            // of range only where the dimension stays below 2^31
            if (std::is_signed_v<Idx> && dimension(in) > (std::size_t{1} << 31)) return false;
            const auto ix = R::indices(in);
            const auto v = R::values(in);
            const auto* u = reinterpret_cast<const std::uint32_t*>(ix.data()); // a signed index reads as its unsigned twin
            const std::size_t n = ix.size(), dim = dimension(in);
            for (std::size_t k = 0; k < n; ++k)
                if (u[k] >= dim || (k > 0 && u[k] <= u[k - 1]) || same_value(v[k], id)) return false;
            const std::size_t P = ranges.size() - 1;
            s.cut.assign(P + 1, n);
            s.cut[0] = 0;
            for (std::size_t d = 1; d < P; ++d)
                s.cut[d] = static_cast<std::size_t>(std::lower_bound(u, u + n, ranges[d]) - u);
            s.idx = u;
            s.val = v.data();
            return true;
        }
    }
}

// The exchange goes in pieces of 1 MiB, so that a rank without room for
// what it receives can take every piece into the communicator's drain of
// one piece (comm_state's, made before the ranks agree) and drop it.
inline constexpr std::size_t scatter_piece_bytes = std::size_t{1} << 20;

// The requests of a message of `bytes` (none for none).
inline std::size_t message_pieces(std::size_t bytes)
{
    return bytes ? pieces_of(bytes, scatter_piece_bytes) : 0;
}

// The exchange's counts: what this rank sends to and receives from each
// rank, the forms of those slices' indices, where each rank's run lands
// among those received, and the requests, room for this rank's sends made
// once its input is cut (before the ranks agree, so a rank without room for
// them fails the call everywhere). wire: the counts as the exchange sends
// them, forms included. last: the latest call's traffic on this rank.
struct slice_counts {
    std::vector<std::uint64_t> send, recv, wire;
    std::vector<slice_form> send_form, recv_form;
    std::vector<std::size_t> send_index, recv_index; // the bytes of each slice's indices
    std::vector<std::size_t> at;
    std::vector<MPI_Request> reqs;
    status_words status; // the ranks' agreement on room and output (a noexcept op)
    bool status_round = true; // whether the latest call took it (scatter/headers.hpp)
    report last;
    void resize(std::size_t P)
    {
        status.resize(P); // here, where a failure is still agreed on
        send.assign(P, 0);
        recv.assign(P, 0);
        wire.assign(P, 0);
        send_form.assign(P, slice_form::listed);
        recv_form.assign(P, slice_form::listed);
        send_index.assign(P, 0);
        recv_index.assign(P, 0);
        at.assign(P + 1, 0);
        reqs.clear();
    }

    // The counts and forms of this rank's slices, and the bitmaps and gaps
    // of those sent so; dear: whether bytes are (those forms may be taken).
    template <class I, class T>
    void count_sends(slices<I, T>& s, std::span<const std::size_t> ranges, std::size_t self, bool global, bool dear)
    {
        std::size_t posts = 0, words = 0;
        s.bits_at.assign(send.size(), 0);
        for (std::size_t d = 0; d < send.size(); ++d) {
            const std::size_t n = s.cut[d + 1] - s.cut[d], len = ranges[d + 1] - ranges[d];
            std::size_t gaps = 0;
            send[d] = n;
            send_form[d] = d == self ? slice_form::listed : form_of_slice(n, len, sizeof(I), dear, [&] {
                return gaps = index_gap_bytes(s.idx + s.cut[d], n, global ? ranges[d] : 0);
            });
            wire[d] = n | static_cast<std::uint64_t>(send_form[d]) << slice_form_shift;
            send_index[d] = send_form[d] == slice_form::gaps ? gaps : index_wire_bytes(send_form[d], n, len, sizeof(I));
            if (send_form[d] == slice_form::bitmap || send_form[d] == slice_form::gaps) {
                s.bits_at[d] = words;
                words += (send_index[d] + 7) / 8;
            }
            if (d != self && n) posts += message_pieces(send_index[d]) + message_pieces(n * sizeof(T));
        }
        reserve_more(reqs, posts + 2 * send.size()); // and the status words
        if (s.bits.size() < words) s.bits.resize(words);
        for (std::size_t d = 0; d < send.size(); ++d) {
            const std::size_t base = global ? ranges[d] : 0;
            if (send_form[d] == slice_form::bitmap)
                write_index_bitmap(s.idx + s.cut[d], send[d], base, ranges[d + 1] - ranges[d], s.bits.data() + s.bits_at[d]);
            else if (send_form[d] == slice_form::gaps)
                write_index_gaps(s.idx + s.cut[d], send[d], base, reinterpret_cast<std::byte*>(s.bits.data() + s.bits_at[d]));
        }
    }
};

} // namespace sparse_reduce::detail
