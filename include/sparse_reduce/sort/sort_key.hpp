#pragma once
// What the distributed sort accepts as a key, and how keys travel.
//
//   sort_key<K>              trivially copyable: sent as raw bytes (MPI_BYTE),
//                            never through Boost.Serialization
//   key_order<C, K>          a strict weak order over K (std::less<> by default)
//   key_interpolation<F, K>  f(lo, hi, fraction) -> a key between lo and hi;
//                            interpolate<> does it for arithmetic keys, users
//                            give their own for struct keys
//
// The interpolation contract, which find_splitters relies on to terminate:
// for lo < hi the result k satisfies lo <= k <= hi, and lo < k < hi whenever
// some key lies strictly between them (fraction 0.5 must then land inside).

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "../error.hpp"

namespace sparse_reduce {

/// A key the distributed sort accepts: trivially copyable (sent as raw bytes) and default-initialisable.
template <class K>
concept sort_key = std::is_trivially_copyable_v<K> && std::default_initializable<K>;

/// A strict weak order over K, copyable (std::less<> by default).
template <class C, class K>
concept key_order = std::strict_weak_order<const C&, const K&, const K&> && std::copy_constructible<C>;

/// f(lo, hi, fraction) -> a key between lo and hi; the header comment gives
/// the contract find_splitters relies on to terminate.
template <class F, class K>
concept key_interpolation = std::copy_constructible<F> && requires(const F& f, const K& a, double x) {
    { f(a, a, x) } -> std::convertible_to<K>;
};

/// The tag of an interpolation's bisection overload: f(lo, hi, bisect) is
/// the step find_splitters takes after a proportional step that did not
/// halve its bracket; an interpolation without that overload is bisected
/// with fraction 0.5.
struct bisect_t {
    explicit bisect_t() = default;
};
inline constexpr bisect_t bisect{}; ///< The bisect_t tag value.

// Linear interpolation for integers and floating-point keys. Integers are
// interpolated in long double and clamped strictly inside (lo, hi) when
// there is room; floating-point keys step off the ends with nextafter.
struct interpolate {
    template <class T>
        requires std::is_arithmetic_v<T>
    T operator()(const T& lo, const T& hi, double fraction) const
    {
        if (!(lo < hi)) return lo;
        fraction = std::clamp(fraction, 0.0, 1.0);
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            const U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
            if (span < 2) return lo; // nothing strictly between
            U step = static_cast<U>(static_cast<long double>(span) * static_cast<long double>(fraction));
            step = std::clamp<U>(step, 1, static_cast<U>(span - 1));
            return static_cast<T>(static_cast<U>(static_cast<U>(lo) + step));
        } else {
            // (1 - f) lo + f hi: no overflow of hi - lo
            return inside(lo, hi, static_cast<T>((1 - static_cast<T>(fraction)) * lo + static_cast<T>(fraction) * hi));
        }
    }

    // Bisection. Integers: the midpoint, or the geometric midpoint over
    // non-negative values of very different magnitudes (heavy tails: the bit
    // length halves per step instead of the value range). Floating point: the
    // midpoint of the order-preserving bit image (the representable values
    // between the ends halve).
    template <class T>
        requires std::is_arithmetic_v<T>
    T operator()(const T& lo, const T& hi, bisect_t) const
    {
        if (!(lo < hi)) return lo;
        if constexpr (std::is_integral_v<T>) {
            if (lo >= T(0) && static_cast<long double>(hi) > 4 * (static_cast<long double>(lo) + 1)) {
                const long double g = std::sqrt((static_cast<long double>(lo) + 1) * (static_cast<long double>(hi) + 1)) - 1;
                const long double span = static_cast<long double>(hi) - static_cast<long double>(lo);
                return (*this)(lo, hi, static_cast<double>((g - static_cast<long double>(lo)) / span));
            }
            return (*this)(lo, hi, 0.5);
        } else {
            const auto a = to_ordinal(lo), b = to_ordinal(hi);
            return inside(lo, hi, from_ordinal<T>((a >> 1) + (b >> 1) + (a & b & 1)));
        }
    }

private:
    // k moved strictly inside (lo, hi) when possible, else lo.
    template <class T>
    static T inside(const T& lo, const T& hi, T k)
    {
        if (!(lo < k)) k = std::nextafter(lo, hi);
        if (!(k < hi)) k = std::nextafter(hi, lo);
        return lo < k && k < hi ? k : lo;
    }
    // Floating point to an unsigned integer with the same order (-0.0 and 0.0 adjacent).
    template <class T>
    static auto to_ordinal(T x)
    {
        using U = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
        const U b = std::bit_cast<U>(x);
        constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
        return b & sign ? static_cast<U>(~b) : static_cast<U>(b | sign);
    }
    template <class T, class U>
    static T from_ordinal(U u)
    {
        constexpr U sign = U(1) << (sizeof(U) * 8 - 1);
        return std::bit_cast<T>(u & sign ? static_cast<U>(u & ~sign) : static_cast<U>(~u));
    }
};

} // namespace sparse_reduce
