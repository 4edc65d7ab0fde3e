#pragma once
/// @file
/// The representation concept: what the library accepts as a vector, and how
/// it reads and writes each kind without copying. Included by
/// `<sparse_reduce/sparse_reduce.hpp>`.
///
/// Three kinds (repr_kind):
///
///     dense        std::vector<T>, std::span<T>, std::array, Eigen dense vectors
///     index_value  index_value_vector<T, I>, Eigen::SparseVector<T, O, I>
///     rle          rle_vector<T>
///
/// Adapters are traits specialised per type (repr/eigen.hpp adds Eigen's), so
/// no wrapper class stands between the user's vector and the kernels.

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

/// The three kinds of vector the library reads and writes.
enum class repr_kind {
    dense,       ///< Every element stored (std::vector, std::span, std::array, Eigen dense).
    index_value, ///< Sorted indices and their values (index_value_vector, Eigen::SparseVector).
    rle          ///< NaN-marker run-length encoding (rle_vector).
};

/// The adapter of a vector type V: its `kind`, `value_type`, and how to read
/// and write it. Specialised below and in repr/eigen.hpp; a type with a
/// specialisation is a `representation`.
template <class V>
struct repr_traits;

// ---- dense ---------------------------------------------------------------
/// std::vector: dense; `read(v)` gives a `span<const T>`, `output(v, n)` resizes
/// to n and gives a `span<T>`.
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

/// The library's contiguous buffer of bools (detail/uninit_vector.hpp): dense.
template <>
struct repr_traits<detail::bool_vector> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = bool;
    static std::span<const bool> read(const detail::bool_vector& v) noexcept { return v; }
    static std::span<bool> output(detail::bool_vector& v, std::size_t n)
    {
        v.resize(n, false);
        return v;
    }
};

/// std::vector<bool> packs bits (no data()): not a representation; bools go
/// in a std::array<bool, N>, a span of bools or an index_value_vector<bool>.
template <class A>
struct repr_traits<std::vector<bool, A>>;

/// std::span: dense; as an output it must already have the result's size
/// (else sparse_reduce::error).
template <class T, std::size_t E>
struct repr_traits<std::span<T, E>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = std::remove_const_t<T>;
    static std::span<const value_type> read(const std::span<T, E>& v) noexcept { return v; }
    static std::span<T> output(const std::span<T, E>& v, std::size_t n)
        requires(!std::is_const_v<T>)
    {
        if (v.size() != n)
            detail::fail("output span has ", v.size(), " elements, the result has ", n);
        return v;
    }
};

/// std::array: dense; as an output N must be the result's size.
template <class T, std::size_t N>
struct repr_traits<std::array<T, N>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = T;
    static std::span<const T> read(const std::array<T, N>& v) noexcept { return v; }
    static std::span<T> output(std::array<T, N>& v, std::size_t n)
    {
        if (n != N)
            detail::fail("output array has ", N, " elements, the result has ", n);
        return v;
    }
};

// ---- index/value -----------------------------------------------------------
/// index_value_vector: sparse. `indices(v)`, `values(v)` spans;
/// `begin_output(v, n, capacity)` hands out raw index and value pointers for
/// `capacity` entries, `grow_output(v, capacity)` more of them (keeping those
/// written), and `commit_output(v, count)` keeps the first `count`;
/// `capacity(v)` (optional): how many entries begin_output takes without
/// allocating (nor throwing, for a dimension whose indices fit the index
/// type).
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
    static std::size_t capacity(const vector& v) noexcept { return v.capacity(); } // entries begin_output takes without allocating
    // Room for `capacity` entries, keeping those written so far (the pointers may move).
    static slots grow_output(vector& v, std::size_t capacity)
    {
        v.resize_nnz(capacity);
        return {v.index_data(), v.value_data()};
    }
};

// ---- rle -------------------------------------------------------------------
/// rle_vector: run-length encoded (read and written by the RLE kernels).
template <class T>
struct repr_traits<rle_vector<T>> {
    static constexpr repr_kind kind = repr_kind::rle;
    using value_type = T;
};

/// The value type of a representation V (cv and reference removed).
template <class V>
using value_type_of = typename repr_traits<std::remove_cvref_t<V>>::value_type;

/// A vector type the collectives accept: one with a repr_traits specialisation.
/// Eigen's need `<sparse_reduce/repr/eigen.hpp>` (or the umbrella header).
template <class V>
concept representation = requires { repr_traits<std::remove_cvref_t<V>>::kind; };

/// A representation of kind K.
template <class V, repr_kind K>
concept representation_of = representation<V> && repr_traits<std::remove_cvref_t<V>>::kind == K;

/// A dense representation (std::vector, std::span, std::array, Eigen dense).
template <class V>
concept dense_representation = representation_of<V, repr_kind::dense>;
/// An index/value representation (index_value_vector, Eigen::SparseVector):
/// what reduce_scatter writes.
template <class V>
concept index_value_representation = representation_of<V, repr_kind::index_value>;
/// An RLE representation (rle_vector).
template <class V>
concept rle_representation = representation_of<V, repr_kind::rle>;

/// The dimension (number of elements, stored or not) of any representation.
template <representation V>
std::size_t dimension(const V& v)
{
    using R = repr_traits<std::remove_cvref_t<V>>;
    if constexpr (R::kind == repr_kind::dense) return R::read(v).size();
    else if constexpr (R::kind == repr_kind::index_value) return R::size(v);
    else if constexpr (R::kind == repr_kind::rle) return v.size();
    else static_assert(detail::dependent_false<V>, "dimension: a repr_kind without a case here");
}

/// Upper bound of the non-identity entries a representation can yield: its
/// size for dense, its stored entries for index/value, its values for RLE.
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
