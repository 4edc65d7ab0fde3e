#pragma once
// allreduce's partial results and their codec (detail; collective/allreduce.hpp):
// a partial is index/value while that is smaller than dense, else dense; on
// the wire it is a run of wire blocks (wire/block.hpp) of `window`
// elements each, every block in its smallest form. No MPI here: the codec
// is unit-tested on its own (test/unit/test_partial_codec.cpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../error.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../wire/block.hpp"

namespace sparse_reduce::detail {

// 8-aligned message storage (wire blocks are read in place).
using wire_buffer = std::vector<std::uint64_t>;
inline std::span<const std::byte> bytes_of(const wire_buffer& b, std::size_t n)
{
    return {reinterpret_cast<const std::byte*>(b.data()), n};
}
// `words` 8-byte words of b from word `first`.
inline std::span<const std::byte> bytes_of(const wire_buffer& b, std::size_t first, std::size_t words)
{
    return {reinterpret_cast<const std::byte*>(b.data() + first), words * 8};
}

// A partial result: index/value while that is smaller than dense. A dense
// one lives in `dense`, or in the caller's dense output (`external`,
// `external_size` elements: recursive doubling into a span or an Eigen
// vector builds its result where it goes, so the call holds no second dense
// array). dense_data() and dense_view() read either.
template <class T>
struct partial {
    bool is_dense = false;
    value_vector<T> dense;
    index_value_vector<T, std::uint64_t> sparse;
    T* external = nullptr;
    std::size_t external_size = 0;
    // An external partial whose values are still the caller's dense input,
    // here: recursive doubling folds its first step from the input straight
    // into the output instead of copying the input there first. Reads go
    // here (dense_values(), dense_view()) until the last window is written.
    const T* source = nullptr;

