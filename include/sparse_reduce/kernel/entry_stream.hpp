#pragma once
// Entry streams: every representation read as its non-identity entries in
// increasing index order (readers), and every representation written from
// such a stream (sinks). One merge over two readers into a sink then combines
// any pair into any output, compressing or expanding on the way, with no
// separate conversion pass. kernel/combine.hpp adds fast paths beside it.
//
// reader: done(), index(), value(), next()
// sink:   put(index, value) with increasing indices, then finish()

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>

#include "../detail/exhaustive.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../repr/representation.hpp"
#include "../repr/rle_codec.hpp"
#include "merge_arrays.hpp"

namespace sparse_reduce::detail {

template <class T>
class dense_reader {
public:
    dense_reader(std::span<const T> v, const T& id) : p_(v.data()), n_(v.size()), id_(id)
    {
        i_ = find_non_identity(p_, 0, n_, id_);
    }
    bool done() const noexcept { return i_ == n_; }
    std::size_t index() const noexcept { return i_; }
    const T& value() const noexcept { return p_[i_]; }
    void next() { i_ = find_non_identity(p_, i_ + 1, n_, id_); }
    std::span<const T> source() const noexcept { return {p_, n_}; } // the whole dense input

    // f(index, value) for every entry left (for_each_entry): an element
    // after an entry is tested alone, and only a stretch of identities is
    // skipped by find_non_identity's vector scan, which a full array would
    // otherwise start once per element.
    template <class F>
    void for_each(F&& f)
    {
        for (std::size_t i = i_; i < n_;) {
            f(i, p_[i]);
            ++i;
            if (i < n_ && same_value(p_[i], id_)) i = find_non_identity(p_, i, n_, id_);
        }
        i_ = n_;
    }

private:
    const T* p_;
    std::size_t n_;
    std::size_t i_;
    T id_;
};

// Index/value arrays. The indices are checked when the reader is made, all
// at once (strictly increasing, the first not negative, the last below the
// dimension: one pass the compiler vectorises), so that a corrupted Eigen
// vector or wire block throws before anything is written and next() checks
// nothing: the windowed root spent 28 instructions per entry of a child's
// block in the per-entry check.
struct indices_checked_t {};
inline constexpr indices_checked_t indices_checked{}; // a reader over indices checked already

template <class T, class I>
class sparse_reader {
public:
    sparse_reader(std::span<const I> idx, std::span<const T> val, std::size_t dimension)
        : sparse_reader(idx, val, dimension, indices_checked)
    {
        check_all();
    }
    sparse_reader(std::span<const I> idx, std::span<const T> val, std::size_t dimension, indices_checked_t)
        : idx_(idx.data()), val_(val.data()), n_(idx.size()), dim_(dimension)
    {
        require(idx.size() == val.size(), "index and value arrays differ in length");
    }
    bool done() const noexcept { return k_ == n_; }
    std::size_t index() const noexcept { return static_cast<std::size_t>(idx_[k_]); }
    const T& value() const noexcept { return val_[k_]; }
    void next() noexcept { ++k_; }

private:
    void check_all()
    {
        if (n_ == 0) return;
        bool ok = static_cast<std::size_t>(idx_[n_ - 1]) < dim_;
        if constexpr (std::is_signed_v<I>) ok = ok && idx_[0] >= 0;
        if (ok && count_unordered(idx_, n_) == 0) return;
        for (; k_ < n_; ++k_) check(); // throws at the first bad entry, naming it
        k_ = 0;
    }
    // Entry k_: in range and above the one before.
    void check() const
    {
        if (k_ == n_) return;
        const auto i = idx_[k_];
        if constexpr (std::is_signed_v<I>)
            if (i < 0) fail("negative index ", i);
        if (static_cast<std::size_t>(i) >= dim_)
            fail("index ", i, " is out of range for dimension ", dim_);
        if (k_ > 0 && !(idx_[k_ - 1] < i))
            fail("indices not strictly increasing at position ", k_, " (", idx_[k_ - 1], ", ", i, ")");
    }

