#pragma once
// gather_entries: a dense array's non-identity elements as a sorted entry
// list (index base + i, value), in one pass. The windowed root writes its
// dense windows into a sparse output with it (exec/root_output.hpp), the
// whole-message reduce its dense accumulator (exec/whole_reduce.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../detail/value_equal.hpp"

namespace sparse_reduce::detail {

// After a block that is not clean, gather_entries gathers this many
// elements before it checks again (fold_dense_to's rule).
inline constexpr std::size_t gather_run = 256;

#if defined(__GNUC__)
// gather_entries' clean blocks: 4 vectors of 16 bytes none of whose elements
// equals the identity (compared as numbers: for a non-NaN identity a
// superset of its bits) are copied as they are, their indices counted up.
// From i, until the first block that is not clean or fewer than a block
// remain: returns where it stopped, m advanced past the entries written.
template <class IO, class T>
std::size_t copy_clean_blocks(const T* x, std::size_t i, std::size_t n, IO* oi, T* ov, std::size_t& m,
                              std::size_t base, const T id) noexcept
{
    typedef T V __attribute__((vector_size(16)));
    typedef IO VI __attribute__((vector_size(16)));
    constexpr std::size_t L = 16 / sizeof(T), block = 4 * L, LI = 16 / sizeof(IO);
    V idv;
    for (std::size_t l = 0; l < L; ++l) idv[l] = id;
    VI step; // the indices of a block's first LI elements, relative to its start
    for (std::size_t l = 0; l < LI; ++l) step[l] = static_cast<IO>(l);
    const auto load = [](const T* p) {
        V v;
        std::memcpy(&v, p, sizeof v);
        return v;
    };
    for (; i + block <= n; i += block) {
        const V x0 = load(x + i), x1 = load(x + i + L), x2 = load(x + i + 2 * L), x3 = load(x + i + 3 * L);
        const auto absent = (x0 == idv) | (x1 == idv) | (x2 == idv) | (x3 == idv);
        std::uint64_t any[2];
        std::memcpy(any, &absent, sizeof any);
        if (any[0] | any[1]) break;
        std::memcpy(static_cast<void*>(ov + m), &x0, sizeof x0);
        std::memcpy(static_cast<void*>(ov + m + L), &x1, sizeof x1);
        std::memcpy(static_cast<void*>(ov + m + 2 * L), &x2, sizeof x2);
        std::memcpy(static_cast<void*>(ov + m + 3 * L), &x3, sizeof x3);
        VI at = step + static_cast<IO>(base + i);
        for (std::size_t k = 0; k < block; k += LI, at += static_cast<IO>(LI)) std::memcpy(oi + m + k, &at, sizeof at);
        m += block;
    }
    return i;
}
#endif

// The non-identity elements of x[0, n) as entries base + i; returns their number.
// Writes nothing past the entries it returns: the branch-free loop stores
// every element at the next free slot, so it stops at the last entry (a
// trailing identity would otherwise land one slot past the end, i.e. in
// front of the values of a message sized for exactly these entries).
// Blocks without an identity, a dense result's usual case, are copied
// (copy_clean_blocks; from the first that is not, gather_run elements go
// through the loop). Callgrind, g++ 12 -O3, 2^21 doubles at 100%: 2.4
// instructions per element against the loop's 9.
template <class IO, class T>
std::size_t gather_entries(const T* x, std::size_t n, IO* oi, T* ov, const T& id_ref, std::size_t base = 0) noexcept
{
    const T id = id_ref;
    while (n > 0 && same_value(x[n - 1], id)) --n;
    std::size_t m = 0;
    auto gather = [&](std::size_t from, std::size_t to) {
        for (std::size_t i = from; i < to; ++i) {
            oi[m] = static_cast<IO>(base + i);
            ov[m] = x[i];
            m += !same_value(x[i], id);
        }
    };
#if defined(__GNUC__)
    // (a block's indices fill whole vectors of IO: not with 1-byte indices)
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool> && (sizeof(T) == 4 || sizeof(T) == 8) &&
                  std::is_integral_v<IO> && (64 / sizeof(T)) % (16 / sizeof(IO)) == 0)
        if (id == id) { // a NaN identity equals nothing: no block is known clean
            for (std::size_t i = 0; i < n;) {
                const std::size_t stop = copy_clean_blocks(x, i, n, oi, ov, m, base, id);
                i = n - stop > gather_run ? stop + gather_run : n;
                gather(stop, i);
            }
            return m;
        }
#endif
    gather(0, n);
    return m;
}

} // namespace sparse_reduce::detail
