#pragma once
// A block's entries as two arrays, offsets relative to the block: the one
// form the folds read, whatever form the block travelled in. A fold is then
// compiled once per value type and operator, not once per wire form.
//
//   index_value32   read in place (its offsets are checked)
//   index_value16   offsets widened into the caller's room, values in place
//   bitmap          its set bits listed into the room, values in place
//   rle, dense      their non-identity entries written into the room
//   empty_run       none
//
// The room is window-sized scratch the caller keeps (a block holds at most
// its length in entries). Every form but the first costs one pass over the
// offsets (or the words) into memory the fold then reads from cache.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../kernel/entry_stream.hpp"
#include "bitmap.hpp"
#include "block.hpp"

namespace sparse_reduce::wire {

template <class T>
struct entry_arrays {
    const std::uint32_t* idx; // strictly increasing, below the block length
    const T* val;
    std::size_t n;
};

template <wire_value T>
entry_arrays<T> entries_of(const block_view<T>& v, const T& id, std::uint32_t* idx_room, T* val_room)
{
    namespace d = sparse_reduce::detail;
    switch (v.tag) {
    case block_tag::index_value32: {
        const auto* off = static_cast<const std::uint32_t*>(v.offsets);
        d::sparse_reader<T, std::uint32_t>({off, v.count}, {v.values, v.count}, v.length); // checks the offsets
        return {off, v.values, v.count};
    }
    case block_tag::index_value16: {
        const auto* off = static_cast<const std::uint16_t*>(v.offsets);
        d::sparse_reader<T, std::uint16_t>({off, v.count}, {v.values, v.count}, v.length);
        std::copy(off, off + v.count, idx_room);
        return {idx_room, v.values, v.count};
    }
    case block_tag::bitmap: { // bitmap_count checked the bits when the block was parsed
        std::uint32_t* out = idx_room;
        d::bitmap_reader<T>(static_cast<const std::uint64_t*>(v.offsets), v.values, v.length)
            .for_each([&out](std::size_t i, const T&) { *out++ = static_cast<std::uint32_t>(i); });
        return {idx_room, v.values, static_cast<std::size_t>(out - idx_room)};
    }
    case block_tag::empty_run: return {idx_room, val_room, 0};
    case block_tag::rle:
    case block_tag::dense: break;
    }
    d::sparse_sink<T, std::uint32_t> sink(idx_room, val_room, id);
    if constexpr (rle_value<T>)
        if (v.tag == block_tag::rle) {
            d::rle_reader<T> r({v.values, v.count}, v.length, id);
            d::drain(r, sink);
            return {idx_room, val_room, sink.count()};
        }
    d::dense_reader<T> r({v.values, v.length}, id);
    d::drain(r, sink);
    return {idx_room, val_room, sink.count()};
}

} // namespace sparse_reduce::wire
