#pragma once
// Custom operations: sparse_reduce::make_op(f, identity, commutative) or
// make_op(f, identity, non_commutative); the op's value type is the
// identity's type, or named: make_op<double>(f, 0, commutative). Using the
// op on data of another value type is a compile error. The tag makes commutativity part of
// the type, so trees that reorder operands can be rejected at compile time.

#include <type_traits>
#include <utility>

#include "associative_op.hpp"

namespace sparse_reduce {

struct commutative_t {
    explicit commutative_t() = default;
};
struct non_commutative_t {
    explicit non_commutative_t() = default;
};
inline constexpr commutative_t commutative{};
inline constexpr non_commutative_t non_commutative{};

template <class...>
inline constexpr bool value_type_mismatch = false;

// The value type of a custom op is the identity's type: make_op(f, 0, ...)
// is an op over int, make_op(f, 0.0, ...) over double. Data of another
// type is a compile error (the readable static_assert below), never a
// silent conversion of every value to the identity's type. Name the value
// type explicitly to convert the identity instead: make_op<double>(f, 0, ...).
template <class F, class T, class Commutativity>
struct custom_op {
    using value_type = T;
    F fn;
    T identity_value;

    constexpr T operator()(const T& a, const T& b) const { return fn(a, b); }
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
    constexpr T identity() const { return identity_value; }
};

// T deduced from the identity, or given first: make_op<double>(f, 0, ...).
template <class T, class F, class Commutativity>
    requires(std::is_same_v<Commutativity, commutative_t> ||
             std::is_same_v<Commutativity, non_commutative_t>) &&
            std::is_invocable_r_v<T, const F&, const T&, const T&>
constexpr custom_op<F, T, Commutativity> make_op(F fn, T identity, Commutativity)
{
    return {std::move(fn), std::move(identity)};
}

template <class F, class T>
struct is_commutative<custom_op<F, T, commutative_t>, T> : std::true_type {};

} // namespace sparse_reduce
