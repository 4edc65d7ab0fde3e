#pragma once
// The adaptive block encoding: one block of the index space on the wire, in
// whichever of its forms is smallest, marked by a one-byte tag.
//
//   +-----+-------+---------+----------------------------------------------+
//   | tag | 0 0 0 | count32 | payload, each array padded to 8 bytes       |
//   +-----+-------+---------+----------------------------------------------+
//   tag 0 dense          count = block length; count values
//   tag 1 index_value16  count entries: count u16 offsets, count values
//   tag 2 index_value32  count entries: count u32 offsets, count values
//   tag 3 rle            count words of the NaN-marker RLE (float, double)
//   tag 4 bitmap         count entries: a bit per element (ceil(len / 64)
//                        u64 words), count values (wire/bitmap.hpp)
//   tag 5 empty_run      no payload: this window and the count - 1 after it
//                        in its stream (the next ones, or every S-th over
//                        S broadcast trees) hold only the identity (allreduce's sparse
//                        partials, so an empty window costs neither bytes
//                        nor a pass; parse_block takes it only when asked)
//
// Offsets are relative to the block's first index; the block length is known
// to both sides. The 8-byte header keeps every payload 8-aligned, so a
// receiver reads values in place. Adaptive never picks a form larger than
// dense, so incompressible data costs dense plus the 8-byte header. The
// bitmap form is adaptive's own (no policy asks for it): the smallest from
// about 1/16 of a block full up to 63/64, where partial results spend most
// of a tree's way up; the caller leaves it out where its bytes are not worth
// its time (cost_model::bitmap_pays).
// Decoding checks everything it reads: a wrong tag, a count past the buffer,
// offsets out of order or out of range, a malformed RLE stream all throw
// sparse_reduce::error, and nothing is read outside the given bytes.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "../detail/exhaustive.hpp"
#include "../error.hpp"
#include "../kernel/entry_stream.hpp"
#include "bitmap.hpp"
#include "dense_source.hpp"
#include "forms.hpp"

