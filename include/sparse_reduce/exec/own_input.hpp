#pragma once
// What a reduce_node reads: its own vector, window by window (the caller's
// dense array, or a reader over its entries), and its own scratch arrays.

#include <cstddef>
#include <cstdint>
#include <span>

#include "../kernel/entry_stream.hpp"

namespace sparse_reduce::detail {

// Limits a persistent reader to one window and makes its indices relative.
template <class Reader>
struct window_reader {
    Reader* r;
    std::size_t lo, hi;
    bool done() const { return r->done() || r->index() >= hi; }
    std::size_t index() const { return r->index() - lo; }
    decltype(auto) value() const { return r->value(); }
    void next() { r->next(); }
};

// Where the node reads its own vector from: the dense array when there is
// one, else a reader over the non-identity entries consumed window by window.
template <class T, class Reader>
struct own_input {
    const T* dense = nullptr;
    Reader reader;
    std::span<const std::uint32_t> window_entries; // per window, for choosing the accumulator (kept by the caller)

    // f(reader) over window [lo, lo + len), indices relative to lo. Windows
    // come in increasing order; entries of windows skipped (the other
    // tree's) are passed over.
    template <class F>
    void visit_window(std::size_t lo, std::size_t len, const T& id, F&& f)
    {
        if (dense) return f(dense_reader<T>({dense + lo, len}, id));
        while (!reader.done() && reader.index() < lo) reader.next();
        f(window_reader<Reader>{&reader, lo, lo + len});
    }
};

// Unchecked reader over scratch index/value arrays the node wrote itself.
template <class T>
struct scratch_reader {
    const std::uint32_t* idx;
    const T* val;
    std::size_t n, k = 0;
    bool done() const { return k == n; }
    std::size_t index() const { return idx[k]; }
    const T& value() const { return val[k]; }
    void next() { ++k; }
};

} // namespace sparse_reduce::detail
