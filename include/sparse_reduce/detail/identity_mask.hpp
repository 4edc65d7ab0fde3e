#pragma once
// Which of 32 consecutive float or double values differ from the identity,
// as a 32-bit mask (bit j: p[j]), compared by bits like same_value.
//
// The wire encoder gathers a sparse block's entries by walking the set bits
// of these masks: a few instructions per entry and about one per element,
// where a branch-free gather that stores every element costs five or six
// (kernel_bench "wire encode adaptive" at 10%). On SSE2 (every x86-64) the
// mask comes from 32-bit compares and movemask; elsewhere from nonzero_bit,
// which compilers turn into a shorter but slower loop.

#include <bit>
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#define SPARSE_REDUCE_DETAIL_SSE2 1
#include <emmintrin.h>
#endif

#include "value_equal.hpp"

namespace sparse_reduce::detail {

inline constexpr std::size_t identity_mask_width = 32;

// The portable mask, for any length up to 32 (the tail of a block).
template <bit_comparable_float T>
std::uint32_t nonidentity_mask_portable(const T* p, std::size_t n, bits_of<T> idb) noexcept
{
    std::uint32_t m = 0;
    for (std::size_t j = 0; j < n; ++j)
        m |= static_cast<std::uint32_t>(nonzero_bit(static_cast<bits_of<T>>(std::bit_cast<bits_of<T>>(p[j]) ^ idb)))
             << j;
    return m;
}

// The mask of p[0, 32).
template <bit_comparable_float T>
std::uint32_t nonidentity_mask32(const T* p, bits_of<T> idb) noexcept
{
#if defined(SPARSE_REDUCE_DETAIL_SSE2)
    std::uint32_t equal = 0;
    if constexpr (sizeof(T) == 8) {
        // A double equals the identity when both of its 32-bit halves do:
        // the compare's lanes ANDed with their neighbours, two bits a load.
        const __m128i id = _mm_set1_epi64x(static_cast<long long>(idb));
        for (unsigned j = 0; j < 32; j += 2) {
            __m128i e = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j)), id);
            e = _mm_and_si128(e, _mm_shuffle_epi32(e, 0xB1)); // lanes (1, 0, 3, 2)
            equal |= static_cast<std::uint32_t>(_mm_movemask_pd(_mm_castsi128_pd(e))) << j;
        }
    } else {
        const __m128i id = _mm_set1_epi32(static_cast<int>(idb));
        for (unsigned j = 0; j < 32; j += 4) {
            const __m128i e = _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j)), id);
            equal |= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_castsi128_ps(e))) << j;
        }
    }
    return ~equal;
#else
    return nonidentity_mask_portable(p, 32, idb);
#endif
}

} // namespace sparse_reduce::detail
