#pragma once
/// @file
/// rle_vector, a float or double vector stored run-length encoded. Included by
/// `<sparse_reduce/sparse_reduce.hpp>`.

#include <cstddef>
#include <span>
#include <vector>

#include "../detail/uninit_vector.hpp"
#include "../error.hpp"
#include "rle_codec.hpp"

namespace sparse_reduce {

/// A float or double vector of dimension size() stored as the NaN-marker
/// run-length encoding of repr/rle_codec.hpp. Runs stand for the identity of
/// the operation applied (0 for plus); words() is the encoded stream, nnz()
/// the number of stored values (markers excluded).
/// @tparam T float or double (`rle_value`)
template <rle_value T>
class rle_vector {
public:
    using value_type = T; ///< The value type.

    /// Dimension 0.
    rle_vector() = default;
    /// All identity: one run (or nothing for dimension 0 or a lone identity).
    explicit rle_vector(std::size_t dimension, T identity = T{}) { assign_dense_identity(dimension, identity); }

    /// Adopts an encoded stream.
    /// @throws sparse_reduce::error when it is malformed
    rle_vector(std::size_t dimension, std::span<const T> words) : dim_(dimension), words_(words.begin(), words.end())
    {
        detail::rle::validate(words_.data(), words_.size(), dim_);
        count_values();
    }

    /// Encodes a dense vector; `identity` is the op's identity (0 for plus),
    /// the value that runs stand for.
    static rle_vector encode(std::span<const T> dense, T identity = T{})
    {
        rle_vector out;
        out.dim_ = dense.size();
        out.words_.resize(detail::rle::max_words(dense.size()));
        detail::rle::writer<T> w(out.words_.data(), identity);
        w.put_dense(dense.data(), dense.size());
        w.flush();
        out.words_.resize(w.words());
        out.nnz_ = w.values();
        return out;
    }

    std::size_t size() const noexcept { return dim_; } ///< The dimension.
    std::size_t nnz() const noexcept { return nnz_; }  ///< Stored values (markers excluded).
    /// The encoded stream.
    std::span<const T> words() const noexcept { return {words_.data(), words_.size()}; }

    /// For kernels: size the word buffer, write it, then commit() what was written.
    T* prepare(std::size_t dimension, std::size_t capacity_words)
    {
        dim_ = dimension;
        words_.resize(capacity_words);
        return words_.data();
    }
    /// Keeps the first nwords words, holding `values` stored values (see prepare()).
    void commit(std::size_t nwords, std::size_t values)
    {
        words_.resize(nwords);
        nnz_ = values;
    }

    /// Same dimension and the same words, compared by their bits.
    friend bool operator==(const rle_vector& a, const rle_vector& b)
    {
        if (a.dim_ != b.dim_ || a.words_.size() != b.words_.size()) return false;
        for (std::size_t k = 0; k < a.words_.size(); ++k)
            if (!detail::same_value(a.words_[k], b.words_[k])) return false;
        return true;
    }

private:
    void assign_dense_identity(std::size_t dimension, T identity)
    {
        dim_ = dimension;
        words_.resize(dimension / detail::rle::layout<T>::max_run + 2);
        detail::rle::writer<T> w(words_.data(), identity);
        w.skip(dimension);
        w.flush();
        words_.resize(w.words());
        nnz_ = w.values();
    }
    void count_values()
    {
        nnz_ = 0;
        detail::rle::cursor<T> c(words_.data(), words_.size(), dim_);
        while (c.next()) nnz_ += c.run == 0;
    }

    std::size_t dim_ = 0;
    std::size_t nnz_ = 0;
    detail::uninit_vector<T> words_;
};

} // namespace sparse_reduce
