#pragma once
// A whole partial result as one message (exec/whole_reduce.hpp): a 64-byte
// header, then the entries as two arrays, or every element dense.
//
//   +-------+-------+-----------+-------+--------------+-------------+------+-------------+--------------+---------+
//   | magic | flags | dimension | count | value_offset | total_bytes | rank | index_bytes | index_offset | windows |
//   +-------+-------+-----------+-------+--------------+-------------+------+-------------+--------------+---------+
//   index/value form: count values at value_offset (= 64), then at
//                     index_offset (the next multiple of 8) the indices:
//                     index_bytes 4 or 8   absolute, strictly increasing
//                     index_bytes 2        blocked: the low 16 bits of each,
//                                          then (8-aligned) `windows` pairs
//                                          (u32 window, u32 entries) saying
//                                          which 65536-element window the
//                                          next entries lie in
//   dense form:       `dimension` values at value_offset
//   failed:           the error's text (count bytes)
//
// The blocked form is chosen when it is smaller (entries far more than
// windows): 2 bytes per index where the windowed wire has its 2-byte offsets,
// against 4 for absolute 32-bit indices. No entry holds the identity.
// Messages above 1 GiB travel in pieces of 1 GiB (MPI counts are int), the
// dense form in pieces of whole_piece_bytes, which the receiver folds while
// the next arrive; total_bytes tells the receiver how many follow.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "../error.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../mpi/bytes.hpp"

namespace sparse_reduce::detail {

struct partial_header {
    static constexpr std::uint32_t magic_value = 0x32505253; // "SRP2"
    static constexpr std::uint32_t failed = 1, dense_form = 2;

    std::uint32_t magic = magic_value;
    std::uint32_t flags = 0;
    std::uint64_t dimension = 0;
    std::uint64_t count = 0;        // entries; dense form: the dimension; failed: the text's bytes
    std::uint64_t value_offset = 0; // from the message's first byte
    std::uint64_t total_bytes = 0;
    std::int32_t error_rank = -1;
    std::uint32_t index_bytes = 0;
    std::uint64_t index_offset = 0;
    std::uint64_t windows = 0; // blocked indices: the (window, entries) pairs
};
static_assert(sizeof(partial_header) == 64);

inline constexpr std::size_t partial_header_bytes = sizeof(partial_header);

// A whole message's pieces. A whole message does not pipeline through the
// tree (a rank sends once it has folded every child), but its receiver
// folds each piece while the next is on the way, so a dense message costs
// its transfer and one piece's fold, not the transfer and then the whole
// fold (P = 2, 10 Gbit/s, 16 MiB: doc/benchmarks.md, "Dense whole messages
// in pieces"). 1 MiB: 16 pieces of 2^21 doubles, few enough that the
// per-piece cost (a rendezvous on TCP) stays small. Every form goes in
// such pieces, so a rank without memory for a message can still receive it
// into a drain of one piece (exec/node_buffers.hpp).
inline constexpr std::size_t whole_piece_bytes = std::size_t{1} << 20;

// A failed message carries at most this much of the error's text.
inline constexpr std::size_t max_error_text_bytes = 4096;

// Blocked indices: windows of 2^16 = 65536 elements, each index's low 16
// bits on the wire (where the windowed wire has its 2-byte offsets).
inline constexpr int blocked_window_bits = 16;
// A window's (u32 window, u32 entries) pair costs what this many entries
// save (8 bytes against 2 per entry): blocked only with at most entries /
// this windows.
inline constexpr std::size_t blocked_entries_per_window = 4;
// Below this many entries blocking is not tried (it would save at most one pair).
inline constexpr std::size_t blocked_min_entries = 8;

// The words finish_partial's `pairs` needs for n entries.
constexpr std::size_t blocked_pairs_words(std::size_t n) { return 2 * (n / blocked_entries_per_window + 1); }

constexpr std::size_t pad8(std::size_t bytes) { return (bytes + 7) & ~std::size_t{7}; }

// Where a message of `count` entries puts its indices, and the room a message
// of up to `count` entries needs (the blocked form is never larger).
template <class T, class I>
constexpr std::size_t partial_indices_at(std::size_t count)
{
    return pad8(partial_header_bytes + count * sizeof(T));
}
template <class T, class I>
constexpr std::size_t partial_bytes(std::size_t count)
{
    return partial_indices_at<T, I>(count) + pad8(count * sizeof(I));
}
template <class T>
constexpr std::size_t dense_partial_bytes(std::size_t dimension)
{
    return partial_header_bytes + dimension * sizeof(T);
}

// The dense form's layout for a dimension: every element, behind the header.
template <class T>
constexpr bool dense_layout(const partial_header& h, std::size_t dimension)
{
    return h.count == dimension && h.value_offset == partial_header_bytes &&
           h.total_bytes == dense_partial_bytes<T>(dimension);
}

// Whether more pieces follow a message's first (bytes): pieces of
// whole_piece_bytes, total_bytes says how many.
constexpr bool pieces_follow(const partial_header& h, std::size_t bytes)
{
    return h.magic == partial_header::magic_value && h.total_bytes > bytes && bytes == whole_piece_bytes;
}

// Writes n sorted indices as their low 16 bits into `to` and the (window,
// entries) pairs into `pairs`, in one pass; returns the pairs. `to` may be
// `from`'s own bytes (the 2-byte copy never overtakes the source). Inlined
// into each caller: called once out of line, its loop took about 3 more
// instructions an entry.
template <class IA>
[[gnu::always_inline]] inline std::size_t pack_blocked(const IA* from, std::size_t n, std::uint16_t* to,
                                                        std::uint32_t* pairs) noexcept
{
    std::size_t w = 0;
    std::uint32_t window = static_cast<std::uint32_t>(static_cast<std::uint64_t>(from[0]) >> blocked_window_bits),
                  entries = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const auto i = static_cast<std::uint64_t>(from[k]);
        const auto hi = static_cast<std::uint32_t>(i >> blocked_window_bits);
        if (hi != window) {
            pairs[2 * w] = window;
            pairs[2 * w + 1] = entries;
            ++w;
            window = hi;
            entries = 0;
        }
        ++entries;
        to[k] = static_cast<std::uint16_t>(i);
    }
    pairs[2 * w] = window;
    pairs[2 * w + 1] = entries;
    return w + 1;
}

