#pragma once
// Conversions between representations. The op names the identity element
// that sparse forms leave out (std::plus<> by default: 0).
//
//   convert_into(out, in [, op])      any representation to any other
//   to_dense(in [, op])               std::vector<T>
//   to_index_value<I>(in [, op])      index_value_vector<T, I>
//   to_rle(in [, op])                 rle_vector<T> (float and double)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../repr/representation.hpp"
#include "combine.hpp"
#include "entry_stream.hpp"

namespace sparse_reduce {

/// Writes in into out, any representation to any other; op names the
/// identity element that sparse forms leave out (std::plus<>: 0).
template <representation Out, representation In, class Op = std::plus<>>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
void convert_into(Out&& out, const In& in, const Op& op = {})
{
    using T = value_type_of<In>;
    using RI = detail::traits_of<In>;
    using RO = detail::traits_of<Out>;
    const T id = identity<T>(op);
    const std::size_t dim = dimension(in);
    if (detail::same_object(out, in)) return;
    if constexpr (RI::kind == repr_kind::dense && RO::kind == repr_kind::dense) {
        const auto src = RI::read(in);
        const auto dst = RO::output(out, dim);
        if (dst.data() != src.data()) std::copy(src.begin(), src.end(), dst.begin());
    } else if constexpr (RI::kind == repr_kind::dense && RO::kind == repr_kind::rle) {
        const auto src = RI::read(in); // encoded into out's own storage, reused across calls
        detail::rle::writer<T> w(out.prepare(dim, detail::rle::max_words(dim)), id);
        w.put_dense(src.data(), src.size());
        w.flush();
        out.commit(w.words(), w.values());
    } else {
        detail::write_through_sink(out, dim, stored_entries(in), id, [&](auto& sink) {
            auto r = detail::make_reader(in, id);
            detail::drain(r, sink);
            sink.finish();
        });
    }
}

/// in as a std::vector<T>, the identity of op where in has no entry.
template <representation In, class Op = std::plus<>>
std::vector<value_type_of<In>> to_dense(const In& in, const Op& op = {})
{
    if constexpr (std::is_same_v<value_type_of<In>, bool>) { // std::vector<bool> is no representation
        detail::bool_vector out;
        convert_into(out, in, op);
        return std::vector<bool>(out.begin(), out.end());
    } else {
        std::vector<value_type_of<In>> out;
        convert_into(out, in, op);
        return out;
    }
}

/// in as an index_value_vector<T, Index>, without op's identity elements.
template <class Index = std::uint32_t, representation In, class Op = std::plus<>>
index_value_vector<value_type_of<In>, Index> to_index_value(const In& in, const Op& op = {})
{
    index_value_vector<value_type_of<In>, Index> out;
    convert_into(out, in, op);
    return out;
}

/// in as an rle_vector<T> (float and double), runs of op's identity compressed.
template <representation In, class Op = std::plus<>>
    requires rle_value<value_type_of<In>>
rle_vector<value_type_of<In>> to_rle(const In& in, const Op& op = {})
{
    rle_vector<value_type_of<In>> out;
    convert_into(out, in, op);
    return out;
}

} // namespace sparse_reduce
