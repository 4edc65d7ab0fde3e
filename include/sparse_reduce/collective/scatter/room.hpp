#pragma once
// reduce_scatter's room (collective/reduce_scatter.hpp): what a rank keeps
// to receive and fold the slices that come to it, what a call needs of it
// (scatter_need, from the counts and forms of the slices both ways) and
// what it holds now (scatter_caps). Every rank can work out every rank's
// need from the counts in the headers (scatter/headers.hpp), so all know,
// without a message more, whether any rank must allocate in a call: where
// none must, nothing can fail once the headers are in.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../../detail/uninit_vector.hpp"
#include "../../repr/representation.hpp"
#include "../../wire/bitmap.hpp"
#include "slices.hpp"

namespace sparse_reduce::detail {

// One run of a fold: a rank's entries in this rank's range.
template <class I, class T>
struct run_view {
    const I* idx;
    const T* val;
    std::size_t n;
};

// The room of the exchange and the fold, kept on the communicator (a memo of
// comm_state) so a loop of calls allocates nothing once its sizes settle:
// what arrives (the other ranks' runs, packed in rank order; the bitmaps
// of those that come as bitmaps, from word bits_at[r]) and two areas for
// the rounds of the fold (the first holds the gaps of the slices that come
// as gaps, at each one's run, until they are read into idx).
template <class I, class T>
struct scatter_room {
    slices<I, T> s;
    std::vector<I> idx, tmp_idx[2];
    value_vector<T> val, tmp_val[2];
    std::vector<std::uint64_t> bits;
    std::vector<std::size_t> bits_at;
    std::vector<run_view<I, T>> runs, next;
};

inline std::size_t count_of(std::uint64_t word) { return static_cast<std::size_t>(word & slice_count_mask); }
inline slice_form form_of(std::uint64_t word) { return static_cast<slice_form>(word >> slice_form_shift); }

// What rank `self` needs in a call: entries arriving, those and its own
// (the fold's areas and its output), bitmap words, requests (its slices
// both ways and the status words).
struct scatter_need {
    std::size_t arriving = 0, total = 0, words = 0, requests = 0;
};

// to(q): the count word (count | form << slice_form_shift) of the slice rank
// q sends `self`; from(d): that of the slice `self` sends rank d.
template <class To, class From>
scatter_need need_of(To to, From from, std::span<const std::size_t> ranges, std::size_t self, std::size_t index_bytes,
                     std::size_t value_bytes)
{
    const std::size_t P = ranges.size() - 1, mine = ranges[self + 1] - ranges[self];
    scatter_need n;
    for (std::size_t r = 0; r < P; ++r) {
        if (r == self) continue;
        const std::uint64_t out = from(r), in = to(r);
        if (count_of(out))
            n.requests += message_pieces(index_wire_bytes(form_of(out), count_of(out), ranges[r + 1] - ranges[r], index_bytes)) +
                          message_pieces(count_of(out) * value_bytes);
        if (!count_of(in)) continue;
        n.arriving += count_of(in);
        n.requests += message_pieces(index_wire_bytes(form_of(in), count_of(in), mine, index_bytes)) +
                      message_pieces(count_of(in) * value_bytes);
        if (form_of(in) == slice_form::bitmap) n.words += bitmap_words(mine);
    }
    n.total = n.arriving + count_of(from(self));
    n.requests += 2 * P;
    return n;
}

// What a rank holds, in the same terms (capacities): a call whose need
// fits allocates nothing. All zero until the room has been made once (its
// per-rank lists).
struct scatter_caps {
    std::uint64_t arriving = 0, total = 0, words = 0, requests = 0, output = 0;
};

// requests: the capacity of the call's request list; output: the entries
// the output holds without allocating.
template <class I, class T>
scatter_caps caps_of(const scatter_room<I, T>& room, std::size_t requests, std::size_t output, std::size_t P)
{
    if (room.runs.capacity() < P || room.next.capacity() < P || room.bits_at.capacity() < P) return {};
    return {std::min(room.idx.capacity(), room.val.capacity()),
            std::min({room.tmp_idx[0].capacity(), room.tmp_idx[1].capacity(), room.tmp_val[0].capacity(),
                      room.tmp_val[1].capacity()}),
            room.bits.capacity(), requests, output};
}

// Whether an output's representation tells its capacity (repr_traits::capacity).
template <class Out>
constexpr bool tells_capacity = requires(const Out& o) { repr_traits<std::remove_cvref_t<Out>>::capacity(o); };

// The entries `out` holds without allocating; 0 where its representation does not tell.
template <class Out>
std::size_t output_capacity(const Out& out)
{
    if constexpr (tells_capacity<Out>) return repr_traits<std::remove_cvref_t<Out>>::capacity(out);
    else return 0;
}

inline bool fits(const scatter_need& n, const scatter_caps& c)
{
    return n.arriving <= c.arriving && n.total <= c.total && n.words <= c.words && n.requests <= c.requests &&
           n.total <= c.output;
}

// Empty when every full slice that comes to `self` (to, as in need_of)
// fills its range (len); else why not.
template <class To>
std::string forms_fault(To to, std::size_t P, std::size_t len, std::size_t self)
{
    for (std::size_t r = 0; r < P; ++r) {
        const std::uint64_t w = to(r);
        if (r == self || !count_of(w)) continue;
        if (form_of(w) == slice_form::full && count_of(w) != len)
            return "reduce_scatter: rank " + std::to_string(r) + " sent a full slice of " + std::to_string(count_of(w)) +
                   " entries for a range of " + std::to_string(len);
    }
    return {};
}

// At least n elements in v; where it must grow, a quarter more (reserve_more).
template <class V>
void grow_to(V& v, std::size_t n)
{
    reserve_more(v, n);
    if (v.size() < n) v.resize(n);
}

// Room for what arrives and for the fold's rounds, by the need (throws when
// there is none; allocates nothing where the need fits the caps).
template <class I, class T>
void make_room(scatter_room<I, T>& room, const scatter_need& n, std::span<const slice_form> recv_form,
               std::span<const std::uint64_t> recv, std::size_t mine, std::size_t self, std::vector<MPI_Request>& reqs)
{
    const std::size_t P = recv.size();
    grow_to(room.idx, n.arriving);
    grow_to(room.val, n.arriving);
    for (int a = 0; a < 2 && P > 1; ++a) {
        grow_to(room.tmp_idx[a], n.total);
        grow_to(room.tmp_val[a], n.total);
    }
    room.runs.reserve(P);
    room.next.reserve(P);
    room.bits_at.assign(P, 0);
    std::size_t words = 0;
    for (std::size_t r = 0; r < P; ++r)
        if (r != self && recv[r] && recv_form[r] == slice_form::bitmap) {
            room.bits_at[r] = words;
            words += bitmap_words(mine);
        }
    grow_to(room.bits, n.words);
    reserve_more(reqs, n.requests);
}

} // namespace sparse_reduce::detail