// The header of an index/value message of n entries, its index form unset.
template <class T, class I>
partial_header index_value_header(std::size_t n, std::size_t dimension)
{
    partial_header h;
    h.dimension = dimension;
    h.count = n;
    h.value_offset = partial_header_bytes;
    h.index_offset = partial_indices_at<T, I>(n);
    return h;
}

// The header and the blocked indices of a message of n values, its indices
// packed by pack_blocked (w pairs); returns its bytes.
template <class T, class I>
std::size_t close_blocked(std::byte* msg, std::size_t n, std::size_t dimension, const std::uint32_t* pairs,
                          std::size_t w)
{
    partial_header h = index_value_header<T, I>(n, dimension);
    const std::size_t pairs_at = pad8(h.index_offset + 2 * n);
    std::memset(msg + h.index_offset + 2 * n, 0, pairs_at - h.index_offset - 2 * n); // no stale bytes on the wire
    std::memcpy(msg + pairs_at, pairs, 8 * w);
    h.index_bytes = 2;
    h.windows = w;
    h.total_bytes = pairs_at + 8 * w;
    std::memcpy(msg, &h, sizeof h);
    return h.total_bytes;
}

// Closes a message whose n values are at the header's end and whose n
// indices were written for room `cap` (at partial_indices_at(cap)): moves
// the indices next to the values, blocked when that is smaller, and writes
// the header. `pairs` has room for blocked_pairs_words(n). Returns its bytes.
template <class T, class I>
std::size_t finish_partial(std::byte* msg, std::size_t n, std::size_t cap, std::size_t dimension, std::uint32_t* pairs)
{
    const I* from = reinterpret_cast<const I*>(msg + partial_indices_at<T, I>(cap));
    if constexpr (sizeof(I) == 4) {
        if (n >= blocked_min_entries) { // at most n / 4 windows, counted up to there
            const std::size_t limit = n / blocked_entries_per_window;
            std::size_t w = 1;
            for (std::size_t k = 1; k < n && w <= limit; ++k)
                w += (from[k] >> blocked_window_bits) != (from[k - 1] >> blocked_window_bits);
            if (w <= limit) {
                auto* to = reinterpret_cast<std::uint16_t*>(msg + partial_indices_at<T, I>(n));
                return close_blocked<T, I>(msg, n, dimension, pairs, pack_blocked(from, n, to, pairs));
            }
        }
    }
    partial_header h = index_value_header<T, I>(n, dimension);
    if (reinterpret_cast<const std::byte*>(from) != msg + h.index_offset)
        std::memmove(msg + h.index_offset, from, n * sizeof(I));
    h.index_bytes = sizeof(I);
    h.total_bytes = h.index_offset + n * sizeof(I);
    std::memcpy(msg, &h, sizeof h);
    return h.total_bytes;
}