    const I* idx_;
    const T* val_;
    std::size_t n_;
    std::size_t k_ = 0;
    std::size_t dim_;
};

template <rle_value T>
class rle_reader {
public:
    rle_reader(std::span<const T> words, std::size_t dimension, const T& id)
        : c_(words.data(), words.size(), dimension), id_(id)
    {
        advance();
    }
    bool done() const noexcept { return done_; }
    std::size_t index() const noexcept { return c_.pos; }
    const T& value() const noexcept { return c_.value; }
    void next() { advance(); }

private:
    void advance()
    {
        while ((done_ = !c_.next()) == false)
            if (c_.run == 0 && !same_value(c_.value, id_)) return;
    }
    rle::cursor<T> c_;
    T id_;
    bool done_ = false;
};

// The reader for any representation.
template <representation V>
auto make_reader(const V& v, const value_type_of<V>& id)
{
    using R = repr_traits<std::remove_cvref_t<V>>;
    using T = value_type_of<V>;
    if constexpr (R::kind == repr_kind::dense) return dense_reader<T>(R::read(v), id);
    else if constexpr (R::kind == repr_kind::index_value)
        return sparse_reader<T, typename R::index_type>(R::indices(v), R::values(v), R::size(v));
    else if constexpr (R::kind == repr_kind::rle) return rle_reader<T>(v.words(), v.size(), id);
    else static_assert(dependent_false<V>, "make_reader: a repr_kind without a reader");
}

// ---- sinks -----------------------------------------------------------------

template <class T>
class dense_sink {
public:
    dense_sink(std::span<T> out, const T& id) : out_(out.data())
    {
        std::fill(out.begin(), out.end(), id);
    }
    void put(std::size_t i, const T& v) noexcept { out_[i] = v; }
    void finish() noexcept {}

private:
    T* out_;
};

// Writes into index/value slots sized for the worst case; drops identities.
template <class T, class I>
class sparse_sink {
public:
    sparse_sink(I* idx, T* val, const T& id) noexcept : idx_(idx), val_(val), id_(id) {}
    void put(std::size_t i, const T& v) noexcept
    {
        if (same_value(v, id_)) return;
        idx_[n_] = static_cast<I>(i);
        val_[n_] = v;
        ++n_;
    }
    void finish() noexcept {}
    std::size_t count() const noexcept { return n_; }

private:
    I* idx_;
    T* val_;
    T id_;
    std::size_t n_ = 0;
};

template <rle_value T>
class rle_sink {
public:
    rle_sink(T* words, std::size_t dimension, const T& id) noexcept : w_(words, id), dim_(dimension) {}
    void put(std::size_t i, const T& v)
    {
        w_.skip(i - pos_);
        w_.put(v);
        pos_ = i + 1;
    }
    void finish()
    {
        w_.skip(dim_ - pos_);
        w_.flush();
    }
    std::size_t words() const noexcept { return w_.words(); }
    std::size_t values() const noexcept { return w_.values(); }

private:
    rle::writer<T> w_;
    std::size_t dim_;
    std::size_t pos_ = 0;
};

// f(index, value) for each entry a reader has left; a reader with a loop of
// its own (wire/bitmap.hpp's) runs it.
template <class Reader, class F>
void for_each_entry(Reader& r, F&& f)
{
    if constexpr (requires { r.for_each(f); }) r.for_each(f);
    else
        for (; !r.done(); r.next()) f(r.index(), r.value());
}

// Copies a reader into a sink. The loop runs on local copies of both: where
// drain is not inlined, the sink's count and the reader's position would
// otherwise be reloaded from memory after every store to the sink's arrays,
// which may alias them (28 % more instructions in an allreduce's output).
template <class Reader, class Sink>
void drain(Reader& r, Sink& out)
{
    Reader rr = r;
    Sink o = out;
    for_each_entry(rr, [&o](std::size_t i, const auto& v) { o.put(i, v); });
    r = rr;
    out = o;
}

// a ⊗ b entry by entry; an entry absent on one side takes the other's value
// (the identity law), and a stays on the left for non-commutative ops.
template <class RA, class RB, class Sink, class Op>
void merge(RA a, RB b, Sink& out, const Op& op)
{
    while (!a.done() && !b.done()) {
        const std::size_t ia = a.index(), ib = b.index();
        if (ia < ib) {
            out.put(ia, a.value());
            a.next();
        } else if (ib < ia) {
            out.put(ib, b.value());
            b.next();
        } else {
            out.put(ia, op(a.value(), b.value()));
            a.next();
            b.next();
        }
    }
    drain(a, out);
    drain(b, out);
    out.finish();
}

} // namespace sparse_reduce::detail