namespace sparse_reduce {
namespace wire {

// Encodes the entries of `r` (indices relative to the block, all below len)
// as one block at `out` (8-aligned, room for max_block_bytes<T>(len, f)).
// Returns the bytes written, a multiple of 8. Without `bitmap` adaptive
// leaves out the bitmap form (where its bytes are not worth its time:
// cost_model::bitmap_pays).
template <wire_value T, class Reader>
std::size_t encode_block(Reader r, std::size_t len, const T& id, format f, std::byte* out, bool bitmap = true)
{
    detail::checked_count<T>(len);
    if constexpr (requires { r.source(); }) { // a dense source: no walk entry by entry
        const T* p = r.source().data();
        if (f == format::dense) return detail::write_dense<T>(p, len, out);
        if constexpr (rle_value<T>) {
            using L = sparse_reduce::detail::rle::layout<T>;
            if (f != format::rle && len <= L::max_run && !sparse_reduce::detail::rle::is_marker(id))
                return len <= max_u16_offsets_length
                           ? detail::encode_dense_source<T, std::uint16_t>(p, len, id, f, block_tag::index_value16, out, bitmap)
                           : detail::encode_dense_source<T, std::uint32_t>(p, len, id, f, block_tag::index_value32, out, bitmap);
        }
    }
    const auto s = detail::measure<T>(r, len, id);
    switch (detail::form_for<T>(f, len, s, bitmap)) {
    case detail::form::index_value:
        return len <= max_u16_offsets_length
                   ? detail::write_index_value<T, std::uint16_t>(r, s.entries, id, block_tag::index_value16, out)
                   : detail::write_index_value<T, std::uint32_t>(r, s.entries, id, block_tag::index_value32, out);
    case detail::form::bitmap: return detail::write_bitmap_block<T>(r, len, s.entries, id, out);
    case detail::form::rle:
        if constexpr (rle_value<T>) {
            return detail::write_rle<T>(r, s.rle_words, len, id, out);
        } else {
            detail::fail("the rle wire format needs float or double values");
        }
    case detail::form::dense: break;
    }
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

// Encodes a dense block.
template <wire_value T>
std::size_t encode_block(std::span<const T> block, const T& id, format f, std::byte* out, bool bitmap = true)
{
    return encode_block<T>(sparse_reduce::detail::dense_reader<T>(block, id), block.size(), id, f, out, bitmap);
}

// A decoded block, read in place from the buffer.
template <class T>
struct block_view {
    block_tag tag;
    std::size_t length;      // block length (elements)
    std::size_t count;       // dense: length; index_value, bitmap: entries; rle: words
    const void* offsets;     // index_value: the offsets; bitmap: the bitmap
    const T* values;         // dense values, entry values, or rle words
    std::size_t bytes;       // bytes the block occupies in the buffer
};

// Parses the block at the front of `bytes` for a block of `len` elements.
// Checks the header and sizes; the entries themselves are checked by the
// reader that visit_block hands out.
// With `runs`, an empty run is a block too (its view's count: its windows;
// the caller checks they lie within its range); without, its tag is unknown.
template <wire_value T>
block_view<T> parse_block(std::span<const std::byte> bytes, std::size_t len, bool runs = false)
{
    if (bytes.size() < header_bytes) detail::fail("malformed block: truncated header");
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 8 != 0) detail::fail("malformed block: misaligned buffer");
    const auto tag = static_cast<std::uint8_t>(bytes[0]);
    std::uint32_t count;
    std::memcpy(&count, bytes.data() + 4, 4);
    const std::byte* payload = bytes.data() + header_bytes;
    if (tag > static_cast<std::uint8_t>(runs ? block_tag::empty_run : block_tag::bitmap)) // the last tag
        detail::fail("malformed block: unknown tag ", tag);
    block_view<T> v{static_cast<block_tag>(tag), len, count, nullptr, nullptr, 0};
    auto need = [&](std::size_t n) {
        if (n > bytes.size()) detail::fail("malformed block: truncated, it needs ", n, " bytes of ", bytes.size());
        v.bytes = n;
    };
    switch (v.tag) {
    case block_tag::dense:
        if (count != len) detail::fail("malformed block: dense count ", count, " for a block of ", len);
        need(dense_bytes<T>(len));
        v.values = reinterpret_cast<const T*>(payload);
        break;
    case block_tag::index_value16:
    case block_tag::index_value32: {
        if (count > len) detail::fail("malformed block: ", count, " entries in a block of ", len);
        const std::size_t osize = v.tag == block_tag::index_value16 ? 2 : 4;
        if (osize == 2 && len > max_u16_offsets_length)
            detail::fail("malformed block: 16-bit offsets for a block of ", len);
        need(header_bytes + padded(count * osize) + padded(count * sizeof(T)));
        v.offsets = payload;
        v.values = reinterpret_cast<const T*>(payload + padded(count * osize));
        break;
    }
    case block_tag::bitmap: {
        if (count > len) detail::fail("malformed block: ", count, " entries in a block of ", len);
        const std::size_t bitmap = 8 * sparse_reduce::detail::bitmap_words(len);
        need(header_bytes + bitmap + padded(count * sizeof(T)));
        v.offsets = payload;
        v.values = reinterpret_cast<const T*>(payload + bitmap);
        const std::size_t marked = sparse_reduce::detail::bitmap_count(static_cast<const std::uint64_t*>(v.offsets), len);
        if (marked > len) detail::fail("malformed block: a bitmap marks an element past the block");
        if (marked != count) detail::fail("malformed block: a bitmap marks ", marked, " entries, its count says ",
                                          count);
        break;
    }
    case block_tag::rle:
        if constexpr (!rle_value<T>) detail::fail("malformed block: rle block for a type that has no rle form");
        if (count > sparse_reduce::detail::rle::max_words(len)) detail::fail("malformed block: rle block longer than its worst case");
        need(rle_bytes<T>(count));
        v.values = reinterpret_cast<const T*>(payload);
        break;
    case block_tag::empty_run:
        if (count == 0) detail::fail("malformed block: an empty run of no windows");
        need(header_bytes);
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
    case block_tag::bitmap:
        return f(d::bitmap_reader<T>(static_cast<const std::uint64_t*>(v.offsets), v.values, v.length));
    case block_tag::empty_run:
        return f(d::sparse_reader<T, std::uint32_t>({static_cast<const std::uint32_t*>(nullptr), 0},
                                                    {static_cast<const T*>(nullptr), 0}, v.length));
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