// A leaf's own entries (sorted, validated, no identities) into a message,
// the same bytes as copying them and finish_partial: in one pass where the
// index range alone shows there are at most n / 4 windows.
template <class T, class I, class IA>
std::size_t write_partial(std::byte* msg, const IA* ai, const T* av, std::size_t n, std::size_t dimension,
                          std::uint32_t* pairs)
{
    if constexpr (sizeof(I) == 4) {
        if (n >= blocked_min_entries) {
            const auto span = (static_cast<std::uint64_t>(ai[n - 1]) >> blocked_window_bits) -
                              (static_cast<std::uint64_t>(ai[0]) >> blocked_window_bits) + 1;
            if (span <= n / blocked_entries_per_window) {
                std::memcpy(static_cast<void*>(msg + partial_header_bytes), av, n * sizeof(T));
                auto* to = reinterpret_cast<std::uint16_t*>(msg + partial_indices_at<T, I>(n));
                return close_blocked<T, I>(msg, n, dimension, pairs, pack_blocked(ai, n, to, pairs));
            }
        }
    }
    copy_entries(ai, av, n, reinterpret_cast<I*>(msg + partial_indices_at<T, I>(n)),
                 reinterpret_cast<T*>(msg + partial_header_bytes));
    return finish_partial<T, I>(msg, n, n, dimension, pairs);
}

// A received message, checked: every size and offset in bounds, the index
// width the call's, indices strictly increasing and below the dimension.
template <class T, class I>
struct partial_view {
    partial_header h;
    bool dense = false;
    const I* idx = nullptr;
    T* val = nullptr; // writable: a dense message becomes the accumulator in place
    std::size_t n = 0;
};

// decode(n) gives room for n indices where blocked ones are unpacked.
template <class T, class I, class Decode>
partial_view<T, I> parse_partial(std::byte* msg, std::size_t bytes, std::size_t dimension, Decode&& decode)
{
    partial_view<T, I> v;
    if (bytes < partial_header_bytes) fail("malformed message: ", bytes, " bytes, shorter than its header");
    std::memcpy(&v.h, msg, sizeof v.h);
    const partial_header& h = v.h;
    if (h.magic != partial_header::magic_value)
        fail("malformed message: not a whole partial result (do all ranks pass the same kinds of vectors?)");
    if (h.total_bytes != bytes) fail("malformed message: its header says ", h.total_bytes, " bytes");
    if (h.flags & partial_header::failed) {
        if (h.count != bytes - partial_header_bytes) fail("malformed error message");
        return v;
    }
    if (h.dimension != dimension) return v; // the caller reports the mismatch
    v.dense = h.flags & partial_header::dense_form;
    v.n = h.count;
    if (v.dense) {
        if (!dense_layout<T>(h, dimension)) fail("malformed message: dense form of the wrong size");
        v.val = reinterpret_cast<T*>(msg + h.value_offset);
        return v;
    }
    const auto bad_size = [&] {
        fail("malformed message: ", h.count, " entries in ", bytes, " bytes");
    };
    if (h.count > dimension || h.value_offset != partial_header_bytes || h.count > bytes ||
        h.index_offset != partial_indices_at<T, I>(h.count))
        bad_size();
    if (h.index_bytes == sizeof(I)) {
        if (bytes != h.index_offset + h.count * sizeof(I)) bad_size();
        v.idx = reinterpret_cast<const I*>(msg + h.index_offset);
    } else if (h.index_bytes == 2 && sizeof(I) == 4) {
        const std::size_t pairs_at = pad8(h.index_offset + 2 * h.count);
        if (h.windows > h.count || bytes != pairs_at + 8 * h.windows) bad_size();
        I* out = decode(v.n);
        const auto* low = reinterpret_cast<const std::uint16_t*>(msg + h.index_offset);
        std::size_t k = 0;
        for (std::size_t p = 0; p < h.windows; ++p) {
            std::uint32_t pair[2];
            std::memcpy(pair, msg + pairs_at + 8 * p, sizeof pair);
            if (pair[1] > v.n - k || pair[0] > (dimension - 1) >> blocked_window_bits) bad_size();
            const I base = static_cast<I>(pair[0]) << blocked_window_bits;
            for (const std::size_t end = k + pair[1]; k < end; ++k) out[k] = base | low[k];
        }
        if (k != v.n) bad_size();
        v.idx = out;
    } else {
        fail("malformed message: index width ", h.index_bytes);
    }
    if (count_unordered(v.idx, v.n) || (v.n && v.idx[v.n - 1] >= dimension))
        fail("malformed message: indices out of order or range");
    v.val = reinterpret_cast<T*>(msg + h.value_offset);
    return v;
}

inline std::string partial_error_text(const std::byte* msg, const partial_header& h)
{
    return std::string(reinterpret_cast<const char*>(msg + partial_header_bytes), h.count);
}

} // namespace sparse_reduce::detail
