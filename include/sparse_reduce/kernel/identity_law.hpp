#pragma once
// The identity law of a custom operation, tested on a sample of a vector's
// values: op(e, x) == x == op(x, e). Absent entries are never folded, so an
// "identity" that is not one gives results that differ from a dense fold of
// the same data (max(|a|, |b|) with identity 0 returns -7 for a lone -7). The
// built-in operations are right by construction and are not tested.
//
// The collectives test the first call of a plan (per operation type): at
// most identity_sample values, from at most identity_scan elements of a
// dense vector, so the test costs well under a microsecond once.

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <optional>
#include <sstream>
#include <span>
#include <string>
#include <type_traits>

#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../op/make_op.hpp"
#include "../repr/representation.hpp"

namespace sparse_reduce::detail {

inline constexpr std::size_t identity_sample = 64; // values tested
inline constexpr std::size_t identity_scan = 4096; // dense elements read at most

// Operations whose identity the user declared (make_op).
template <class Op>
inline constexpr bool declared_identity = false;
template <class F, class T, class C>
inline constexpr bool declared_identity<custom_op<F, T, C>> = true;

// An address per operation type: what a plan remembers having tested.
template <class Op>
inline constexpr char op_type_token = 0;

template <class T>
struct value_sample {
    std::array<T, identity_sample> values;
    std::size_t size = 0;
    void add(const T& x)
    {
        if (size < identity_sample) values[size++] = x;
    }
    bool full() const { return size == identity_sample; }
};

// Up to identity_sample stored values of v that are not the identity: a
// dense vector's first ones within identity_scan elements, then some spread
// over the rest; every k-th stored value of an index/value vector; every
// k-th value of an RLE stream that is not a run marker.
template <class T, representation V>
value_sample<T> sample_values(const V& v, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<V>>;
    value_sample<T> s;
    const auto spread = [&](std::span<const T> x, auto keep) {
        const std::size_t step = x.size() / identity_sample + 1;
        for (std::size_t k = 0; k < x.size() && !s.full(); k += step)
            if (keep(x[k])) s.add(x[k]);
    };
    if constexpr (R::kind == repr_kind::dense) {
        const std::span<const T> x = R::read(v);
        const std::size_t head = std::min(x.size(), identity_scan);
        for (std::size_t k = 0; k < head && !s.full(); ++k)
            if (!same_value(x[k], id)) s.add(x[k]);
        spread(x.subspan(head), [&](const T& y) { return !same_value(y, id); });
    } else if constexpr (R::kind == repr_kind::index_value) {
        spread(R::values(v), [](const T&) { return true; });
    } else { // RLE: markers are NaNs; the values between them are data
        spread(v.words(), [](const T& y) { return !std::isnan(y); });
    }
    return s;
}

template <class T>
bool law_holds(const T& result, const T& x)
{
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(result) && std::isnan(x)) return true; // a NaN's payload is the operation's business
    return same_value(result, x);
}

template <class T>
std::string value_text(const T& x)
{
    if constexpr (requires(std::ostream& os) { os << x; }) {
        std::ostringstream os;
        if constexpr (std::is_floating_point_v<T>) os.precision(std::numeric_limits<T>::max_digits10);
        if constexpr (sizeof(T) == 1 && std::is_integral_v<T>) os << static_cast<int>(x);
        else os << x;
        return os.str();
    } else {
        return "a value";
    }
}

// Empty when op(e, x) == x == op(x, e) for the sampled values of v (or when
// op's identity is built in), else the sentence that names the value.
template <class Op, class T, representation V>
std::string identity_law_violation(const Op& op, const T& id, const V& v)
{
    if constexpr (!declared_identity<Op>) {
        return {};
    } else {
        const value_sample<T> s = sample_values(v, id);
        for (std::size_t k = 0; k < s.size; ++k) {
            const T& x = s.values[k];
            const T left = op(id, x), right = op(x, id);
            const bool left_ok = law_holds(left, x);
            if (left_ok && law_holds(right, x)) continue;
            const std::string e = value_text(id), xs = value_text(x);
            const std::string applied = left_ok ? "op(" + xs + ", " + e + ") = " + value_text(right)
                                                : "op(" + e + ", " + xs + ") = " + value_text(left);
            return "make_op's identity " + e + " is not an identity of the operation: " + applied + ", not " + xs +
                   " (absent entries are never folded, so op(identity, x) must be x for every value)";
        }
        return {};
    }
}

// Whether identity_law_once would test op's law (and its caller then agree
// with the other ranks on the outcome).
template <class Op>
bool identity_law_untested(const void* tested)
{
    if constexpr (!declared_identity<Op>) return false;
    else return tested != &op_type_token<Op>;
}

// The test on the first call with an operation type: `tested` is what a
// plan (or a one-shot memo) remembers of the type it tested last. nullopt
// when nothing was tested now; else empty when the law held, or why not
// (also when op throws).
template <class Op, class T, representation V>
std::optional<std::string> identity_law_once(const void*& tested, const Op& op, const T& id, const V& v)
{
    if constexpr (!declared_identity<Op>) {
        return std::nullopt;
    } else {
        if (tested == &op_type_token<Op>) return std::nullopt;
        tested = &op_type_token<Op>;
        try {
            return identity_law_violation(op, id, v);
        } catch (...) { // the op threw
            return unprefixed(current_exception_text());
        }
    }
}

} // namespace sparse_reduce::detail
