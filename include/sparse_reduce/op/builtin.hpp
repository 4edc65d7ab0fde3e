#pragma once
/// @file
/// Identities and commutativity of the operations users already have:
/// std::plus, multiplies, bit_and/or/xor, logical_and/or (typed or `<void>`),
/// boost::mpi::minimum/maximum/bitwise_*/logical_xor, and sparse_reduce::min/max.
/// Included by `<sparse_reduce/sparse_reduce.hpp>`.

#include <functional>
#include <limits>
#include <type_traits>

#include <boost/mpi/operations.hpp>

#include "associative_op.hpp"

namespace sparse_reduce {

/// Minimum as a transparent function object (std has none); identity +inf
/// (or the type's max).
/// noexcept where comparing and copying are, so collectives that agree on
/// failures can skip the agreement a throwing fold needs.
struct min {
    template <class T>
    constexpr T operator()(const T& a, const T& b) const
        noexcept(noexcept(b < a) && std::is_nothrow_copy_constructible_v<T>)
    {
        return b < a ? b : a;
    }
};
/// Maximum as a transparent function object; identity -inf (or the type's lowest).
struct max {
    template <class T>
    constexpr T operator()(const T& a, const T& b) const
        noexcept(noexcept(a < b) && std::is_nothrow_copy_constructible_v<T>)
    {
        return a < b ? b : a;
    }
};

namespace detail {

template <class T>
constexpr T min_identity()
{
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
}
template <class T>
constexpr T max_identity()
{
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
}
template <class T>
constexpr T all_ones()
{
    if constexpr (std::is_same_v<T, bool>) return true;
    else return static_cast<T>(~T{});
}

// Matches Op<U> for any U, and Op<> (void).
template <class Op, template <class> class Tmpl>
inline constexpr bool is_instance_v = false;
template <class U, template <class> class Tmpl>
inline constexpr bool is_instance_v<Tmpl<U>, Tmpl> = true;

enum class builtin { none, plus, multiplies, bit_and, bit_or, bit_xor, logical_and, logical_or,
                     logical_xor, min, max };

template <class Op>
constexpr builtin builtin_kind()
{
    if constexpr (is_instance_v<Op, std::plus>) return builtin::plus;
    else if constexpr (is_instance_v<Op, std::multiplies>) return builtin::multiplies;
    else if constexpr (is_instance_v<Op, std::bit_and> || is_instance_v<Op, boost::mpi::bitwise_and>)
        return builtin::bit_and;
    else if constexpr (is_instance_v<Op, std::bit_or> || is_instance_v<Op, boost::mpi::bitwise_or>)
        return builtin::bit_or;
    else if constexpr (is_instance_v<Op, std::bit_xor> || is_instance_v<Op, boost::mpi::bitwise_xor>)
        return builtin::bit_xor;
    else if constexpr (is_instance_v<Op, std::logical_and>) return builtin::logical_and;
    else if constexpr (is_instance_v<Op, std::logical_or>) return builtin::logical_or;
    else if constexpr (is_instance_v<Op, boost::mpi::logical_xor>) return builtin::logical_xor;
    else if constexpr (is_instance_v<Op, boost::mpi::minimum> || std::is_same_v<Op, sparse_reduce::min>)
        return builtin::min;
    else if constexpr (is_instance_v<Op, boost::mpi::maximum> || std::is_same_v<Op, sparse_reduce::max>)
        return builtin::max;
    else return builtin::none;
}

} // namespace detail

/// The built-in operations' identities: 0 for plus, bit_or, bit_xor; 1 for
/// multiplies; all ones for bit_and; true for logical_and; false for
/// logical_or and logical_xor; +inf (or max) for min, -inf (or lowest) for max.
template <class Op, class T>
    requires(detail::builtin_kind<Op>() != detail::builtin::none)
struct identity_element<Op, T> {
    /// The identity of Op over T.
    static constexpr T value(const Op&)
    {
        using detail::builtin;
        constexpr builtin kind = detail::builtin_kind<Op>();
        if constexpr (kind == builtin::multiplies) return T(1);
        else if constexpr (kind == builtin::bit_and) return detail::all_ones<T>();
        else if constexpr (kind == builtin::logical_and) return T(true);
        else if constexpr (kind == builtin::logical_or || kind == builtin::logical_xor) return T(false);
        else if constexpr (kind == builtin::min) return detail::min_identity<T>();
        else if constexpr (kind == builtin::max) return detail::max_identity<T>();
        else return T{}; // plus, bit_or, bit_xor
    }
};

/// Every built-in operation is commutative.
template <class Op, class T>
    requires(detail::builtin_kind<Op>() != detail::builtin::none)
struct is_commutative<Op, T> : std::true_type {};

} // namespace sparse_reduce
