#pragma once
// The root's output as the whole-message path (whole_reduce.hpp) writes it:
// one type for every output of a value type, so that path is compiled once
// per value type and operation, not once per output type.
//
//   dense     the caller's array, filled from a dense result
//   in place  an index/value output with 32-bit indices: its arrays, which
//             the last fold merges into (begin, then commit)
//   entries   any output, from the result's entries or its dense array
//             (through the output's sink; the entries copied once more)

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../detail/value_equal.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/merge_arrays.hpp"
#include "../repr/representation.hpp"

namespace sparse_reduce::detail {

template <class T>
struct whole_output {
    struct slots {
        std::uint32_t* index;
        T* value;
    };
    void* out = nullptr;
    T* (*dense)(void* out, std::size_t dim) = nullptr;                   // dense outputs
    slots (*begin)(void* out, std::size_t dim, std::size_t cap) = nullptr; // 32-bit index/value outputs
    void (*commit)(void* out, std::size_t n) = nullptr;
    void (*entries32)(void* out, std::size_t dim, const std::uint32_t* idx, const T* val, std::size_t n,
                      const T& id) = nullptr;
    void (*entries64)(void* out, std::size_t dim, const std::uint64_t* idx, const T* val, std::size_t n,
                      const T& id) = nullptr;
    void (*from_dense)(void* out, std::size_t dim, const T* x, const T& id) = nullptr;

    // n entries (no identity among them) with indices of either width.
    template <class I>
    void put_entries(std::size_t dim, const I* idx, const T* val, std::size_t n, const T& id) const
    {
        if constexpr (sizeof(I) == 4) entries32(out, dim, reinterpret_cast<const std::uint32_t*>(idx), val, n, id);
        else entries64(out, dim, reinterpret_cast<const std::uint64_t*>(idx), val, n, id);
    }
};

template <class Out, class T, class I>
void write_whole_entries(Out& out, std::size_t dim, const I* idx, const T* val, std::size_t n, const T& id)
{
    using R = repr_traits<Out>;
    if constexpr (R::kind == repr_kind::index_value) {
        const auto s = R::begin_output(out, dim, n);
        copy_entries(idx, val, n, s.index, s.value);
        R::commit_output(out, n);
    } else {
        write_through_sink(out, dim, n, id, [&](auto& sink) {
            for (std::size_t k = 0; k < n; ++k) sink.put(idx[k], val[k]);
            sink.finish();
        });
    }
}

template <class T, class Out>
whole_output<T> make_whole_output(Out& out)
{
    using R = repr_traits<Out>;
    using W = whole_output<T>;
    W o;
    o.out = &out;
    if constexpr (R::kind == repr_kind::dense) {
        o.dense = [](void* v, std::size_t dim) { return R::output(*static_cast<Out*>(v), dim).data(); };
    } else {
        if constexpr (R::kind == repr_kind::index_value) {
            using I = typename R::index_type;
            if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool> && sizeof(I) == 4) {
                o.begin = [](void* v, std::size_t dim, std::size_t cap) {
                    const auto s = R::begin_output(*static_cast<Out*>(v), dim, cap);
                    return typename W::slots{reinterpret_cast<std::uint32_t*>(s.index), s.value};
                };
                o.commit = [](void* v, std::size_t n) { R::commit_output(*static_cast<Out*>(v), n); };
            }
        }
        o.from_dense = [](void* v, std::size_t dim, const T* x, const T& id) {
            std::size_t n = 0;
            for (std::size_t i = 0; i < dim; ++i) n += !same_value(x[i], id);
            write_through_sink(*static_cast<Out*>(v), dim, n, id, [&](auto& sink) {
                for (std::size_t i = 0; i < dim; ++i)
                    if (!same_value(x[i], id)) sink.put(i, x[i]);
                sink.finish();
            });
        };
    }
    o.entries32 = [](void* v, std::size_t dim, const std::uint32_t* idx, const T* val, std::size_t n, const T& id) {
        write_whole_entries(*static_cast<Out*>(v), dim, idx, val, n, id);
    };
    o.entries64 = [](void* v, std::size_t dim, const std::uint64_t* idx, const T* val, std::size_t n, const T& id) {
        write_whole_entries(*static_cast<Out*>(v), dim, idx, val, n, id);
    };
    return o;
}

} // namespace sparse_reduce::detail
