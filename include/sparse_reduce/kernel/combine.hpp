#pragma once
// a ⊗ b for every pair of representations, into any representation.
//
//   combine_into(out, a, b, op)   out = a ⊗ b   (out may be a or b itself)
//   combine(a, b, op)             returns a ⊗ b in a's type (span -> vector)
//
// a stays on the left of op for every entry, so non-commutative operations
// are safe. Fast paths (the rest go through the entry-stream merge):
//   dense ⊗ dense -> dense              elementwise
//   dense ⊗ sparse -> dense, and mirror  copy, then apply the sparse entries
//   index/value ⊗ index/value -> i/v    tight merge (branch-free for built-ins)
//   rle ⊗ dense -> rle                  fused a_C ⊗ b -> c_C (Hofmann and Rünger 2008)
//   dense ⊗ dense -> rle                fused a ⊗ b -> c_C (Hofmann and Rünger 2008)
// Compression happens while writing; there is never a separate pass.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../detail/exhaustive.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../op/associative_op.hpp"
#include "merge_arrays.hpp"
#include "../op/builtin.hpp"
#include "../repr/representation.hpp"
#include "entry_stream.hpp"

namespace sparse_reduce {
namespace detail {

template <class V>
using traits_of = repr_traits<std::remove_cvref_t<V>>;

template <class V>
inline constexpr bool is_span_v = false;
template <class T, std::size_t E>
inline constexpr bool is_span_v<std::span<T, E>> = true;

inline void check_same_dimension(std::size_t a, std::size_t b)
{
    if (a != b)
        fail("dimension mismatch in combine: ", a, " and ", b);
}

template <class A, class B>
bool same_object(const A& a, const B& b) noexcept
{
    return static_cast<const void*>(&a) == static_cast<const void*>(&b);
}

// Hands a sink for `out` (sized for `dim`, at most `entries` non-identity
// entries) to write(sink), then commits what was written.
template <class Out, class T, class Write>
void write_through_sink(Out& out, std::size_t dim, std::size_t entries, const T& id, Write&& write)
{
    using R = traits_of<Out>;
    if constexpr (R::kind == repr_kind::dense) {
        dense_sink<T> sink(R::output(out, dim), id);
        write(sink);
    } else if constexpr (R::kind == repr_kind::index_value) {
        const auto slots = R::begin_output(out, dim, std::min(entries, dim));
        sparse_sink<T, typename R::index_type> sink(slots.index, slots.value, id);
        write(sink);
        R::commit_output(out, sink.count());
    } else if constexpr (R::kind == repr_kind::rle) {
        T* words = out.prepare(dim, rle::max_words<T>(dim, std::min(entries, dim)));
        rle_sink<T> sink(words, dim, id);
        write(sink);
        out.commit(sink.words(), sink.values());
    } else {
        static_assert(dependent_false<Out>, "write_through_sink: a repr_kind without a sink");
    }
}

template <class Out, class A, class B>
inline constexpr bool all_index_value_vectors = false;
template <class T, class I>
inline constexpr bool all_index_value_vectors<index_value_vector<T, I>, index_value_vector<T, I>,
                                              index_value_vector<T, I>> = true;

// Built-in ops on floating-point and unsigned types are cheap, cannot throw
// and have no undefined results, so the merge may evaluate op on both heads
// speculatively and stay branch-free.
template <class Op, class T>
inline constexpr bool speculative_op = builtin_kind<Op>() != builtin::none && sizeof(T) <= 8 &&
                                       (std::is_floating_point_v<T> ||
                                        (std::is_unsigned_v<T> && !std::is_same_v<T, bool>));

template <class T, class I, class Op>
std::size_t merge_index_value(const I* ia, const T* va, std::size_t na, const I* ib, const T* vb, std::size_t nb,
                              I* io, T* vo, const Op& op, const T& id)
{
    std::size_t ka = 0, kb = 0, n = 0;
    if constexpr (speculative_op<Op, T>) {
        // Selections by mask, not by branch: the interleaving of random
        // supports is unpredictable.
        using B = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                  std::conditional_t<sizeof(T) == 4, std::uint32_t,
                  std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
        while (ka < na && kb < nb) {
            const I xa = ia[ka], xb = ib[kb];
            const bool take_a = xa <= xb, take_b = xb <= xa;
            const B ba = std::bit_cast<B>(va[ka]), bb = std::bit_cast<B>(vb[kb]);
            const B both = std::bit_cast<B>(static_cast<T>(op(va[ka], vb[kb])));
            const B ma = B(0) - B(take_a), mb = B(0) - B(take_b);
            const B v = (both & ma & mb) | (ba & ma & ~mb) | (bb & ~ma);
            const I mi = I(0) - I(take_a);
            io[n] = (xa & mi) | (xb & ~mi);
            vo[n] = std::bit_cast<T>(v);
            n += !(take_a && take_b && v == std::bit_cast<B>(id));
            ka += take_a;
            kb += take_b;
        }
    } else {
        while (ka < na && kb < nb) {
            if (ia[ka] < ib[kb]) {
                io[n] = ia[ka];
                vo[n++] = va[ka++];
            } else if (ib[kb] < ia[ka]) {
                io[n] = ib[kb];
                vo[n++] = vb[kb++];
            } else {
                const T v = static_cast<T>(op(va[ka], vb[kb]));
                if (!same_value(v, id)) {
                    io[n] = ia[ka];
                    vo[n++] = v;
                }
                ++ka;
                ++kb;
            }
        }
    }
    std::copy(ia + ka, ia + na, io + n);
    std::copy(va + ka, va + na, vo + n);
    n += na - ka;
    std::copy(ib + kb, ib + nb, io + n);
    std::copy(vb + kb, vb + nb, vo + n);
    return n + (nb - kb);
}

// The fused kernel of Hofmann and Rünger 2008: compressed a ⊗ uncompressed b -> compressed, in
// one pass. Chunks of plain words in a are combined in bulk; under a's runs
// the result is b itself, re-encoded block-wise. a is checked as it is read,
// like every decoder.
template <rle_value T, class Op>
void rle_times_dense(std::span<const T> aw, std::size_t dim, const T* b, rle::writer<T>& w, const Op& op)
{
    const T* a = aw.data();
    const std::size_t na = aw.size();
    std::size_t k = 0, pos = 0;
    constexpr std::size_t chunk = rle::writer<T>::chunk;
    std::size_t retry_at = 0; // after a chunk that was not plain, step past it before trying again
    while (k < na) {
        // a chunk of plain words: combined in bulk
        if (k >= retry_at && na - k >= chunk && dim - pos >= chunk) {
            if (w.try_put_chunk(a + k, b + pos, op, true)) {
                k += chunk;
                pos += chunk;
                continue;
            }
            retry_at = k + chunk;
        }
        if (!rle::is_marker(a[k])) {
            if (pos >= dim) rle::fail_overflow(dim);
            w.put(w.fold(a[k], b[pos], op));
            ++k;
            ++pos;
            continue;
        }
        const std::uint64_t len = rle::marker_length(a[k++]);
        if (len == 1) { // escape: one literal negative NaN
            if (k == na) fail("malformed RLE buffer: escape marker at the end of the buffer");
            if (!rle::is_marker(a[k])) fail("malformed RLE buffer: escape marker before a word that needs no escape");
            if (pos >= dim) rle::fail_overflow(dim);
            w.put(w.fold(a[k], b[pos], op));
            ++k;
            ++pos;
        } else {
            if (len > dim - pos) rle::fail_run(len, pos, dim);
            w.put_dense(b + pos, static_cast<std::size_t>(len));
            pos += static_cast<std::size_t>(len);
        }
    }
    if (pos != dim) rle::fail_truncated(pos, dim);
    w.flush();
}

} // namespace detail

/// out = a ⊗ b, for any representations of one value type; a stays on the
/// left of op. out may be a or b itself, or a temporary view (a std::span or
/// Eigen::Map of the caller's storage).
template <representation Out, representation A, representation B, class Op>
    requires std::same_as<value_type_of<A>, value_type_of<B>> && std::same_as<value_type_of<A>, value_type_of<Out>> &&
             associative_op<Op, value_type_of<A>>
void combine_into(Out&& out, const A& a, const B& b, const Op& op)
{
    using T = value_type_of<A>;
    using RA = detail::traits_of<A>;
    using RB = detail::traits_of<B>;
    using RO = detail::traits_of<Out>;
    const std::size_t dim = dimension(a);
    detail::check_same_dimension(dim, dimension(b));
    const T id = identity<T>(op);

    constexpr bool out_dense = RO::kind == repr_kind::dense;
    constexpr bool a_dense = RA::kind == repr_kind::dense, b_dense = RB::kind == repr_kind::dense;

    if constexpr (out_dense && a_dense && b_dense) {
        const auto x = RA::read(a);
        const auto y = RB::read(b);
        const auto o = RO::output(out, dim);
        detail::fold_dense_to(o.data(), x.data(), y.data(), dim, op, id); // absent ⊗ x = x, bit for bit
    } else if constexpr (out_dense && (a_dense || b_dense)) {
        // Copy the dense operand, then fold the other one's entries into it.
        constexpr bool dense_is_a = a_dense;
        const auto& d = [&]() -> decltype(auto) { if constexpr (dense_is_a) return (a); else return (b); }();
        const auto& s = [&]() -> decltype(auto) { if constexpr (dense_is_a) return (b); else return (a); }();
        const auto src = detail::traits_of<decltype(d)>::read(d);
        const auto o = RO::output(out, dim);
        if (o.data() != src.data()) std::copy(src.begin(), src.end(), o.begin());
        for (auto r = detail::make_reader(s, id); !r.done(); r.next()) {
            T& x = o[r.index()];
            if constexpr (dense_is_a) x = detail::fold_values(x, r.value(), op, id);
            else x = detail::fold_values(r.value(), x, op, id);
        }
    } else {
        if (detail::same_object(out, a) || detail::same_object(out, b)) {
            std::remove_cvref_t<Out> tmp;
            combine_into(tmp, a, b, op);
            out = std::move(tmp);
            return;
        }
        if constexpr (detail::all_index_value_vectors<std::remove_cvref_t<Out>, std::remove_cvref_t<A>,
                                                      std::remove_cvref_t<B>>) {
            // Both validated on construction: merge the raw arrays.
            const std::size_t na = a.nnz(), nb = b.nnz();
            const auto slots = RO::begin_output(out, dim, std::min(na + nb, dim));
            const std::size_t n = detail::merge_index_value(a.indices().data(), a.values().data(), na,
                                                            b.indices().data(), b.values().data(), nb,
                                                            slots.index, slots.value, op, id);
            RO::commit_output(out, n);
        } else if constexpr (RO::kind == repr_kind::rle && RA::kind == repr_kind::rle && b_dense) {
            const T* y = RB::read(b).data();
            T* words = out.prepare(dim, detail::rle::max_words(dim));
            detail::rle::writer<T> w(words, id);
            detail::rle_times_dense(a.words(), dim, y, w, op);
            out.commit(w.words(), w.values());
        } else if constexpr (RO::kind == repr_kind::rle && a_dense && b_dense) {
            const auto x = RA::read(a);
            const auto y = RB::read(b);
            T* words = out.prepare(dim, detail::rle::max_words(dim));
            detail::rle::writer<T> w(words, id);
            w.put_combined(x.data(), y.data(), dim, op);
            w.flush();
            out.commit(w.words(), w.values());
        } else {
            detail::write_through_sink(out, dim, stored_entries(a) + stored_entries(b), id, [&](auto& sink) {
                detail::merge(detail::make_reader(a, id), detail::make_reader(b, id), sink, op);
            });
        }
    }
}

/// a ⊗ b in a's representation (a std::span becomes a std::vector).
template <representation A, representation B, class Op>
    requires std::same_as<value_type_of<A>, value_type_of<B>> && associative_op<Op, value_type_of<A>>
auto combine(const A& a, const B& b, const Op& op)
{
    using V = std::remove_cvref_t<A>;
    using Result = std::conditional_t<detail::is_span_v<V>, std::vector<value_type_of<A>>, V>;
    Result out;
    combine_into(out, a, b, op);
    return out;
}

} // namespace sparse_reduce
