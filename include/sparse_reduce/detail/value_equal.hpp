#pragma once
// When is a stored value "the identity"? Floating-point values compare by
// bits, so -0.0 and every NaN payload are data, never silently dropped or
// rewritten; other types use ==, or their bytes when they have no ==.

#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sparse_reduce::detail {

template <class T>
using bits_of = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                std::conditional_t<sizeof(T) == 4, std::uint32_t,
                std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;

// long double (x87, with padding bytes) is left to operator==.
template <class T>
concept bit_comparable_float = std::floating_point<T> && (sizeof(T) == 8 || sizeof(T) == 4);

template <class T>
constexpr bool same_value(const T& a, const T& b)
{
    if constexpr (bit_comparable_float<T>)
        return std::bit_cast<bits_of<T>>(a) == std::bit_cast<bits_of<T>>(b);
    else if constexpr (std::equality_comparable<T>)
        return a == b;
    else {
        static_assert(std::has_unique_object_representations_v<T>,
                      "sparse_reduce: a value type needs operator== or a padding-free representation");
        return std::memcmp(&a, &b, sizeof(T)) == 0;
    }
}

// 1 if x is not zero, else 0, with no compare: x | -x has its top bit set
// iff x != 0. Loops over these vectorise on plain SSE2, which has no 64-bit
// compare: the present masks and entry counts of dense arrays (x = bits ^
// identity's bits) in the wire encoder, the RLE codec, count_dense_entries
// and fold_dense_to.
template <std::unsigned_integral B>
constexpr B nonzero_bit(B x)
{
    return static_cast<B>(static_cast<B>(x | static_cast<B>(B(0) - x)) >> (sizeof(B) * 8 - 1));
}

} // namespace sparse_reduce::detail
