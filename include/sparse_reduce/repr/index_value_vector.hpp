#pragma once
/// @file
/// index_value_vector, the library's own sparse vector (sorted indices and
/// their values). Included by `<sparse_reduce/sparse_reduce.hpp>`.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "../detail/uninit_vector.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../op/associative_op.hpp"

namespace sparse_reduce {

/// A sparse vector of dimension size() holding nnz() entries as two arrays,
/// indices strictly increasing. An absent entry means "the identity of
/// whatever operation is applied" (0 for plus, +inf for min, ...); the
/// library never stores entries equal to that identity.
///
///     dimension 10:   . 7 . . . 2 . . 9 .
///     indices():        1       5     8
///     values():         7       2     9
///
/// @tparam T     value type (trivially copyable)
/// @tparam Index unsigned index type; the dimension must fit it
template <class T, std::unsigned_integral Index = std::uint32_t>
    requires std::is_trivially_copyable_v<T>
class index_value_vector {
public:
    using value_type = T;     ///< The value type.
    using index_type = Index; ///< The index type.

    /// Dimension 0, no entries.
    index_value_vector() = default;

    /// No entries (all identity) in the given dimension.
    /// @throws sparse_reduce::error if the dimension does not fit Index
    explicit index_value_vector(std::size_t dimension) : dim_(checked_dimension(dimension)) {}

    /// Takes sorted, unique indices below `dimension`, and their values.
    /// @throws sparse_reduce::error when indices are not strictly increasing,
    ///         out of range, or differ in length from values
    index_value_vector(std::size_t dimension, const std::vector<Index>& indices, const std::vector<T>& values)
        : dim_(checked_dimension(dimension)), idx_(indices.begin(), indices.end()), val_(values.begin(), values.end())
    {
        validate();
    }
    /// The same from the library's buffer of bools (detail::value_vector<bool>).
    index_value_vector(std::size_t dimension, const std::vector<Index>& indices, const detail::bool_vector& values)
        requires std::same_as<T, bool>
        : dim_(checked_dimension(dimension)), idx_(indices.begin(), indices.end()), val_(values.begin(), values.end())
    {
        validate();
    }

    /// From entries in any order, duplicates allowed: sorts by index (stable)
    /// and folds duplicates left to right with op; results equal to op's
    /// identity are dropped.
    /// @throws sparse_reduce::error on an index out of range or lengths that differ
    template <class Op>
        requires associative_op<Op, T>
    static index_value_vector from_unsorted(std::size_t dimension, std::span<const Index> indices,
                                            std::span<const T> values, const Op& op)
    {
        detail::require(indices.size() == values.size(),
                        "from_unsorted: indices and values differ in length");
        index_value_vector out(dimension);
        std::vector<std::size_t> order(indices.size());
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return indices[a] < indices[b]; });
        const T id = identity<T>(op);
        out.idx_.reserve(order.size());
        out.val_.reserve(order.size());
        for (std::size_t k = 0; k < order.size();) {
            const Index i = indices[order[k]];
            out.check_index(i);
            T acc = values[order[k++]];
            while (k < order.size() && indices[order[k]] == i) acc = op(acc, values[order[k++]]);
            if (!detail::same_value(acc, id)) {
                out.idx_.push_back(i);
                out.val_.push_back(acc);
            }
        }
        return out;
    }

    std::size_t size() const noexcept { return dim_; }        ///< The dimension.
    std::size_t nnz() const noexcept { return idx_.size(); }  ///< Stored entries.
    /// The entries it can store without allocating.
    std::size_t capacity() const noexcept { return idx_.capacity() < val_.capacity() ? idx_.capacity() : val_.capacity(); }
    bool empty() const noexcept { return idx_.empty(); }      ///< No stored entry.

    /// The stored indices, strictly increasing.
    std::span<const Index> indices() const noexcept { return {idx_.data(), idx_.size()}; }
    /// The stored values, in index order.
    std::span<const T> values() const noexcept { return {val_.data(), val_.size()}; }
    /// The stored values, writable in place.
    std::span<T> values() noexcept { return {val_.data(), val_.size()}; }

    /// Room for n entries.
    void reserve(std::size_t n)
    {
        idx_.reserve(n);
        val_.reserve(n);
    }
    /// Removes every entry; the dimension stays.
    void clear() noexcept
    {
        idx_.clear();
        val_.clear();
    }
    /// Clears the entries and sets a new dimension.
    void reset(std::size_t dimension)
    {
        dim_ = checked_dimension(dimension);
        clear();
    }

    /// Appends an entry; the index must exceed the last one and be below size().
    /// @throws sparse_reduce::error otherwise
    void push_back(std::size_t i, const T& v)
    {
        check_index(i);
        if (!idx_.empty() && i <= idx_.back())
            detail::fail("index_value_vector: index ", i, " does not follow ", idx_.back(), " (indices must increase)");
        idx_.push_back(static_cast<Index>(i));
        val_.push_back(v);
    }

    /// Unchecked growth for kernels that produce sorted output: resize, then
    /// write through the raw pointers, then shrink to what was written.
    void resize_nnz(std::size_t n)
    {
        idx_.resize(n);
        val_.resize(n);
    }
    Index* index_data() noexcept { return idx_.data(); } ///< Raw index storage (see resize_nnz).
    T* value_data() noexcept { return val_.data(); }     ///< Raw value storage (see resize_nnz).

    /// Checks the invariants.
    /// @throws sparse_reduce::error unless the indices are strictly increasing and below size().
    void validate() const
    {
        detail::require(idx_.size() == val_.size(), "index_value_vector: indices and values differ in length");
        for (std::size_t k = 0; k < idx_.size(); ++k) {
            check_index(idx_[k]);
            if (k > 0 && idx_[k] <= idx_[k - 1])
                detail::fail("index_value_vector: indices not strictly increasing at position ", k, " (", idx_[k - 1],
                             ", ", idx_[k], ")");
        }
    }

    /// Same dimension and entries (floating-point values compared by their bits).
    friend bool operator==(const index_value_vector& a, const index_value_vector& b)
    {
        return a.dim_ == b.dim_ && std::equal(a.idx_.begin(), a.idx_.end(), b.idx_.begin(), b.idx_.end()) &&
               std::equal(a.val_.begin(), a.val_.end(), b.val_.begin(), b.val_.end(),
                          [](const T& x, const T& y) { return detail::same_value(x, y); });
    }

private:
    static std::size_t checked_dimension(std::size_t dimension)
    {
        constexpr std::size_t limit = std::size_t{std::numeric_limits<Index>::max()} + 1;
        if (limit != 0 && dimension > limit) // limit wraps to 0 when Index is as wide as size_t
            detail::fail("index_value_vector: dimension ", dimension, " does not fit the index type");
        return dimension;
    }
    void check_index(std::size_t i) const
    {
        if (i >= dim_) [[unlikely]]
            detail::fail("index ", i, " is out of range for dimension ", dim_);
    }

    std::size_t dim_ = 0;
    detail::uninit_vector<Index> idx_; // kernels size these to a worst case and write once
    detail::uninit_vector<T> val_;
};

} // namespace sparse_reduce
