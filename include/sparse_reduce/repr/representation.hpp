#pragma once
// What the library accepts as a vector, and how it reads and writes each kind
// without copying. Three kinds:
//   dense        std::vector<T>, std::span<T>, std::array, Eigen dense vectors
//   index_value  index_value_vector<T, I>, Eigen::SparseVector<T, O, I>
//   rle          rle_vector<T>
// Adapters are traits specialised per type (repr/eigen.hpp adds Eigen's), so
// no wrapper class stands between the user's vector and the kernels.

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../detail/exhaustive.hpp"
#include "../error.hpp"
#include "index_value_vector.hpp"
#include "rle_vector.hpp"

namespace sparse_reduce {

enum class repr_kind { dense, index_value, rle };

template <class V>
struct repr_traits; // specialised below and in repr/eigen.hpp

// ---- dense ---------------------------------------------------------------
// dense traits: read(v) -> span<const T>; output(v, n) -> span<T> of size n.
template <class T, class A>
struct repr_traits<std::vector<T, A>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = T;
    static std::span<const T> read(const std::vector<T, A>& v) noexcept { return v; }
    static std::span<T> output(std::vector<T, A>& v, std::size_t n)
    {
        v.resize(n);
        return v;
    }
};

template <class T, std::size_t E>
struct repr_traits<std::span<T, E>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = std::remove_const_t<T>;
    static std::span<const value_type> read(const std::span<T, E>& v) noexcept { return v; }
    static std::span<T> output(const std::span<T, E>& v, std::size_t n)
        requires(!std::is_const_v<T>)
    {
        if (v.size() != n)
            detail::fail("output span has " + std::to_string(v.size()) + " elements, the result has " +
                         std::to_string(n));
        return v;
    }
};

template <class T, std::size_t N>
struct repr_traits<std::array<T, N>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = T;
    static std::span<const T> read(const std::array<T, N>& v) noexcept { return v; }
    static std::span<T> output(std::array<T, N>& v, std::size_t n)
    {
        if (n != N)
            detail::fail("output array has " + std::to_string(N) + " elements, the result has " + std::to_string(n));
        return v;
    }
};

// ---- index/value -----------------------------------------------------------
// sparse traits: indices(v), values(v) spans; begin_output(v, n, capacity)
// hands out raw index and value pointers for `capacity` entries, and
// commit_output(v, count) keeps the first `count`.
template <class T, class I>
struct repr_traits<index_value_vector<T, I>> {
    static constexpr repr_kind kind = repr_kind::index_value;
    using value_type = T;
    using index_type = I;
    using vector = index_value_vector<T, I>;
    static std::size_t size(const vector& v) noexcept { return v.size(); }
    static std::span<const I> indices(const vector& v) noexcept { return v.indices(); }
    static std::span<const T> values(const vector& v) noexcept { return v.values(); }
    struct slots {
        I* index;
        T* value;
    };
    static slots begin_output(vector& v, std::size_t n, std::size_t capacity)
    {
        v.reset(n);
        v.resize_nnz(capacity);
        return {v.index_data(), v.value_data()};
    }
    static void commit_output(vector& v, std::size_t count) { v.resize_nnz(count); }
};

// ---- rle -------------------------------------------------------------------
template <class T>
struct repr_traits<rle_vector<T>> {
    static constexpr repr_kind kind = repr_kind::rle;
    using value_type = T;
};

template <class V>
using value_type_of = typename repr_traits<std::remove_cvref_t<V>>::value_type;

template <class V>
concept representation = requires { repr_traits<std::remove_cvref_t<V>>::kind; };

template <class V, repr_kind K>
concept representation_of = representation<V> && repr_traits<std::remove_cvref_t<V>>::kind == K;

template <class V>
concept dense_representation = representation_of<V, repr_kind::dense>;
template <class V>
concept index_value_representation = representation_of<V, repr_kind::index_value>;
template <class V>
concept rle_representation = representation_of<V, repr_kind::rle>;

// The dimension of any representation.
template <representation V>
std::size_t dimension(const V& v)
{
    using R = repr_traits<std::remove_cvref_t<V>>;
    if constexpr (R::kind == repr_kind::dense) return R::read(v).size();
    else if constexpr (R::kind == repr_kind::index_value) return R::size(v);
    else if constexpr (R::kind == repr_kind::rle) return v.size();
    else static_assert(detail::dependent_false<V>, "dimension: a repr_kind without a case here");
}

// Upper bound of the non-identity entries a representation can yield.
template <representation V>
std::size_t stored_entries(const V& v)
{
    using R = repr_traits<std::remove_cvref_t<V>>;
    if constexpr (R::kind == repr_kind::dense) return R::read(v).size();
    else if constexpr (R::kind == repr_kind::index_value) return R::indices(v).size();
    else if constexpr (R::kind == repr_kind::rle) return v.nnz();
    else static_assert(detail::dependent_false<V>, "stored_entries: a repr_kind without a case here");
}

} // namespace sparse_reduce
