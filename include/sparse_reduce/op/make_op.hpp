#pragma once
/// @file
/// Custom operations: make_op(f, identity, commutative) or make_op(f, identity,
/// non_commutative). Included by `<sparse_reduce/sparse_reduce.hpp>`.
///
/// The op's value type is the identity's type, or named: make_op<double>(f, 0,
/// commutative). Using the op on data of another value type is a compile
/// error. The tag makes commutativity part of the type, so trees that reorder
/// operands can be rejected at compile time.

#include <type_traits>
#include <utility>

#include "associative_op.hpp"

namespace sparse_reduce {

/// Tag type of commutative.
struct commutative_t {
    explicit commutative_t() = default;
};
/// Tag type of non_commutative.
struct non_commutative_t {
    explicit non_commutative_t() = default;
};
/// make_op's tag: the operation is commutative (trees may reorder operands).
inline constexpr commutative_t commutative{};
/// make_op's tag: the operation is not commutative (folded in rank order).
inline constexpr non_commutative_t non_commutative{};

template <class...>
inline constexpr bool value_type_mismatch = false;

/// The operation make_op returns: `fn` with its identity, over T.
/// The value type of a custom op is the identity's type: make_op(f, 0, ...)
/// is an op over int, make_op(f, 0.0, ...) over double. Data of another
/// type is a compile error (a readable static_assert), never a
/// silent conversion of every value to the identity's type. Name the value
/// type explicitly to convert the identity instead: make_op<double>(f, 0, ...).
template <class F, class T, class Commutativity>
struct custom_op {
    using value_type = T; ///< The op's value type.
    F fn;                 ///< The binary function.
    T identity_value;     ///< Its identity element.

    /// `fn(a, b)`; noexcept where fn is.
    constexpr T operator()(const T& a, const T& b) const noexcept(std::is_nothrow_invocable_r_v<T, const F&, const T&, const T&>)
    {
        return fn(a, b);
    }
    // Any other operand types: reached only by a mismatch (an exact T binds
    // the overload above). The deduced return type makes the static_assert
    // fire where the collective checks the op, not deep inside it.
    template <class A, class B>
        requires(!(std::is_same_v<std::remove_cvref_t<A>, T> && std::is_same_v<std::remove_cvref_t<B>, T>))
    constexpr auto operator()(const A&, const B&) const
    {
        static_assert(value_type_mismatch<A, B>,
                      "sparse_reduce::make_op: the data's value type differs from the identity's type, which is "
                      "the op's value type (make_op(f, 0, ...) is an op over int). Pass an identity of the data's "
                      "type (0.0 for double) or name the type: make_op<double>(f, 0, commutative).");
        return identity_value;
    }
    /// The identity element (read by identity_element).
    constexpr T identity() const { return identity_value; }
};

/// A custom operation: `f` with its identity element and declared commutativity.
///
///     auto op = sparse_reduce::make_op([](double a, double b) { return a + b; }, 0.0,
///                                      sparse_reduce::commutative);
///
/// @tparam T value type: deduced from the identity, or given first:
///           make_op<double>(f, 0, ...).
/// @param fn       binary function on two T, returning T; must be associative
/// @param identity two-sided identity of fn: fn(identity, x) == x == fn(x,
///                 identity) for every value x the data may hold. Sparse
///                 vectors leave it out and absent entries are never folded,
///                 so a false identity gives results a dense fold would not:
///                 max(|a|, |b|) with identity 0 returns -7 for a lone -7
///                 (reduce |x| with a plain max instead). The collectives
///                 test it on a sample of each rank's values on a plan's
///                 first call with the op and throw sparse_reduce::error
///                 naming the value.
/// @return an op whose is_commutative follows the tag (commutative or
///         non_commutative)
template <class T, class F, class Commutativity>
    requires(std::is_same_v<Commutativity, commutative_t> ||
             std::is_same_v<Commutativity, non_commutative_t>) &&
            std::is_invocable_r_v<T, const F&, const T&, const T&>
constexpr custom_op<F, T, Commutativity> make_op(F fn, T identity, Commutativity)
{
    return {std::move(fn), std::move(identity)};
}

/// make_op(f, id, commutative) declares a commutative operation.
template <class F, class T>
struct is_commutative<custom_op<F, T, commutative_t>, T> : std::true_type {};

} // namespace sparse_reduce
