#pragma once
// Where the root's windows go as they are folded (reduce_node::fold_window):
//
//   dense    the caller's array, folded in place;
//   entries  in index order, into the caller's own index and value arrays
//            (caller_output: one tree, whose windows arrive in order), or
//            into memory kept across calls (staged_output: two trees take
//            alternate windows, rank_program interleaves them at the end).
//
// Each window is appended in one tight pass (a dense window compacted by
// gather_entries, a sparse one copied), its room reserved once per window:
// no per-entry checks, no second copy of the result.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "../kernel/gather_entries.hpp"
#include "../repr/representation.hpp"
#include "node_buffers.hpp"

namespace sparse_reduce::detail {

template <class T>
struct root_output {
    T* dense = nullptr;
    void* index = nullptr; // std::uint64_t words if wide, else std::uint32_t
    T* values = nullptr;
    std::size_t size = 0, capacity = 0;
    std::size_t limit = SIZE_MAX; // capacity never needed beyond (the dimension)
    bool wide = true;
    bool in_caller = false; // index and values are the caller's output's arrays
    void* owner = nullptr;  // what grow enlarges: the caller's output or a node_buffers
    void (*grow)(root_output&, std::size_t) = nullptr; // capacity >= n, the entries so far kept
    std::size_t* run_ends = nullptr; // staged: where each window's entries end (its windows in order)
    std::size_t runs = 0;

    void reserve(std::size_t n)
    {
        if (n > capacity) grow(*this, std::max(n, std::min(2 * capacity, limit)));
    }

    // x[0, len)'s non-identity elements as entries lo + i; returns how many.
    std::size_t append_dense(const T* x, std::size_t len, std::size_t lo, const T& id)
    {
        reserve(size + len);
        const std::size_t n =
            wide ? gather_entries(x, len, static_cast<std::uint64_t*>(index) + size, values + size, id, lo)
                 : gather_entries(x, len, static_cast<std::uint32_t*>(index) + size, values + size, id, lo);
        size += n;
        end_run();
        return n;
    }

    // n entries that hold no identity, their indices relative to lo.
    void append_entries(const std::uint32_t* idx, const T* val, std::size_t n, std::size_t lo)
    {
        reserve(size + n);
        if (wide) offset_indices(idx, n, lo, static_cast<std::uint64_t*>(index) + size);
        else offset_indices(idx, n, lo, static_cast<std::uint32_t*>(index) + size);
        if (n) std::memcpy(static_cast<void*>(values + size), val, n * sizeof(T));
        size += n;
        end_run();
    }

    // Entries [begin, end) of the j-th window appended (staged only).
    std::pair<std::size_t, std::size_t> run(std::size_t j) const { return {j ? run_ends[j - 1] : 0, run_ends[j]}; }

private:
    void end_run()
    {
        if (run_ends) run_ends[runs++] = size;
    }

    template <class IO>
    static void offset_indices(const std::uint32_t* idx, std::size_t n, std::size_t lo, IO* out) noexcept
    {
        for (std::size_t k = 0; k < n; ++k) out[k] = static_cast<IO>(lo + idx[k]);
    }
};

// Entries staged in slots 0 and 1 of `pool`, where each of the tree's
// `windows` windows ends in slot 2 (two trees' windows alternate: the root
// interleaves their runs at the end, no entry compared).
template <class T>
root_output<T> staged_output(node_buffers& pool, std::size_t windows)
{
    root_output<T> o;
    o.owner = &pool;
    o.run_ends = pool.get<std::size_t>(2, windows);
    o.grow = [](root_output<T>& s, std::size_t n) {
        auto& p = *static_cast<node_buffers*>(s.owner);
        s.index = p.get<std::uint64_t>(0, n);
        s.values = p.get<T>(1, n);
        s.capacity = n;
    };
    return o;
}

// Whether the root can write Out's index and value arrays as it folds:
// an index/value output that grows keeping its entries, with indices whose
// unsigned type is std::uint32_t or std::uint64_t (a signed index is written
// through it, which may alias it; Eigen's default int is, long long is not).
template <class Out>
inline constexpr bool writable_in_place = [] {
    using R = repr_traits<Out>;
    if constexpr (R::kind != repr_kind::index_value) {
        return false;
    } else {
        using I = typename R::index_type;
        if constexpr (!std::is_integral_v<I> || std::is_same_v<I, bool>) {
            return false;
        } else {
            using U = std::make_unsigned_t<I>;
            return (std::is_same_v<U, std::uint32_t> || std::is_same_v<U, std::uint64_t>) &&
                   requires(Out& v) { R::grow_output(v, std::size_t{1}); };
        }
    }
}();

// The caller's output, emptied and made ready for dimension `dim` with room
// for `initial` entries to start with (R::begin_output checks the dimension
// fits its index type). Its entries are committed by finish_caller_output.
template <class T, class Out>
    requires writable_in_place<Out>
root_output<T> caller_output(Out& out, std::size_t dim, std::size_t initial)
{
    using R = repr_traits<Out>;
    using U = std::make_unsigned_t<typename R::index_type>;
    root_output<T> o;
    const auto slots = R::begin_output(out, dim, std::min(dim, initial));
    o.index = reinterpret_cast<U*>(slots.index);
    o.values = slots.value;
    o.capacity = std::min(dim, initial);
    o.limit = dim;
    o.wide = sizeof(U) == 8;
    o.in_caller = true;
    o.owner = &out;
    o.grow = [](root_output<T>& s, std::size_t n) {
        const auto g = R::grow_output(*static_cast<Out*>(s.owner), n);
        s.index = reinterpret_cast<U*>(g.index);
        s.values = g.value;
        s.capacity = n;
    };
    return o;
}

} // namespace sparse_reduce::detail
