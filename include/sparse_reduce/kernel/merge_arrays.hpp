#pragma once
// The hot loops of a sparse reduction on raw index/value arrays, with no
// per-entry checks: the arrays were validated once (validate_entries) or were
// written by this library.
//
//   merge_arrays     a ⊗ b of two sorted lists into a third (branchy two-pointer:
//                    on this hardware 15 instructions per entry against 55 for a
//                    branch-free kernel at 1% density)
//   fold_values      one element: a ⊗ b, or the present side where one is absent
//   fold_onto        one present element into an accumulator that may be absent
//   scatter_fold     a sorted list folded into a dense array
//   fold_dense(_to)  a dense array folded into another under the same law
//   gather_entries   a dense array's non-identity entries as a sorted list
//
// Identity semantics, the README's promise: an entry absent on one side takes
// the other side's value bit for bit (NaN payloads, -0.0); only where both
// sides hold a value is op applied, and a result equal to the identity is
// dropped. In a dense array "absent" is an element equal to the identity.
// `left` says on which side of op the incoming operand goes, so
// non-commutative operations keep rank order.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "../detail/value_equal.hpp"
#include "../error.hpp"


namespace sparse_reduce::detail {

template <class I>
constexpr auto as_unsigned(I i) noexcept
{
    return static_cast<std::make_unsigned_t<I>>(i);
}

// Copies n entries, converting the index type where it differs.
template <class IO, class II, class T>
void copy_entries(const II* idx, const T* val, std::size_t n, IO* oi, T* ov) noexcept
{
    if (n == 0) return;
    if constexpr (sizeof(IO) == sizeof(II) && std::is_integral_v<IO> && std::is_integral_v<II>)
        std::memcpy(oi, idx, n * sizeof(IO));
    else
        for (std::size_t k = 0; k < n; ++k) oi[k] = static_cast<IO>(idx[k]);
    std::memcpy(static_cast<void*>(ov), val, n * sizeof(T));
}

// out = a ⊗ b; returns the entries written (at most na + nb). The heads
// stay in registers across iterations (measured: 24 instructions per entry
// against 29 reloading them).
template <class IO, class IA, class IB, class T, class Op>
std::size_t merge_arrays(const IA* __restrict ai, const T* __restrict av, std::size_t na, const IB* __restrict bi,
                         const T* __restrict bv, std::size_t nb, IO* __restrict oi, T* __restrict ov, const Op& op,
                         const T& id_ref)
{
    const T id = id_ref;
    std::size_t i = 0, j = 0, n = 0;
    if (na && nb) {
        auto x = as_unsigned(ai[0]);
        auto y = as_unsigned(bi[0]);
        for (;;) {
            if (x < y) {
                oi[n] = static_cast<IO>(x);
                ov[n++] = av[i];
                if (++i == na) break;
                x = as_unsigned(ai[i]);
            } else if (y < x) {
                oi[n] = static_cast<IO>(y);
                ov[n++] = bv[j];
                if (++j == nb) break;
                y = as_unsigned(bi[j]);
            } else {
                const T r = static_cast<T>(op(av[i], bv[j]));
                oi[n] = static_cast<IO>(x);
                ov[n] = r;
                n += !same_value(r, id);
                ++i;
                ++j;
                if (i == na || j == nb) break;
                x = as_unsigned(ai[i]);
                y = as_unsigned(bi[j]);
            }
        }
    }
    copy_entries(ai + i, av + i, na - i, oi + n, ov + n);
    n += na - i;
    copy_entries(bi + j, bv + j, nb - j, oi + n, ov + n);
    return n + nb - j;
}

// a ⊗ b where both are present; the present one, bit for bit, where only one
// is (op(identity, x) may not be x: min(+inf, NaN) is +inf, 0.0 + -0.0 is
// 0.0, a signalling NaN comes out quiet); the identity where neither is.
template <class T, class Op>
T fold_values(const T& a, const T& b, const Op& op, const T& id)
{
    if (same_value(a, id)) return b;
    if (same_value(b, id)) return a;
    return static_cast<T>(op(a, b));
}

// acc ⊗ v (v on the left with `left`) for a v known to be present (a wire
// block's or a merge's entry): v itself where acc is the identity. Written
// as a select, not with masks: 0.6-0.7 ns per entry scattered into a
// half-full window against 0.5 for op alone and 1.2-1.3 with bit masks
// (g++ 12 -O3, 2^14-element window).
template <class T, class Op>
[[gnu::always_inline]] inline T fold_onto(const T& acc, const T& v, bool left, const Op& op, const T& id)
{
    return same_value(acc, id) ? v : left ? static_cast<T>(op(v, acc)) : static_cast<T>(op(acc, v));
}

// acc[idx[k]] = val[k] ⊗ acc (left) or acc ⊗ val[k] (right).
template <class I, class T, class Op>
void scatter_fold(T* acc, const I* idx, const T* val, std::size_t n, bool left, const Op& op, const T& id)
{
    for (std::size_t k = 0; k < n; ++k) {
        T& a = acc[as_unsigned(idx[k])];
        a = same_value(a, id) ? val[k] : left ? static_cast<T>(op(val[k], a)) : static_cast<T>(op(a, val[k]));
    }
}

// out[i] = a[i] ⊗ b[i] under the identity law of fold_values, for i < n;
// out may be a or b. Written as selects, which g++ -O3 vectorises (op
// evaluated for every element, the result blended): 0.44-0.47 ns per
// element against 0.22 for op alone with no identity in the data, 0.51
// against 0.24 with half of the elements identities at random (2^14
// doubles, +; a chunked variant that tested for identities first and
// masked by bits took 1.08 on the latter).
template <class T, class Op>
void fold_dense_to(T* out, const T* a, const T* b, std::size_t n, const Op& op, const T& id)
{
    for (std::size_t i = 0; i < n; ++i) out[i] = fold_values(a[i], b[i], op, id);
}

// acc[i] = x[i] ⊗ acc[i] (left) or acc[i] ⊗ x[i] (right), for i < n.
template <class T, class Op>
void fold_dense(T* acc, const T* x, std::size_t n, bool left, const Op& op, const T& id)
{
    if (left) fold_dense_to(acc, x, acc, n, op, id);
    else fold_dense_to(acc, acc, x, n, op, id);
}

// The non-identity elements of x[0, n) as entries; returns their number.
// Writes nothing past the entries it returns: the branch-free loop stores
// every element at the next free slot, so it stops at the last entry (a
// trailing identity would otherwise land one slot past the end, i.e. in
// front of the values of a message sized for exactly these entries).
template <class IO, class T>
std::size_t gather_entries(const T* x, std::size_t n, IO* oi, T* ov, const T& id) noexcept
{
    while (n > 0 && same_value(x[n - 1], id)) --n;
    std::size_t m = 0;
    for (std::size_t i = 0; i < n; ++i) {
        oi[m] = static_cast<IO>(i);
        ov[m] = x[i];
        m += !same_value(x[i], id);
    }
    return m;
}

// How many adjacent pairs are out of order: 0 for strictly increasing
// indices. A count, not an early exit, so the loop vectorises.
template <class I>
std::size_t count_unordered(const I* idx, std::size_t n) noexcept
{
    std::size_t bad = 0;
    for (std::size_t k = 1; k < n; ++k) bad += idx[k - 1] >= idx[k];
    return bad;
}

// How many values are the identity (floating point by bits). x | -x has its
// top bit set iff x != 0, so the count vectorises even on plain SSE2 (which
// has no 64-bit compare).
template <class T>
std::size_t count_identities(const T* val, std::size_t n, const T& id) noexcept
{
    if constexpr (bit_comparable_float<T>) {
        using B = bits_of<T>;
        using bits [[gnu::may_alias]] = B;
        const auto* b = reinterpret_cast<const bits*>(val);
        B ib;
        std::memcpy(&ib, &id, sizeof ib);
        B others = 0;
        for (std::size_t k = 0; k < n; ++k) {
            const B x = b[k] ^ ib;
            others += static_cast<B>(x | (B(0) - x)) >> (8 * sizeof(B) - 1);
        }
        return n - static_cast<std::size_t>(others);
    } else {
        std::size_t c = 0;
        for (std::size_t k = 0; k < n; ++k) c += same_value(val[k], id);
        return c;
    }
}

// The one check of a caller's entry list: indices strictly increasing, not
// negative, below the dimension. Returns an empty string when they are, else
// what is wrong; counts the stored identities (which the callers filter).
template <class I, class T>
std::string validate_entries(const I* idx, const T* val, std::size_t n, std::size_t dimension, std::size_t* identities,
                             const T& id)
{
    if (n == 0) return {};
    if constexpr (std::is_signed_v<I>)
        if (idx[0] < 0) return "negative index " + std::to_string(idx[0]);
    if (as_unsigned(idx[n - 1]) >= dimension)
        return "index " + std::to_string(idx[n - 1]) + " is out of range for dimension " + std::to_string(dimension);
    if (count_unordered(idx, n)) {
        std::size_t k = 1;
        while (idx[k - 1] < idx[k]) ++k;
        return "indices not strictly increasing at position " + std::to_string(k) + " (" + std::to_string(idx[k - 1]) +
               ", " + std::to_string(idx[k]) + ")";
    }
    *identities = count_identities(val, n, id);
    return {};
}

} // namespace sparse_reduce::detail
