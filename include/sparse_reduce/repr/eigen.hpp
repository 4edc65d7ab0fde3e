#pragma once
/// @file
/// Eigen adapters: dense vectors (Matrix with one compile-time row or column,
/// and Map of such a vector with unit inner stride) and Eigen::SparseVector.
/// Include `<sparse_reduce/repr/eigen.hpp>` (or the umbrella header) to pass
/// Eigen vectors to the collectives.
///
/// SparseVector is read zero-copy through nonZeros()/innerIndexPtr()/valuePtr()
/// and written through resizeNonZeros() and the same pointers, no insert().
///
/// Absent entries: Eigen reads an absent coefficient as Scalar(0); sparse_reduce
/// reads an absent entry as the identity of the operation applied, as it does
/// for every sparse representation. The two agree for plus, bit_or, bit_xor
/// and logical_or. For min, max, multiplies and bit_and an absent entry in an
/// input means "this rank contributes nothing there", and an absent entry in a
/// result means "no rank contributed"; store explicit zeros where 0 is meant.

#include <cstddef>
#include <limits>
#include <span>
#include <string>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "../error.hpp"
#include "representation.hpp"

namespace sparse_reduce {

/// Eigen dense vectors (a Matrix with one compile-time row or column): dense;
/// as an output resized to the result's size. One of fixed size must have
/// it, one of bounded size (MaxRows or MaxCols fixed) must have room for it,
/// else sparse_reduce::error (Eigen's resize would assert, or with NDEBUG
/// write past the vector).
template <class T, int R, int C, int O, int MR, int MC>
    requires(R == 1 || C == 1)
struct repr_traits<Eigen::Matrix<T, R, C, O, MR, MC>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = T;
    using vector = Eigen::Matrix<T, R, C, O, MR, MC>;
    static std::span<const T> read(const vector& v) noexcept { return {v.data(), static_cast<std::size_t>(v.size())}; }
    static std::span<T> output(vector& v, std::size_t n)
    {
        constexpr int fixed = vector::SizeAtCompileTime, most = vector::MaxSizeAtCompileTime;
        if constexpr (fixed != Eigen::Dynamic) {
            if (n != static_cast<std::size_t>(fixed))
                detail::fail("output Eigen vector has a fixed size of ", fixed, " elements, the result has ", n);
        } else if constexpr (most != Eigen::Dynamic) {
            if (n > static_cast<std::size_t>(most))
                detail::fail("output Eigen vector holds at most ", most, " elements, the result has ", n);
        }
        if (static_cast<std::size_t>(v.size()) != n) v.resize(static_cast<Eigen::Index>(n));
        return {v.data(), n};
    }
};

/// An Eigen::Map of a dense vector: dense; as an output it must already have
/// the result's size (else sparse_reduce::error).
template <class T, int R, int C, int O, int MR, int MC, int MapOptions>
    requires(R == 1 || C == 1)
struct repr_traits<Eigen::Map<Eigen::Matrix<T, R, C, O, MR, MC>, MapOptions>> {
    static constexpr repr_kind kind = repr_kind::dense;
    using value_type = T;
    using vector = Eigen::Map<Eigen::Matrix<T, R, C, O, MR, MC>, MapOptions>;
    static std::span<const T> read(const vector& v) noexcept { return {v.data(), static_cast<std::size_t>(v.size())}; }
    static std::span<T> output(vector& v, std::size_t n)
    {
        if (static_cast<std::size_t>(v.size()) != n)
            detail::fail("output Eigen::Map has ", v.size(), " elements, the result has ", n);
        return {v.data(), n};
    }
};

/// Eigen::SparseVector: index/value, read and written zero-copy; as an output
/// its StorageIndex must hold the dimension's last index (else sparse_reduce::error).
template <class T, int O, class I>
struct repr_traits<Eigen::SparseVector<T, O, I>> {
    static constexpr repr_kind kind = repr_kind::index_value;
    using value_type = T;
    using index_type = I;
    using vector = Eigen::SparseVector<T, O, I>;
    static std::size_t size(const vector& v) noexcept { return static_cast<std::size_t>(v.size()); }
    static std::span<const I> indices(const vector& v) noexcept
    {
        return {v.innerIndexPtr(), static_cast<std::size_t>(v.nonZeros())};
    }
    static std::span<const T> values(const vector& v) noexcept
    {
        return {v.valuePtr(), static_cast<std::size_t>(v.nonZeros())};
    }
    struct slots {
        I* index;
        T* value;
    };
    static slots begin_output(vector& v, std::size_t n, std::size_t capacity)
    {
        if (n > 0 && n - 1 > static_cast<std::size_t>(std::numeric_limits<I>::max())) // its last index must fit
            detail::fail("dimension ", n, " does not fit Eigen::SparseVector's StorageIndex");
        v.resize(static_cast<Eigen::Index>(n)); // also drops the old entries
        v.resizeNonZeros(static_cast<Eigen::Index>(capacity));
        return {v.innerIndexPtr(), v.valuePtr()};
    }
    static void commit_output(vector& v, std::size_t count) { v.resizeNonZeros(static_cast<Eigen::Index>(count)); }
    static std::size_t capacity(const vector& v) noexcept // entries begin_output takes without allocating
    {
        return static_cast<std::size_t>(v.data().allocatedSize());
    }
    static slots grow_output(vector& v, std::size_t capacity) // keeps the entries written so far
    {
        v.resizeNonZeros(static_cast<Eigen::Index>(capacity));
        return {v.innerIndexPtr(), v.valuePtr()};
    }
};

} // namespace sparse_reduce
