#pragma once
// The encoder of a dense float or double block (the drop-in's leaf, every
// dense accumulator): one pass that gathers entries while index/value or
// the bitmap may be the smallest form, counts branch-free once the block
// turns out dense, and writes the chosen form from what it gathered.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../detail/identity_mask.hpp"
#include "forms.hpp"

namespace sparse_reduce::wire::detail {

// What encode_dense_source found: the block's costs, and whether all its
// entries were gathered (as `gathered` values behind the offsets at the
// front), or the block has no identity and its values are already in place
// as the dense form (`full`).
template <class T>
struct dense_scan {
    block_stats<T> stats;
    bool complete = false;
    bool full = false;
    T* gathered = nullptr;
};

// Copies a block into the dense form's place at out (behind the header)
// while counting its entries: the one pass a block without identities needs.
template <rle_value T>
std::size_t copy_counting_entries(const T* p, std::size_t len, const T& id, std::byte* out)
{
    using B = typename sparse_reduce::detail::rle::layout<T>::bits;
    const B idb = std::bit_cast<B>(id);
    T* v = reinterpret_cast<T*>(out + header_bytes);
    B entries = 0;
    for (std::size_t k = 0; k < len; ++k) {
        const B d = std::bit_cast<B>(p[k]) ^ idb;
        v[k] = p[k];
        entries += sparse_reduce::detail::nonzero_bit(d);
    }
    return static_cast<std::size_t>(entries);
}

// One pass over a dense source block (float, double) that gathers its
// entries straight into the output while index/value may still be the
// smallest form: offsets at the front, values behind the room for the most
// entries that could still win. Each chunk of 32 is compared at once
// (detail/identity_mask.hpp) and only its entries are visited, so a sparse
// block reads at about memory speed. The RLE cost then comes from the
// gathered entries (a stretch of identities before each gap). Where the
// block turns out dense (over 5/8 entries after its first eighth) gathering
// stops and count_dense_rest counts the block instead.
template <rle_value T, class Offset>
dense_scan<T> scan_dense_source(const T* p, std::size_t len, const T& id, std::size_t capacity_entries,
                                std::byte* out)
{
    using B = sparse_reduce::detail::bits_of<T>;
    constexpr std::size_t chunk = sparse_reduce::detail::identity_mask_width;
    const B idb = std::bit_cast<B>(id);
    auto* off = reinterpret_cast<Offset*>(out + header_bytes);
    dense_scan<T> r;
    T* const val = reinterpret_cast<T*>(out + header_bytes + padded(capacity_entries * sizeof(Offset)));
    std::size_t n = 0;
    for (std::size_t k = 0; k < len; k += chunk) {
        const std::size_t end = std::min(len, k + chunk);
        std::uint32_t m = end - k == chunk ? sparse_reduce::detail::nonidentity_mask32(p + k, idb)
                                           : sparse_reduce::detail::nonidentity_mask_portable(p + k, end - k, idb);
        if (!m) continue;
        if (n + (end - k) > capacity_entries || (8 * end >= len && 8 * n > 5 * end)) {
            // Dense enough. A block with no identity is written as it is
            // counted: dense is its smallest form whatever its RLE escapes
            // (RLE takes a word per entry at least and is taken only when
            // strictly smaller), so its RLE words stand at the lower bound.
            // Any other is counted branch-free from the start.
            if (copy_counting_entries(p, len, id, out) == len) {
                r.stats = {len, len};
                r.full = true;
                return r;
            }
            count_dense_rest(p, 0, len, id, r.stats);
            return r;
        }
        do { // the chunk's entries, one set bit each
            const std::size_t q = k + static_cast<std::size_t>(std::countr_zero(m));
            m &= m - 1;
            off[n] = static_cast<Offset>(q);
            val[n] = p[q];
            ++n;
        } while (m);
    }
    // RLE words: each entry (two where it looks like a marker), and one per
    // stretch of identities: before the first entry, in each gap, after the last.
    std::size_t words = n, prev_end = 0; // prev_end: one past the previous entry
    for (std::size_t e = 0; e < n; ++e) {
        const std::size_t at = off[e];
        words += (at != prev_end) + sparse_reduce::detail::rle::is_marker(val[e]);
        prev_end = at + 1;
    }
    words += prev_end != len;
    r.stats = {n, words};
    r.complete = true;
    r.gathered = val;
    return r;
}

// Encodes a dense source block in format f (adaptive or index_value) from
// scan_dense_source's pass: the same bytes as measure() and the writers.
template <rle_value T, class Offset>
std::size_t encode_dense_source(const T* p, std::size_t len, const T& id, format f, block_tag tag, std::byte* out,
                                bool bitmap)
{
    // Entries index/value can hold and still be smaller than dense (16 bytes
    // of slack for the padding), or all of them when it is asked for.
    const std::size_t capacity_entries =
        f == format::index_value ? len
                                 : (len * sizeof(T) - std::min<std::size_t>(len * sizeof(T), 16)) / (sizeof(Offset) + sizeof(T));
    const dense_scan<T> scan = scan_dense_source<T, Offset>(p, len, id, capacity_entries, out);
    const block_stats<T>& s = scan.stats;
    const form g = form_for<T>(f, len, s, bitmap);
    if (scan.full && g == form::dense) { // the values are in place
        write_header(out, block_tag::dense, static_cast<std::uint32_t>(len));
        std::memset(out + header_bytes + len * sizeof(T), 0, padded(len * sizeof(T)) - len * sizeof(T));
        return dense_bytes<T>(len);
    }
    const sparse_reduce::detail::dense_reader<T> reader({p, len}, id);
    switch (g) {
    case form::index_value: {
        if (!scan.complete) return write_index_value<T, Offset>(reader, s.entries, id, tag, out);
        write_header(out, tag, checked_count<T>(s.entries));
        const std::size_t offset_bytes = s.entries * sizeof(Offset), value_bytes = s.entries * sizeof(T);
        std::byte* values = out + header_bytes + padded(offset_bytes);
        std::memset(out + header_bytes + offset_bytes, 0, padded(offset_bytes) - offset_bytes);
        std::memmove(values, scan.gathered, value_bytes); // down to its place (overlapping)
        std::memset(values + value_bytes, 0, padded(value_bytes) - value_bytes);
        return header_bytes + padded(offset_bytes) + padded(value_bytes);
    }
    case form::rle: return write_rle<T>(reader, s.rle_words, len, id, out);
    case form::bitmap: {
        // From the gathered offsets (a few instructions per entry; marking
        // every element in the scan cost the scan a fifth more), into a
        // bitmap on the stack (u16 offsets: blocks of at most 64 Ki
        // elements, 8 KiB), then the values moved behind it.
        constexpr std::size_t max_words = sparse_reduce::detail::bitmap_words(max_u16_offsets_length);
        const std::size_t words = sparse_reduce::detail::bitmap_words(len);
        if (!scan.complete || words > max_words) return write_bitmap_block<T>(reader, len, s.entries, id, out);
        std::uint64_t bits[max_words];
        std::memset(bits, 0, 8 * words);
        const auto* off = reinterpret_cast<const Offset*>(out + header_bytes);
        sparse_reduce::detail::bitmap_marker marks(bits);
        for (std::size_t e = 0; e < s.entries; ++e) marks.mark(off[e]);
        marks.finish();
        write_header(out, block_tag::bitmap, checked_count<T>(s.entries));
        const std::size_t value_bytes = s.entries * sizeof(T);
        std::byte* values = out + header_bytes + 8 * words;
        std::memmove(values, scan.gathered, value_bytes); // down behind the bitmap (may overlap)
        std::memcpy(out + header_bytes, bits, 8 * words);
        std::memset(values + value_bytes, 0, padded(value_bytes) - value_bytes);
        return bitmap_bytes<T>(len, s.entries);
    }
    case form::dense: break;
    }
    return write_dense<T>(p, len, out);
}

} // namespace sparse_reduce::wire::detail
