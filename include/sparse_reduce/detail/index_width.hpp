#pragma once
// The one rule for the width of indices on the wire and in slices: 32 bits
// while every index of the extent fits (at most 2^32 elements: 0 .. 2^32 - 1),
// else 64. The whole-message path, reduce_scatter's slices and the simulator
// ask it.

#include <cstddef>

namespace sparse_reduce::detail {

inline constexpr bool narrow_indices(std::size_t extent)
{
    return extent <= (std::size_t{1} << 32);
}

} // namespace sparse_reduce::detail
