#pragma once
// The forms a wire block takes (wire/block.hpp draws the layout): the
// policies' wire formats, the tags, each form's size, one pass that measures
// a block's costs, and the writers of each form.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../kernel/entry_stream.hpp"
#include "../repr/rle_codec.hpp"
#include "format.hpp"
#include "bitmap.hpp"

namespace sparse_reduce {
namespace wire {

enum class block_tag : std::uint8_t { dense = 0, index_value16 = 1, index_value32 = 2, rle = 3, bitmap = 4, empty_run = 5 };

// Windows one empty run may cover (its count field); longer runs are split.
inline constexpr std::size_t max_run_windows = std::numeric_limits<std::uint32_t>::max();

inline constexpr std::size_t header_bytes = 8;
// Blocks up to this length give their entries' offsets in 16 bits (every
// offset is below it), longer ones in 32.
inline constexpr std::size_t max_u16_offsets_length = std::size_t{1} << 16;
constexpr std::size_t padded(std::size_t bytes) { return (bytes + 7) & ~std::size_t{7}; }

template <class T>
concept wire_value = std::is_trivially_copyable_v<T> && alignof(T) <= 8;

// Sizes of each form for a block of `len` elements holding `entries` values
// that are not the identity and, for RLE, `rle_words` encoded words.
template <wire_value T>
constexpr std::size_t dense_bytes(std::size_t len) { return header_bytes + padded(len * sizeof(T)); }
template <wire_value T>
constexpr std::size_t index_value_bytes(std::size_t len, std::size_t entries)
{
    const std::size_t offset_size = len <= max_u16_offsets_length ? 2 : 4;
    return header_bytes + padded(entries * offset_size) + padded(entries * sizeof(T));
}
template <wire_value T>
constexpr std::size_t rle_bytes(std::size_t words) { return header_bytes + padded(words * sizeof(T)); }
template <wire_value T>
constexpr std::size_t bitmap_bytes(std::size_t len, std::size_t entries)
{
    return header_bytes + 8 * sparse_reduce::detail::bitmap_words(len) + padded(entries * sizeof(T));
}

// Largest block a format can produce for `len` elements: what a receive
// buffer must hold.
template <wire_value T>
constexpr std::size_t max_block_bytes(std::size_t len, format f = format::adaptive)
{
    switch (f) {
    case format::index_value: return index_value_bytes<T>(len, len);
    case format::rle: return rle_bytes<T>(detail::rle::max_words(len));
    case format::adaptive: // never more than dense: it picks the smallest form
    case format::dense: return dense_bytes<T>(len);
    }
    detail::fail("max_block_bytes: not a wire::format (", static_cast<int>(f), ")");
}

namespace detail {

using sparse_reduce::detail::fail;
using sparse_reduce::detail::same_value;

// Counts what each form would cost, from one pass over the entries.
template <class T>
struct block_stats {
    std::size_t entries = 0;
    std::size_t rle_words = 0;
};

template <class T>
std::size_t rle_gap_words(std::size_t gap, const T& id)
{
    if constexpr (rle_value<T>) {
        constexpr std::size_t max_run = sparse_reduce::detail::rle::layout<T>::max_run;
        const std::size_t rest = gap % max_run;
        return gap / max_run + (rest == 0 ? 0 : rest == 1 ? 1 + sparse_reduce::detail::rle::is_marker(id) : 1);
    } else {
        return 0;
    }
}

// The costs of p[i, len) of a block most of whose elements are entries,
// added to s, branch-free (x | -x has its top bit set iff x != 0, so the
// loops vectorise even on plain SSE2). p[i - 1], if any, is an entry, so a
// stretch of identities starts at k when p[k] is an identity after a value.
// The stretches are counted only where there are identities: for a block
// with none (a fully dense window) that is half the work.
template <rle_value T>
void count_dense_rest(const T* p, std::size_t i, std::size_t len, const T& id, block_stats<T>& s)
{
    using L = sparse_reduce::detail::rle::layout<T>;
    using B = typename L::bits;
    const B idb = std::bit_cast<B>(id);
    using sparse_reduce::detail::nonzero_bit;
    auto value_at = [&](std::size_t k) { return nonzero_bit<B>(std::bit_cast<B>(p[k]) ^ idb); };
    B entries = 0, runs = 0, escapes = 0;
    for (std::size_t k = i; k < len; ++k) {
        entries += value_at(k);
        escapes += sparse_reduce::detail::rle::marker_flag(p[k]);
    }
    if (entries < len - i)
        for (std::size_t k = i; k < len; ++k) runs += (B(1) - value_at(k)) & (k == i ? B(1) : value_at(k - 1));
    s.entries += entries;
    s.rle_words += entries + escapes + runs;
}

template <class T, class Reader>
block_stats<T> measure(Reader r, std::size_t len, const T& id)
{
    block_stats<T> s;
    if constexpr (requires { r.source(); } && rle_value<T>) {
        // A dense block: skip identity stretches at memory speed while the
        // data is sparse; once an eighth of the block has turned out to be
        // entries, count the rest branch-free (x | -x has its top bit set iff
        // x != 0, so the loop vectorises even on plain SSE2).
        using L = sparse_reduce::detail::rle::layout<T>;
        if (len <= L::max_run && !sparse_reduce::detail::rle::is_marker(id)) {
            const T* p = r.source().data();
            std::size_t i = 0;
            while (i < len && 8 * s.entries < len) {
                const std::size_t j = sparse_reduce::detail::find_non_identity(p, i, len, id);
                s.rle_words += j > i; // an identity stretch: one marker or one lone identity
                if (j == len) return s;
                ++s.entries;
                s.rle_words += 1 + sparse_reduce::detail::rle::is_marker(p[j]);
                i = j + 1;
            }
            count_dense_rest(p, i, len, id, s);
            return s;
        }
    } else if constexpr (requires { r.source(); }) {
        const T* p = r.source().data();
        for (std::size_t i = 0; i < len; ++i) s.entries += !same_value(p[i], id);
        return s;
    }
    std::size_t pos = 0;
    for (; !r.done(); r.next()) {
        if (same_value(r.value(), id)) continue;
        ++s.entries;
        if constexpr (rle_value<T>) {
            s.rle_words += rle_gap_words(r.index() - pos, id) + 1 + sparse_reduce::detail::rle::is_marker(r.value());
            pos = r.index() + 1;
        }
    }
    if constexpr (rle_value<T>) s.rle_words += rle_gap_words(len - pos, id);
    return s;
}

inline void write_header(std::byte* out, block_tag tag, std::uint32_t count)
{
    out[0] = static_cast<std::byte>(tag);
    out[1] = out[2] = out[3] = std::byte{0};
    std::memcpy(out + 4, &count, 4);
}

template <class T>
std::uint32_t checked_count(std::size_t n)
{
    if (n > std::numeric_limits<std::uint32_t>::max()) fail("block of ", n, " elements is too long for the wire");
    return static_cast<std::uint32_t>(n);
}

template <class T, class Offset, class Reader>
std::size_t write_index_value(Reader r, std::size_t entries, const T& id, block_tag tag, std::byte* out)
{
    write_header(out, tag, checked_count<T>(entries));
    const std::size_t offset_bytes = padded(entries * sizeof(Offset)), value_bytes = padded(entries * sizeof(T));
    std::memset(out + header_bytes, 0, offset_bytes + value_bytes); // padding goes out zeroed
    auto* off = reinterpret_cast<Offset*>(out + header_bytes);
    auto* val = reinterpret_cast<T*>(out + header_bytes + offset_bytes);
    std::size_t n = 0;
    for (; !r.done(); r.next()) {
        if (same_value(r.value(), id)) continue;
        off[n] = static_cast<Offset>(r.index());
        val[n++] = r.value();
    }
    return header_bytes + offset_bytes + value_bytes;
}

// The form a block goes in: a policy's format, or under adaptive the
// smallest for a block of len elements with these costs (dense unless
// another is strictly smaller).
enum class form : std::uint8_t { dense, index_value, rle, bitmap };

template <wire_value T>
form smallest_form(std::size_t len, const block_stats<T>& s, bool bitmap)
{
    std::size_t best = dense_bytes<T>(len);
    form f = form::dense;
    auto consider = [&](std::size_t bytes, form g) {
        if (bytes < best) {
            best = bytes;
            f = g;
        }
    };
    consider(index_value_bytes<T>(len, s.entries), form::index_value);
    if (bitmap) consider(bitmap_bytes<T>(len, s.entries), form::bitmap);
    if constexpr (rle_value<T>) consider(rle_bytes<T>(s.rle_words), form::rle);
    return f;
}

template <wire_value T>
form form_for(format f, std::size_t len, const block_stats<T>& s, bool bitmap)
{
    switch (f) {
    case format::dense: return form::dense;
    case format::index_value: return form::index_value;
    case format::rle: return form::rle;
    case format::adaptive: return smallest_form<T>(len, s, bitmap);
    }
    fail("encode_block: not a wire::format (", static_cast<int>(f), ")");
}

// The bitmap form of a block with `entries` entries; a dense float or double
// source is written branch-free.
template <class T, class Reader>
std::size_t write_bitmap_block(Reader r, std::size_t len, std::size_t entries, const T& id, std::byte* out)
{
    write_header(out, block_tag::bitmap, checked_count<T>(entries));
    namespace d = sparse_reduce::detail;
    auto* bits = reinterpret_cast<std::uint64_t*>(out + header_bytes);
    T* val = reinterpret_cast<T*>(out + header_bytes + 8 * d::bitmap_words(len));
    if constexpr (requires { r.source(); } && rle_value<T>)
        d::write_bitmap_dense<T>(r.source().data(), len, id, bits, val);
    else
        d::write_bitmap<T>(r, len, id, bits, val);
    std::memset(reinterpret_cast<std::byte*>(val + entries), 0, padded(entries * sizeof(T)) - entries * sizeof(T));
    return bitmap_bytes<T>(len, entries);
}

template <rle_value T, class Reader>
std::size_t write_rle(Reader r, std::size_t words, std::size_t len, const T& id, std::byte* out)
{
    write_header(out, block_tag::rle, checked_count<T>(words));
    T* w = reinterpret_cast<T*>(out + header_bytes);
    sparse_reduce::detail::rle_sink<T> sink(w, len, id);
    sparse_reduce::detail::drain(r, sink);
    sink.finish();
    std::memset(reinterpret_cast<std::byte*>(w + sink.words()), 0,
                rle_bytes<T>(sink.words()) - header_bytes - sink.words() * sizeof(T));
    return rle_bytes<T>(sink.words());
}

// An empty run over `windows` (1 to max_run_windows) windows of one stream
// (consecutive, or every S-th over S broadcast trees).
inline std::size_t write_empty_run(std::byte* out, std::size_t windows)
{
    write_header(out, block_tag::empty_run, static_cast<std::uint32_t>(windows));
    return header_bytes;
}

template <wire_value T>
std::size_t write_dense(const T* p, std::size_t len, std::byte* out)
{
    write_header(out, block_tag::dense, static_cast<std::uint32_t>(len));
    if (len) std::memcpy(out + header_bytes, static_cast<const void*>(p), len * sizeof(T));
    std::memset(out + header_bytes + len * sizeof(T), 0, padded(len * sizeof(T)) - len * sizeof(T));
    return dense_bytes<T>(len);
}

} // namespace detail
} // namespace wire
} // namespace sparse_reduce
