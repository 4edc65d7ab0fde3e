#pragma once
/// @file
/// The operation concept (associative_op) and its traits, identity_element and
/// is_commutative. Included by `<sparse_reduce/sparse_reduce.hpp>`.
///
/// An operation plugs into sparse_reduce when it is a binary function closed
/// over T with a two-sided identity element: the neutral value that sparse
/// representations leave out. Associativity is the caller's promise (as with
/// MPI_Op_create); commutativity is declared, never guessed.

#include <concepts>
#include <type_traits>

#include <boost/mpi/operations.hpp>

namespace sparse_reduce {

/// The neutral element of an operation: `identity_element<Op, T>::value(op)`.
/// Specialise it for your own operation types, or give the operation a member
/// `identity()` (what make_op does). Built-ins are in op/builtin.hpp.
/// @tparam Op the operation type
/// @tparam T  the value type
template <class Op, class T>
struct identity_element {};

/// For an operation with a member `identity()` convertible to T.

template <class Op, class T>
    requires requires(const Op& op) {
        { op.identity() } -> std::convertible_to<T>;
    }
struct identity_element<Op, T> {
    /// `op.identity()`, converted to T.
    static constexpr T value(const Op& op) { return static_cast<T>(op.identity()); }
};

/// Commutativity trait: false unless declared, as in MPI and Boost.MPI. A
/// specialisation of boost::mpi::is_commutative is honoured; the built-in
/// operations (op/builtin.hpp) and make_op(f, id, commutative) are commutative.
/// Non-commutative operations are folded in rank order.
template <class Op, class T>
struct is_commutative : std::bool_constant<boost::mpi::is_commutative<Op, T>::value> {};

/// is_commutative<Op, T>::value.
template <class Op, class T>
inline constexpr bool is_commutative_v = is_commutative<Op, T>::value;

/// An operation over T: copyable, callable as `op(a, b)` returning T, with an
/// identity_element. Associativity is the caller's promise.
template <class Op, class T>
concept associative_op =
    std::copy_constructible<Op> && requires(const Op& op, const T& a, const T& b) {
        { op(a, b) } -> std::convertible_to<T>;
        { identity_element<Op, T>::value(op) } -> std::convertible_to<T>;
    };

/// The identity element of `op` over T: `identity<double>(std::plus<>{})` is 0.
template <class T, class Op>
    requires associative_op<Op, T>
constexpr T identity(const Op& op)
{
    return static_cast<T>(identity_element<Op, T>::value(op));
}

} // namespace sparse_reduce
