#pragma once
// The adaptive block encoding: one block of the index space on the wire, in
// whichever of three forms is smallest, marked by a one-byte tag.
//
//   +-----+-------+---------+----------------------------------------------+
//   | tag | 0 0 0 | count32 | payload, each array padded to 8 bytes       |
//   +-----+-------+---------+----------------------------------------------+
//   tag 0 dense          count = block length; count values
//   tag 1 index_value16  count entries: count u16 offsets, count values
//   tag 2 index_value32  count entries: count u32 offsets, count values
//   tag 3 rle            count words of the NaN-marker RLE (float, double)
//
// Offsets are relative to the block's first index; the block length is known
// to both sides. The 8-byte header keeps every payload 8-aligned, so a
// receiver reads values in place. Adaptive never picks a form larger than
// dense, so incompressible data costs dense plus the 8-byte header.
// Decoding checks everything it reads: a wrong tag, a count past the buffer,
// offsets out of order or out of range, a malformed RLE stream all throw
// sparse_reduce::error, and nothing is read outside the given bytes.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>

#include "../detail/exhaustive.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../kernel/entry_stream.hpp"
#include "../repr/rle_codec.hpp"

namespace sparse_reduce {
namespace wire {

// What a collective may put on the wire (policies carry it as `.wire`).
enum class format : std::uint8_t { adaptive, dense, index_value, rle };
inline constexpr format adaptive = format::adaptive;       // smallest form per block (default)
inline constexpr format dense = format::dense;
inline constexpr format index_value = format::index_value;
inline constexpr format rle = format::rle;                 // float and double only

inline const char* to_string(format f)
{
    switch (f) {
    case format::dense: return "dense";
    case format::index_value: return "index_value";
    case format::rle: return "rle";
    case format::adaptive: return "adaptive";
    }
    detail::fail("wire::to_string: not a wire::format (" + std::to_string(static_cast<int>(f)) + ")");
}

enum class block_tag : std::uint8_t { dense = 0, index_value16 = 1, index_value32 = 2, rle = 3 };

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
    detail::fail("max_block_bytes: not a wire::format (" + std::to_string(static_cast<int>(f)) + ")");
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
    if (n > std::numeric_limits<std::uint32_t>::max()) fail("block of " + std::to_string(n) + " elements is too long for the wire");
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

// The smallest form for a block of len elements with these costs (dense
// unless another is strictly smaller).
template <wire_value T>
format smallest_format(std::size_t len, const block_stats<T>& s)
{
    std::size_t best = dense_bytes<T>(len);
    format f = format::dense;
    if (index_value_bytes<T>(len, s.entries) < best) {
        best = index_value_bytes<T>(len, s.entries);
        f = format::index_value;
    }
    if constexpr (rle_value<T>)
        if (rle_bytes<T>(s.rle_words) < best) f = format::rle;
    return f;
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

template <wire_value T>
std::size_t write_dense(const T* p, std::size_t len, std::byte* out)
{
    write_header(out, block_tag::dense, static_cast<std::uint32_t>(len));
    if (len) std::memcpy(out + header_bytes, static_cast<const void*>(p), len * sizeof(T));
    std::memset(out + header_bytes + len * sizeof(T), 0, padded(len * sizeof(T)) - len * sizeof(T));
    return dense_bytes<T>(len);
}

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
// entries branch-free straight into the output while index/value may still
// be the smallest form: offsets at the front, values behind the room for the
// most entries that could still win. Chunks with no entry are skipped after
// one vectorised test, so a sparse block reads at memory speed. The RLE cost
// then comes from the gathered entries (a stretch of identities before each
// gap). Where the block turns out dense (over 5/8 entries after its first
// eighth) gathering stops and count_dense_rest counts the block instead.
template <rle_value T, class Offset>
dense_scan<T> scan_dense_source(const T* p, std::size_t len, const T& id, std::size_t capacity_entries,
                                std::byte* out)
{
    using L = sparse_reduce::detail::rle::layout<T>;
    using B = typename L::bits;
    constexpr std::size_t chunk = 32;
    const B idb = std::bit_cast<B>(id);
    auto* off = reinterpret_cast<Offset*>(out + header_bytes);
    dense_scan<T> r;
    T* const val = reinterpret_cast<T*>(out + header_bytes + padded(capacity_entries * sizeof(Offset)));
    std::size_t n = 0;
    for (std::size_t k = 0; k < len; k += chunk) {
        const std::size_t end = std::min(len, k + chunk);
        B any = 0;
        for (std::size_t q = k; q < end; ++q) any |= std::bit_cast<B>(p[q]) ^ idb;
        if (!any) continue;
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
        for (std::size_t q = k; q < end; ++q) {
            off[n] = static_cast<Offset>(q);
            val[n] = p[q];
            n += std::bit_cast<B>(p[q]) != idb;
        }
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
std::size_t encode_dense_source(const T* p, std::size_t len, const T& id, format f, block_tag tag, std::byte* out)
{
    // Entries index/value can hold and still be smaller than dense (16 bytes
    // of slack for the padding), or all of them when it is asked for.
    const std::size_t capacity_entries =
        f == format::index_value ? len
                                 : (len * sizeof(T) - std::min<std::size_t>(len * sizeof(T), 16)) / (sizeof(Offset) + sizeof(T));
    const dense_scan<T> scan = scan_dense_source<T, Offset>(p, len, id, capacity_entries, out);
    const block_stats<T>& s = scan.stats;
    if (f == format::adaptive) f = smallest_format<T>(len, s);
    if (scan.full && f == format::dense) { // the values are in place
        write_header(out, block_tag::dense, static_cast<std::uint32_t>(len));
        std::memset(out + header_bytes + len * sizeof(T), 0, padded(len * sizeof(T)) - len * sizeof(T));
        return dense_bytes<T>(len);
    }
    const sparse_reduce::detail::dense_reader<T> reader({p, len}, id);
    switch (f) {
    case format::index_value: {
        if (!scan.complete) return write_index_value<T, Offset>(reader, s.entries, id, tag, out);
        write_header(out, tag, checked_count<T>(s.entries));
        const std::size_t offset_bytes = s.entries * sizeof(Offset), value_bytes = s.entries * sizeof(T);
        std::byte* values = out + header_bytes + padded(offset_bytes);
        std::memset(out + header_bytes + offset_bytes, 0, padded(offset_bytes) - offset_bytes);
        std::memmove(values, scan.gathered, value_bytes); // down to its place (overlapping)
        std::memset(values + value_bytes, 0, padded(value_bytes) - value_bytes);
        return header_bytes + padded(offset_bytes) + padded(value_bytes);
    }
    case format::rle: return write_rle<T>(reader, s.rle_words, len, id, out);
    case format::dense:
    case format::adaptive: break;
    }
    return write_dense<T>(p, len, out);
}

} // namespace detail

// Encodes the entries of `r` (indices relative to the block, all below len)
// as one block at `out` (8-aligned, room for max_block_bytes<T>(len, f)).
// Returns the bytes written, a multiple of 8.
template <wire_value T, class Reader>
std::size_t encode_block(Reader r, std::size_t len, const T& id, format f, std::byte* out)
{
    detail::checked_count<T>(len);
    if constexpr (requires { r.source(); }) { // a dense source: no walk entry by entry
        const T* p = r.source().data();
        if (f == format::dense) return detail::write_dense<T>(p, len, out);
        if constexpr (rle_value<T>) {
            using L = sparse_reduce::detail::rle::layout<T>;
            if (f != format::rle && len <= L::max_run && !sparse_reduce::detail::rle::is_marker(id))
                return len <= max_u16_offsets_length
                           ? detail::encode_dense_source<T, std::uint16_t>(p, len, id, f, block_tag::index_value16, out)
                           : detail::encode_dense_source<T, std::uint32_t>(p, len, id, f, block_tag::index_value32, out);
        }
    }
    const auto s = detail::measure<T>(r, len, id);
    if (f == format::adaptive) f = detail::smallest_format<T>(len, s);
    switch (f) {
    case format::index_value:
        return len <= max_u16_offsets_length
                   ? detail::write_index_value<T, std::uint16_t>(r, s.entries, id, block_tag::index_value16, out)
                   : detail::write_index_value<T, std::uint32_t>(r, s.entries, id, block_tag::index_value32, out);
    case format::rle:
        if constexpr (rle_value<T>) {
            return detail::write_rle<T>(r, s.rle_words, len, id, out);
        } else {
            detail::fail("the rle wire format needs float or double values");
        }
    case format::adaptive: // resolved above: never reached
    case format::dense: {
        if constexpr (requires { r.source(); }) {
            return detail::write_dense<T>(r.source().data(), len, out);
        } else {
            detail::write_header(out, block_tag::dense, static_cast<std::uint32_t>(len));
            T* val = reinterpret_cast<T*>(out + header_bytes);
            std::fill(val, val + len, id);
            for (; !r.done(); r.next()) val[r.index()] = r.value();
            std::memset(reinterpret_cast<std::byte*>(val + len), 0, padded(len * sizeof(T)) - len * sizeof(T));
            return dense_bytes<T>(len);
        }
    }
    }
    detail::fail("encode_block: not a wire::format (" + std::to_string(static_cast<int>(f)) + ")");
}

// Encodes a dense block.
template <wire_value T>
std::size_t encode_block(std::span<const T> block, const T& id, format f, std::byte* out)
{
    return encode_block<T>(sparse_reduce::detail::dense_reader<T>(block, id), block.size(), id, f, out);
}

// A decoded block, read in place from the buffer.
template <class T>
struct block_view {
    block_tag tag;
    std::size_t length;      // block length (elements)
    std::size_t count;       // dense: length; index_value: entries; rle: words
    const void* offsets;     // index_value only
    const T* values;         // dense values, entry values, or rle words
    std::size_t bytes;       // bytes the block occupies in the buffer
};

// Parses the block at the front of `bytes` for a block of `len` elements.
// Checks the header and sizes; the entries themselves are checked by the
// reader that visit_block hands out.
template <wire_value T>
block_view<T> parse_block(std::span<const std::byte> bytes, std::size_t len)
{
    if (bytes.size() < header_bytes) detail::fail("malformed block: truncated header");
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 8 != 0) detail::fail("malformed block: misaligned buffer");
    const auto tag = static_cast<std::uint8_t>(bytes[0]);
    std::uint32_t count;
    std::memcpy(&count, bytes.data() + 4, 4);
    const std::byte* payload = bytes.data() + header_bytes;
    if (tag > static_cast<std::uint8_t>(block_tag::rle)) // the last tag
        detail::fail("malformed block: unknown tag " + std::to_string(tag));
    block_view<T> v{static_cast<block_tag>(tag), len, count, nullptr, nullptr, 0};
    auto need = [&](std::size_t n) {
        if (n > bytes.size()) detail::fail("malformed block: truncated, it needs " + std::to_string(n) + " bytes of " +
                                           std::to_string(bytes.size()));
        v.bytes = n;
    };
    switch (v.tag) {
    case block_tag::dense:
        if (count != len) detail::fail("malformed block: dense count " + std::to_string(count) + " for a block of " +
                                       std::to_string(len));
        need(dense_bytes<T>(len));
        v.values = reinterpret_cast<const T*>(payload);
        break;
    case block_tag::index_value16:
    case block_tag::index_value32: {
        if (count > len) detail::fail("malformed block: " + std::to_string(count) + " entries in a block of " +
                                      std::to_string(len));
        const std::size_t osize = v.tag == block_tag::index_value16 ? 2 : 4;
        if (osize == 2 && len > max_u16_offsets_length)
            detail::fail("malformed block: 16-bit offsets for a block of " + std::to_string(len));
        need(header_bytes + padded(count * osize) + padded(count * sizeof(T)));
        v.offsets = payload;
        v.values = reinterpret_cast<const T*>(payload + padded(count * osize));
        break;
    }
    case block_tag::rle:
        if constexpr (!rle_value<T>) detail::fail("malformed block: rle block for a type that has no rle form");
        if (count > sparse_reduce::detail::rle::max_words(len)) detail::fail("malformed block: rle block longer than its worst case");
        need(rle_bytes<T>(count));
        v.values = reinterpret_cast<const T*>(payload);
        break;
    }
    return v;
}

// Calls f(reader) with an entry reader over the block (indices relative to it).
template <wire_value T, class F>
decltype(auto) visit_block(const block_view<T>& v, const T& id, F&& f)
{
    namespace d = sparse_reduce::detail;
    switch (v.tag) {
    case block_tag::index_value16:
        return f(d::sparse_reader<T, std::uint16_t>({static_cast<const std::uint16_t*>(v.offsets), v.count},
                                                    {v.values, v.count}, v.length));
    case block_tag::index_value32:
        return f(d::sparse_reader<T, std::uint32_t>({static_cast<const std::uint32_t*>(v.offsets), v.count},
                                                    {v.values, v.count}, v.length));
    case block_tag::rle:
        if constexpr (rle_value<T>) return f(d::rle_reader<T>({v.values, v.count}, v.length, id));
        [[fallthrough]];
    case block_tag::dense: return f(d::dense_reader<T>({v.values, v.length}, id));
    }
    sparse_reduce::detail::unreachable(); // parse_block admits no other tag
}

// Writes a block into a dense array of its length: dense blocks are copied
// as they are, the others fill the identity and place their entries.
template <wire_value T>
void decode_block_into(const block_view<T>& v, const T& id, std::span<T> out)
{
    if (out.size() != v.length) detail::fail("decode_block_into: output length differs from the block's");
    if (v.tag == block_tag::dense) {
        if (v.length) std::memcpy(static_cast<void*>(out.data()), v.values, v.length * sizeof(T));
        return;
    }
    visit_block(v, id, [&](auto reader) {
        sparse_reduce::detail::dense_sink<T> sink(out, id);
        sparse_reduce::detail::drain(reader, sink);
    });
}

} // namespace wire
} // namespace sparse_reduce
