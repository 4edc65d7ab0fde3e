#pragma once
// A whole partial result as one message (exec/whole_reduce.hpp): a 48-byte
// header, then the entries as two arrays, or every element dense.
//
//   +-------+-------+-----------+-------+--------------+-------------+------+-------------+
//   | magic | flags | dimension | count | value_offset | total_bytes | rank | index_bytes |
//   +-------+-------+-----------+-------+--------------+-------------+------+-------------+
//   index/value form: count indices (index_bytes each) | gap | count values at value_offset
//   dense form:       `dimension` values at value_offset
//   failed:           the error's text (count bytes)
//
// The indices are absolute (4 bytes when the dimension fits 32 bits, else 8),
// strictly increasing; no entry holds the identity. A sender merging into its
// message sizes the index array for the worst case, so a small gap may stand
// between the two arrays. Messages above 1 GiB travel in pieces of 1 GiB
// (MPI counts are int); total_bytes tells the receiver how many follow.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "../error.hpp"
#include "../kernel/merge_arrays.hpp"

namespace sparse_reduce::detail {

struct partial_header {
    static constexpr std::uint32_t magic_value = 0x31505253; // "SRP1"
    static constexpr std::uint32_t failed = 1, dense_form = 2;

    std::uint32_t magic = magic_value;
    std::uint32_t flags = 0;
    std::uint64_t dimension = 0;
    std::uint64_t count = 0;        // entries; dense form: the dimension; failed: the text's bytes
    std::uint64_t value_offset = 0; // from the message's first byte
    std::uint64_t total_bytes = 0;
    std::int32_t error_rank = -1;
    std::uint32_t index_bytes = 0;
};
static_assert(sizeof(partial_header) == 48);

inline constexpr std::size_t partial_header_bytes = sizeof(partial_header);

constexpr std::size_t pad8(std::size_t bytes) { return (bytes + 7) & ~std::size_t{7}; }

// Where a message of `count` entries puts its values, and its size.
template <class T, class I>
constexpr std::size_t partial_value_offset(std::size_t count)
{
    return partial_header_bytes + pad8(count * sizeof(I));
}
template <class T, class I>
constexpr std::size_t partial_bytes(std::size_t count)
{
    return partial_value_offset<T, I>(count) + count * sizeof(T);
}
template <class T>
constexpr std::size_t dense_partial_bytes(std::size_t dimension)
{
    return partial_header_bytes + dimension * sizeof(T);
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

template <class T, class I>
partial_view<T, I> parse_partial(std::byte* msg, std::size_t bytes, std::size_t dimension)
{
    partial_view<T, I> v;
    if (bytes < partial_header_bytes) fail("malformed message: " + std::to_string(bytes) + " bytes, shorter than its header");
    std::memcpy(&v.h, msg, sizeof v.h);
    const partial_header& h = v.h;
    if (h.magic != partial_header::magic_value)
        fail("malformed message: not a whole partial result (do all ranks pass the same kinds of vectors?)");
    if (h.total_bytes != bytes) fail("malformed message: its header says " + std::to_string(h.total_bytes) + " bytes");
    if (h.flags & partial_header::failed) {
        if (h.count != bytes - partial_header_bytes) fail("malformed error message");
        return v;
    }
    if (h.dimension != dimension) return v; // the caller reports the mismatch
    if (h.index_bytes != sizeof(I)) fail("malformed message: index width " + std::to_string(h.index_bytes));
    v.dense = h.flags & partial_header::dense_form;
    v.n = h.count;
    if (v.dense) {
        if (h.count != dimension || h.value_offset != partial_header_bytes || bytes != dense_partial_bytes<T>(dimension))
            fail("malformed message: dense form of the wrong size");
    } else {
        if (h.count > dimension || h.value_offset % 8 != 0 || h.value_offset < partial_value_offset<T, I>(h.count) ||
            h.value_offset > bytes || (bytes - h.value_offset) / sizeof(T) != h.count ||
            (bytes - h.value_offset) % sizeof(T) != 0)
            fail("malformed message: " + std::to_string(h.count) + " entries in " + std::to_string(bytes) + " bytes");
        v.idx = reinterpret_cast<const I*>(msg + partial_header_bytes);
        if (count_unordered(v.idx, v.n) || (v.n && v.idx[v.n - 1] >= dimension))
            fail("malformed message: indices out of order or range");
    }
    v.val = reinterpret_cast<T*>(msg + h.value_offset);
    return v;
}

inline std::string partial_error_text(const std::byte* msg, const partial_header& h)
{
    return std::string(reinterpret_cast<const char*>(msg + partial_header_bytes), h.count);
}

} // namespace sparse_reduce::detail
