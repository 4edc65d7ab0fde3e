#pragma once
// Increasing indices as the gaps between them, each a LEB128 varint (seven
// bits a byte, low bits first, the high bit set on every byte but a gap's
// last): the first index minus base, then each minus the one before it
// minus one.
//
//   indices 1000, 1001, 1100, 1400 (base 1000) -> gaps 0, 0, 98, 299
//   -> bytes 00 | 00 | 62 | ab 02
//
// Entries at 1 % of a range lie about 100 apart: one or two bytes where a
// listed index takes four. reduce_scatter sends a slice's indices so where
// that is the fewest bytes and bytes are dear (scatter/slices.hpp).

#include <cstddef>
#include <cstdint>

namespace sparse_reduce::detail {

inline std::size_t varint_bytes(std::uint64_t x)
{
    std::size_t b = 1;
    while (x >= 0x80) {
        x >>= 7;
        ++b;
    }
    return b;
}

// The bytes the gaps of idx[0, n) take (increasing, none below base).
template <class I>
std::size_t index_gap_bytes(const I* idx, std::size_t n, std::size_t base)
{
    std::size_t bytes = 0, prev = base;
    for (std::size_t k = 0; k < n; ++k) {
        const auto i = static_cast<std::size_t>(idx[k]);
        bytes += varint_bytes(i - prev);
        prev = i + 1;
    }
    return bytes;
}

// Writes those gaps to out (room for index_gap_bytes); returns the bytes written.
template <class I>
std::size_t write_index_gaps(const I* idx, std::size_t n, std::size_t base, std::byte* out)
{
    std::byte* o = out;
    std::size_t prev = base;
    for (std::size_t k = 0; k < n; ++k) {
        const auto i = static_cast<std::size_t>(idx[k]);
        std::uint64_t g = i - prev;
        for (; g >= 0x80; g >>= 7) *o++ = static_cast<std::byte>(g | 0x80);
        *o++ = static_cast<std::byte>(g);
        prev = i + 1;
    }
    return static_cast<std::size_t>(o - out);
}

// Reads n indices, each plus base, from exactly `bytes` bytes into out
// (room for n): false, with out unspecified, unless the bytes hold exactly
// n gaps, each in the writer's (shortest) form, and every index lies below
// base + len.
template <class I>
bool read_index_gaps(const std::byte* in, std::size_t bytes, std::size_t n, std::size_t base, std::size_t len, I* out)
{
    const std::byte* p = in;
    const std::byte* end = in + bytes;
    std::size_t next = 0; // the least offset the next index may take
    for (std::size_t k = 0; k < n; ++k) {
        std::uint64_t g = 0;
        for (int shift = 0;; shift += 7) {
            if (p == end || shift > 56) return false; // cut short, or more than len can hold
            const auto b = static_cast<std::uint64_t>(*p++);
            g |= (b & 0x7f) << shift;
            if (b & 0x80) continue;
            if (b == 0 && shift > 0) return false; // a longer form than the writer's: one encoding per gap
            break;
        }
        if (next >= len || g >= len - next) return false;
        next += static_cast<std::size_t>(g);
        out[k] = static_cast<I>(base + next);
        ++next;
    }
    return p == end;
}

} // namespace sparse_reduce::detail
