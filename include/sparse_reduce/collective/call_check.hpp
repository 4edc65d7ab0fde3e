#pragma once
/// @file
/// Internal: compile-time checks of a collective's arguments, each failing
/// with a sentence that names the fix. Included by the collectives' headers.
// The public entry points take any argument types and call checked_call
// first: a mistake then ends in one of these messages rather than in the
// last line of a concept's diagnostics, in internal names.

#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "../detail/exhaustive.hpp"
#include "../op/associative_op.hpp"
#include "../repr/representation.hpp"
#include "../wire/block.hpp"

namespace sparse_reduce::detail {

// Its name carries the two value types into the compiler's "in instantiation
// of" line, e.g. in_and_out_value_types<double, float>.
template <class InValue, class OutValue>
struct in_and_out_value_types {
    static constexpr bool same = std::same_as<InValue, OutValue>;
    static_assert(same, "in and out hold different value types (named in in_and_out_value_types<in, out>)");
};

// A const std::span still writes to its elements: the collectives write
// through a copy of it (writable_output). Any other const output is an error.
template <class Out>
inline constexpr bool const_span_output = false;
template <class T, std::size_t E>
inline constexpr bool const_span_output<const std::span<T, E>> = !std::is_const_v<T>;

// out as the collectives write it: a const span's copy, else out itself.
template <class Out>
decltype(auto) writable_output(Out&& out)
{
    if constexpr (const_span_output<std::remove_reference_t<Out>>) return std::remove_cvref_t<Out>(out);
    else return std::forward<Out>(out);
}

enum class value_rule {
    wire,               // trivially copyable, aligned to at most 8 bytes (reduce, allreduce)
    trivially_copyable, // reduce_scatter's
};

// std::vector<bool>, which packs its bools into bits (no array of values).
template <class V>
inline constexpr bool is_packed_bools = false;
template <class A>
inline constexpr bool is_packed_bools<std::vector<bool, A>> = true;

// True when (in, out, op) is a valid call; otherwise a static_assert names
// the first problem and the caller compiles nothing more. Out must be a
// sparse (index/value) vector where index_value_out is set.
template <class In, class Out, class Op, value_rule Rule = value_rule::wire, bool index_value_out = false>
constexpr bool checked_call()
{
    constexpr bool packed_bools =
        is_packed_bools<std::remove_cvref_t<In>> || is_packed_bools<std::remove_cvref_t<Out>>;
    constexpr bool has_representation = representation<In> && representation<Out>;
    if constexpr (packed_bools) {
        static_assert(!packed_bools, "std::vector<bool> packs its bools into bits: pass bools in a std::array<bool, N>, "
                                     "a std::span<bool>, an Eigen vector or an index_value_vector<bool>");
        return false;
    } else if constexpr (!has_representation) {
        static_assert(has_representation,
                      "no representation for this type: include <sparse_reduce/repr/eigen.hpp> or the umbrella "
                      "header <sparse_reduce/sparse_reduce.hpp>");
        return false;
    } else if constexpr (std::is_const_v<std::remove_reference_t<Out>> &&
                         !const_span_output<std::remove_reference_t<Out>>) {
        static_assert(dependent_false<Out>, "out is const: pass a vector the collective can write (a non-const "
                                            "object, or a std::span of non-const values)");
        return false;
    } else if constexpr (!in_and_out_value_types<value_type_of<In>, value_type_of<Out>>::same) {
        return false;
    } else {
        using T = value_type_of<In>;
        constexpr bool value_ok =
            Rule == value_rule::wire ? wire::wire_value<T> : std::is_trivially_copyable_v<T>;
        constexpr bool has_identity = requires(const Op& op) {
            { identity_element<Op, T>::value(op) } -> std::convertible_to<T>;
        };
        if constexpr (index_value_out && !index_value_representation<Out>) {
            static_assert(index_value_representation<Out>,
                          "out must be a sparse vector (index_value_vector or Eigen::SparseVector)");
            return false;
        } else if constexpr (!value_ok) {
            static_assert(value_ok, "the value type is not a wire value: it must be trivially copyable and aligned "
                                    "to at most 8 bytes (alignof <= 8)");
            return false;
        } else if constexpr (!has_identity) {
            static_assert(has_identity, "no identity for this operation: give it identity() or wrap it with "
                                        "sparse_reduce::make_op(f, identity, commutative)");
            return false;
        } else if constexpr (!associative_op<Op, T>) {
            static_assert(associative_op<Op, T>, "the operation must be copyable and callable as op(a, b) on two "
                                                 "values of the vectors' value type, returning that type");
            return false;
        } else {
            return true;
        }
    }
}

} // namespace sparse_reduce::detail
