#pragma once
// allreduce's partials combined (detail; collective/allreduce.hpp): a
// caller's input as a partial, two partials combined, parsed blocks folded
// into a dense accumulator in place. No MPI here.

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../kernel/combine.hpp"
#include "../../kernel/convert.hpp"
#include "../../kernel/entry_stream.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../wire/block.hpp"
#include "partial_codec.hpp"

namespace sparse_reduce::detail {

// left ⊗ right, dense once the result's index/value form would be larger.
template <class T, class Op>
partial<T> combine_partials(const partial<T>& left, const partial<T>& right, const Op& op, std::size_t dimension)
{
    partial<T> out;
    const auto run = [&](const auto& a, const auto& b) {
        out.is_dense = left.is_dense || right.is_dense ||
                       dense_is_smaller<T>(std::max(stored_entries(a), stored_entries(b)), dimension);
        if (out.is_dense) combine_into(out.dense, a, b, op);
        else combine_into(out.sparse, a, b, op);
        if (!out.is_dense && dense_is_smaller<T>(out.sparse.nnz(), dimension)) {
            convert_into(out.dense, out.sparse, op);
            out.is_dense = true;
            out.sparse = {};
        }
    };
    if (left.is_dense && right.is_dense) run(left.dense_view(), right.dense_view());
    else if (left.is_dense) run(left.dense_view(), right.sparse);
    else if (right.is_dense) run(left.sparse, right.dense_view());
    else run(left.sparse, right.sparse);
    return out;
}

// Non-identity entries of a dense array (one pass that vectorises:
// count_identities).
template <class T>
std::size_t count_dense_entries(std::span<const T> xs, const T& id)
{
    return xs.size() - count_identities(xs.data(), xs.size(), id);
}

// Non-identity entries of any input.
template <class In, class T>
std::size_t count_entries(const In& in, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    if constexpr (R::kind == repr_kind::dense) return count_dense_entries<T>(R::read(in), id);
    else return stored_entries(in);
}

// Whether an input of `dimension` elements holds at least `enough`
// entries. A dense input is counted in chunks and the count stops once the
// answer is known: a full input is read only up to `enough`.
template <class In, class T>
bool holds_entries(const In& in, std::size_t enough, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    if constexpr (R::kind == repr_kind::dense) {
        const auto xs = R::read(in);
        constexpr std::size_t chunk = 16384;
        std::size_t e = 0;
        for (std::size_t lo = 0; lo < xs.size() && e < enough; lo += chunk)
            e += count_dense_entries<T>(xs.subspan(lo, std::min(chunk, xs.size() - lo)), id);
        return e >= enough;
    } else {
        return stored_entries(in) >= enough;
    }
}

// Any input as a partial: dense once that is smaller, or with `place`
// (dimension elements, the caller's dense output) from
// dense_partial_entries on, held in `place` instead of a new array; an input
// that is that same array is not copied.
// With `lazy`, a dense input is not copied into `place` either: the partial
// reads it where it is (partial::source) until folded into place.
template <class In, class Op>
partial<value_type_of<In>> partial_of(const In& in, std::size_t dimension, const Op& op,
                                      std::span<value_type_of<In>> place = {}, bool lazy = false)
{
    using T = value_type_of<In>;
    using R = repr_traits<std::remove_cvref_t<In>>;
    partial<T> p;
    const bool into_output = place.size() == dimension && dimension > 0;
    const std::size_t enough = into_output ? dense_partial_entries(dimension) : dense_is_smaller_entries<T>(dimension);
    if (holds_entries(in, enough, identity<T>(op))) {
        p.is_dense = true;
        if (into_output) {
            p.external = place.data();
            p.external_size = dimension;
            if constexpr (R::kind == repr_kind::dense) {
                if (R::read(in).data() == place.data()) return p; // in place: out aliases in
                if (lazy) {
                    p.source = R::read(in).data();
                    return p;
                }
            }
            convert_into(place, in, op);
        } else {
            convert_into(p.dense, in, op);
        }
    } else {
        convert_into(p.sparse, in, op);
    }
    return p;
}

// Folds one parsed block (window at acc) into a dense accumulator in place:
// theirs on the left or on the right. With `mine`, the accumulator's values
// are read there (a lazy partial's input) and written to acc.
template <class T, class Op>
void fold_block_into_dense(const wire::block_view<T>& v, T* a, const T& id, const Op& op, bool theirs_left,
                           const T* mine = nullptr)
{
    if (v.tag == wire::block_tag::dense) { // absent on one side: the other's value, bit for bit
        if (!mine) fold_dense(a, v.values, v.length, theirs_left, op, id);
        else if (theirs_left) fold_dense_to(a, v.values, mine, v.length, op, id);
        else fold_dense_to(a, mine, v.values, v.length, op, id);
        return;
    }
    if (mine) std::copy(mine, mine + v.length, a);
    wire::visit_block(v, id, [&](auto r) {
        for_each_entry(r, [&](std::size_t i, const T& x) {
            a[i] = fold_onto(a[i], x, theirs_left, op, id); // a block's entries are never the identity
        });
    });
}

// A whole result into the caller's out; a dense one becomes a
// std::vector<T> out as it is (no copy, no second array).
template <class Out, class T, class Op>
void result_into(Out& out, partial<T>& acc, const Op& op)
{
    if (acc.is_dense && acc.external) return; // built in out's own array
    if constexpr (std::same_as<Out, std::vector<T>>)
        if (acc.is_dense) {
            out = std::move(acc.dense);
            return;
        }
    if (acc.is_dense) convert_into(out, acc.dense, op);
    else convert_into(out, acc.sparse, op);
}

} // namespace sparse_reduce::detail