    T* dense_data() { return external ? external : dense.data(); }
    const T* dense_values() const { return source ? source : external ? external : dense.data(); }
    std::span<const T> dense_view() const
    {
        return external ? std::span<const T>(dense_values(), external_size) : std::span<const T>(dense);
    }
    // Writes the values into the output if they are still the input's.
    void materialise()
    {
        if (source) std::copy(source, source + external_size, external);
        source = nullptr;
    }
    std::size_t entries() const { return is_dense ? dense_view().size() : sparse.nnz(); }
};

// The least entry count for which T's entries are better held (and
// combined) dense: 8 + sizeof(T) bytes per entry reach the dense size.
template <class T>
std::size_t dense_is_smaller_entries(std::size_t dimension)
{
    return (dimension * sizeof(T) + sizeof(std::uint64_t) + sizeof(T) - 1) / (sizeof(std::uint64_t) + sizeof(T));
}
// Whether e entries of T are better held (and combined) dense.
template <class T>
bool dense_is_smaller(std::size_t entries, std::size_t dimension)
{
    return entries >= dense_is_smaller_entries<T>(dimension);
}

// A partial built in the caller's dense output (recursive doubling into a
// span or an Eigen vector) is held dense from a 64th of the dimension on,
// far below dense_is_smaller: a dense partial is folded window by window in
// place as the partner's messages arrive (each window still travels in its
// smallest form), where an index/value one is gathered whole, decoded,
// merged into a new list and written out at the end. Measured (P = 2,
// allreduce_bench, doc/benchmarks.md): dense from 2% on at 2^18 and 2^21
// elements, 1.3-2x faster at 2-5%, 4-7x at 10-50%; index/value faster at
// 1% of 2^21.
inline constexpr std::size_t dense_output_partial_from = 64;
inline std::size_t dense_partial_entries(std::size_t dimension)
{
    return (dimension + dense_output_partial_from - 1) / dense_output_partial_from;
}

// Entries [lo, hi) of index/value arrays as a reader relative to lo. A
// value type: encode_block reads its reader twice (measure, then write), so
// exec/reduce_node.hpp's window_reader, which shares one persistent reader,
// does not fit here.
template <class T>
class block_window_reader {
public:
    block_window_reader(const std::uint64_t* idx, const T* val, std::size_t n, std::size_t lo)
        : idx_(idx), val_(val), n_(n), lo_(lo) {}
    bool done() const noexcept { return k_ == n_; }
    std::size_t index() const noexcept { return static_cast<std::size_t>(idx_[k_]) - lo_; }
    const T& value() const noexcept { return val_[k_]; }
    void next() noexcept { ++k_; }

private:
    const std::uint64_t* idx_;
    const T* val_;
    std::size_t n_, lo_, k_ = 0;
};

// Appends window [lo, lo + len) of a partial (or of the dense array
// `dense`, when given) as one wire block at byte offset `at` of buf;
// returns the new end. `bitmap`: adaptive may take the bitmap form.
template <class T>
std::size_t append_block(const partial<T>& p, const T* dense, std::size_t lo, std::size_t len, const T& id,
                         wire::format f, wire_buffer& buf, std::size_t at, bool bitmap)
{
    const std::size_t need = at + wire::max_block_bytes<T>(len, f);
    if (buf.size() * 8 < need) buf.resize((need + 7) / 8);
    std::byte* out = reinterpret_cast<std::byte*>(buf.data()) + at;
    if (!dense && p.is_dense) dense = p.dense_values();
    if (dense) return at + wire::encode_block<T>(std::span<const T>(dense + lo, len), id, f, out, bitmap);
    const auto idx = p.sparse.indices();
    const auto b = std::lower_bound(idx.begin(), idx.end(), static_cast<std::uint64_t>(lo));
    const auto e = std::lower_bound(b, idx.end(), static_cast<std::uint64_t>(lo + len));
    const std::size_t k = static_cast<std::size_t>(b - idx.begin());
    return at + wire::encode_block<T>(block_window_reader<T>(idx.data() + k, p.sparse.values().data() + k,
                                                             static_cast<std::size_t>(e - b), lo),
                                      len, id, f, out, bitmap);
}

// The first element at or after `from` where a sparse partial stores an
// entry (no_entry: none): where its run of empty windows or segments ends.
inline constexpr std::size_t no_entry = ~std::size_t{0};
template <class T>
std::size_t next_entry(const partial<T>& p, std::size_t from)
{
    const auto idx = p.sparse.indices();
    const auto it = std::lower_bound(idx.begin(), idx.end(), static_cast<std::uint64_t>(from));
    return it == idx.end() ? no_entry : static_cast<std::size_t>(*it);
}

// Windows from window w of [first, first + length) (windows of `window`,
// `windows` of them; w and every stride-th after it) in which a sparse
// partial stores no entry: an empty run's count, at most max_run_windows.
// 0 for a dense one: its windows go as blocks, whatever they hold.
template <class T>
std::size_t empty_windows(const partial<T>& p, const T* dense, std::size_t first, std::size_t w, std::size_t windows,
                          std::size_t window, std::size_t stride)
{
    if (dense || p.is_dense) return 0;
    const std::size_t e = next_entry(p, first + w * window);
    const std::size_t next = e == no_entry ? windows : std::min(windows, (e - first) / window);
    return next <= w ? 0 : std::min(wire::max_run_windows, (next - w + stride - 1) / stride);
}

// Appends window w of [first, first + length) at byte `at` of buf: an
// empty run over it and the empty windows after it (every stride-th) when
// a sparse partial has no entry there, so a sparse partial costs its
// entries, not its windows; else its block. Returns the new end; `covered`:
// the windows written.
template <class T>
std::size_t append_window(const partial<T>& p, const T* dense, std::size_t first, std::size_t length, std::size_t w,
                          std::size_t window, std::size_t stride, const T& id, wire::format f, wire_buffer& buf,
                          std::size_t at, bool bitmap, std::size_t& covered)
{
    covered = empty_windows(p, dense, first, w, (length + window - 1) / window, window, stride);
    if (covered) {
        if (buf.size() * 8 < at + wire::header_bytes) buf.resize(at / 8 + 1);
        return at + wire::detail::write_empty_run(reinterpret_cast<std::byte*>(buf.data()) + at, covered);
    }
    covered = 1;
    const std::size_t lo = first + w * window;
    return append_block<T>(p, dense, lo, std::min(window, first + length - lo), id, f, buf, at, bitmap);
}

// The block of the window at lo of a range ending at `to`, at the front of
// bytes. An empty run's view stands for every element it covers (its
// length), which must lie in the range.
template <class T>
wire::block_view<T> parse_window(std::span<const std::byte> bytes, std::size_t lo, std::size_t to, std::size_t window)
{
    auto v = wire::parse_block<T>(bytes, std::min(window, to - lo), true);
    if (v.tag == wire::block_tag::empty_run) {
        if (v.count - 1 > (to - lo - 1) / window)
            fail("malformed block: an empty run of ", v.count, " windows passes its range's end");
        v.length = std::min(to - lo, v.count * window); // count * window < to - lo + window: no overflow
    }
    return v;
}

// Appends one decoded block (window at lo) to an index/value accumulator.
template <class T>
void append_entries(const wire::block_view<T>& v, std::size_t lo, const T& id, std::vector<std::uint64_t>& idx,
                    value_vector<T>& val)
{
    wire::visit_block(v, id, [&](auto r) {
        for (; !r.done(); r.next()) {
            idx.push_back(lo + r.index());
            val.push_back(r.value());
        }
    });
}

// Decodes the blocks of local windows [from, to) (`from` a multiple of
// `window`) starting at byte `at`: into dense_out + base (when given), else
// appended as entries at base + offset. Returns the byte after them.
template <class T>
std::size_t decode_blocks(std::span<const std::byte> bytes, std::size_t at, std::size_t base, std::size_t from,
                          std::size_t to, std::size_t window, const T& id, T* dense_out, std::vector<std::uint64_t>& idx,
                          value_vector<T>& val)
{
    for (std::size_t lo = from; lo < to;) {
        const auto v = parse_window<T>(bytes.subspan(at), lo, to, window);
        at += v.bytes;
        if (dense_out) wire::decode_block_into(v, id, std::span<T>(dense_out + base + lo, v.length));
        else append_entries(v, base + lo, id, idx, val);
        lo += v.length;
    }
    return at;
}

// A whole partial as blocks of `window` elements, behind an 8-byte status
// (0 ok; else 1 + the failing rank). A failed sender sends the status alone.
// Blocks of `window` elements each for elements [first, first + length) of
// p (of dense, when given), appended from byte `at` of buf.
template <class T>
std::size_t append_blocks(const partial<T>& p, const T* dense, std::size_t first, std::size_t length,
                          std::size_t window, const T& id, wire::format f, wire_buffer& buf, std::size_t at, bool bitmap)
{
    for (std::size_t w = 0, covered = 0; w * window < length; w += covered)
        at = append_window<T>(p, dense, first, length, w, window, 1, id, f, buf, at, bitmap, covered);
    return at;
}

template <class T>
std::size_t encode_partial(const partial<T>* p, std::size_t dimension, std::size_t window, const T& id,
                           wire::format f, std::int64_t status, wire_buffer& buf)
{
    if (buf.empty()) buf.resize(1); // a kept buffer is not shrunk: growing it again would zero it
    buf[0] = static_cast<std::uint64_t>(status);
    if (status != 0) return 8;
    return append_blocks<T>(*p, nullptr, 0, dimension, window, id, f, buf, 8, true);
}

// A whole partial's blocks, parsed in place (views[k] at element firsts[k];
// an empty run is one view), and how many entries they hold (a dense or RLE
// block counted as full, an index/value or bitmap block by its entries):
// the form to decode or fold into.
template <class T>
struct parsed_partial {
    std::vector<wire::block_view<T>> views;
    std::vector<std::size_t> firsts;
    std::size_t entries = 0;
};

template <class T>
parsed_partial<T> parse_partial(std::span<const std::byte> bytes, std::size_t dimension, std::size_t window)
{
    parsed_partial<T> b;
    std::size_t at = 0;
    for (std::size_t lo = 0; lo < dimension;) {
        const auto v = parse_window<T>(bytes.subspan(at), lo, dimension, window);
        const bool listed = v.tag == wire::block_tag::index_value16 || v.tag == wire::block_tag::index_value32 ||
                            v.tag == wire::block_tag::bitmap;
        b.entries += listed ? v.count : v.tag == wire::block_tag::empty_run ? 0 : v.length;
        b.views.push_back(v);
        b.firsts.push_back(lo);
        at += v.bytes;
        lo += v.length;
    }
    if (at != bytes.size()) fail("malformed message: ", bytes.size() - at, " bytes after the last block");
    return b;
}

// The parsed blocks into a dense array of the dimension (an empty run
// filled with the identity).
template <class T>
void decode_partial_into(const parsed_partial<T>& b, const T& id, T* out)
{
    for (std::size_t k = 0; k < b.views.size(); ++k)
        wire::decode_block_into(b.views[k], id, std::span<T>(out + b.firsts[k], b.views[k].length));
}

// The parsed blocks as a partial: dense (dense blocks by memcpy) when their
// entries fill it, else index/value.
template <class T>
partial<T> decode_partial(const parsed_partial<T>& b, std::size_t dimension, const T& id)
{
    partial<T> p;
    if (dense_is_smaller<T>(b.entries, dimension)) {
        p.is_dense = true;
        p.dense.resize(dimension);
        decode_partial_into(b, id, p.dense.data());
        return p;
    }
    std::vector<std::uint64_t> idx;
    value_vector<T> val;
    idx.reserve(b.entries);
    val.reserve(b.entries);
    for (std::size_t k = 0; k < b.views.size(); ++k) append_entries(b.views[k], b.firsts[k], id, idx, val);
    p.sparse = index_value_vector<T, std::uint64_t>(dimension, idx, val);
    return p;
}

} // namespace sparse_reduce::detail
