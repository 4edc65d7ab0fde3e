#pragma once
// Custom operations: sparse_reduce::make_op(f, identity, commutative) or
// make_op(f, identity, non_commutative). The tag makes commutativity part of
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

template <class F, class T, class Commutativity>
struct custom_op {
    F fn;
    T identity_value;

    constexpr T operator()(const T& a, const T& b) const { return fn(a, b); }
    constexpr T identity() const { return identity_value; }
};

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
