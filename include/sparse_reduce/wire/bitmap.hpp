#pragma once
// The bitmap form of a wire block: one bit per element of the block (set:
// the element is an entry), then the entries' values in index order.
//
//   | ceil(len / 64) u64 words, bit i of word w = element 64 w + i | values |
//
// An entry costs its value and the block len / 8 bytes, where index/value
// pays an offset per entry: it is the smaller from 1/16 of the block full
// (16-bit offsets) or 1/32 (32-bit) up to 63/64 (doubles; 31/32 for
// 4-byte values), the middle densities where
// index/value costs up to 25 % more than it (at 50 %: 10 bytes an entry
// against 8.25). A reduction's partial results pass through that range on
// their way up the tree (P = 8 at 10 %: 10 %, 19 %, 34 % into the root).
// wire/block.hpp frames it (tag, count); this file reads and writes it.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../detail/value_equal.hpp"
#include "../repr/rle_codec.hpp"

namespace sparse_reduce::detail {

constexpr std::size_t bitmap_words(std::size_t len) { return (len + 63) / 64; }

// The entries of a bitmap block, in increasing index order. The bitmap is
// checked once when the block is parsed (bitmap_count), so next() checks
// nothing.
template <class T>
class bitmap_reader {
public:
    bitmap_reader(const std::uint64_t* bits, const T* values, std::size_t len)
        : bits_(bits), val_(values), words_(bitmap_words(len))
    {
        w_ = words_ ? bits_[0] : 0;
        advance();
    }
    bool done() const noexcept { return wi_ == words_; }
    std::size_t index() const noexcept { return i_; }
    const T& value() const noexcept { return val_[k_]; }
    void next() noexcept
    {
        ++k_;
        w_ &= w_ - 1;
        advance();
    }
    // f(index, value) for every entry left, word by word with the state in
    // registers (kernel/entry_stream.hpp's for_each_entry takes it): a fold
    // into a dense array spent an eighth more per entry through next().
    template <class F>
    void for_each(F&& f)
    {
        const T* v = val_ + k_;
        std::uint64_t w = w_;
        for (std::size_t wi = wi_; wi < words_;) {
            for (; w != 0; w &= w - 1) f(wi * 64 + static_cast<std::size_t>(std::countr_zero(w)), *v++);
            if (++wi < words_) w = bits_[wi];
        }
        k_ = static_cast<std::size_t>(v - val_);
        wi_ = words_;
        w_ = 0;
    }

private:
    void advance() noexcept
    {
        while (w_ == 0) {
            if (++wi_ >= words_) {
                wi_ = words_;
                return;
            }
            w_ = bits_[wi_];
        }
        i_ = wi_ * 64 + static_cast<std::size_t>(std::countr_zero(w_));
    }
    const std::uint64_t* bits_;
    const T* val_;
    std::size_t words_, wi_ = 0, i_ = 0, k_ = 0;
    std::uint64_t w_ = 0;
};

// Bits set in x, written out: std::popcount is a libgcc call on the default
// x86-64 target (no POPCNT), this loop vectorises.
constexpr std::size_t bits_set(std::uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return static_cast<std::size_t>((x * 0x0101010101010101u) >> 56);
}

// Entries a bitmap marks, or SIZE_MAX when it marks an element past len
// (a malformed block).
inline std::size_t bitmap_count(const std::uint64_t* bits, std::size_t len)
{
    const std::size_t words = bitmap_words(len);
    std::size_t n = 0;
    for (std::size_t w = 0; w < words; ++w) n += bits_set(bits[w]);
    if (len % 64 != 0 && (bits[words - 1] >> (len % 64)) != 0) return static_cast<std::size_t>(-1);
    return n;
}

// Marks increasing indices in a zeroed bitmap, each word built in a
// register and stored once (|= on memory chains every entry on the store
// before it: 5-6 cycles an entry).
class bitmap_marker {
public:
    explicit bitmap_marker(std::uint64_t* bits) noexcept : bits_(bits) {}
    void mark(std::size_t i) noexcept
    {
        if (i / 64 != at_) {
            bits_[at_] |= word_;
            word_ = 0;
            at_ = i / 64;
        }
        word_ |= std::uint64_t{1} << (i % 64);
    }
    void finish() noexcept
    {
        if (word_) bits_[at_] |= word_;
    }

private:
    std::uint64_t* bits_;
    std::size_t at_ = 0;
    std::uint64_t word_ = 0;
};

// The bitmap of n increasing indices, each less `base` below len: the
// words zeroed, then marked.
template <class I>
void write_index_bitmap(const I* idx, std::size_t n, std::size_t base, std::size_t len, std::uint64_t* bits)
{
    std::memset(static_cast<void*>(bits), 0, bitmap_words(len) * 8);
    bitmap_marker marks(bits);
    for (std::size_t k = 0; k < n; ++k) marks.mark(static_cast<std::size_t>(idx[k]) - base);
    marks.finish();
}

// The indices a bitmap of len elements marks, each plus `base`, in
// increasing order into out (room for n): false, with out unspecified,
// unless it marks exactly n elements below len.
template <class I>
bool read_index_bitmap(const std::uint64_t* bits, std::size_t len, std::size_t base, std::size_t n, I* out)
{
    if (bitmap_count(bits, len) != n) return false;
    const std::size_t words = bitmap_words(len);
    for (std::size_t w = 0; w < words; ++w)
        for (std::uint64_t x = bits[w]; x != 0; x &= x - 1)
            *out++ = static_cast<I>(base + w * 64 + static_cast<std::size_t>(std::countr_zero(x)));
    return true;
}

// Writes the bitmap and values of a reader's entries (indices below len;
// identities dropped); returns the entries written.
template <class T, class Reader>
std::size_t write_bitmap(Reader r, std::size_t len, const T& id, std::uint64_t* bits, T* values)
{
    std::memset(static_cast<void*>(bits), 0, bitmap_words(len) * 8);
    bitmap_marker marks(bits);
    std::size_t n = 0;
    for (; !r.done(); r.next()) {
        if (same_value(r.value(), id)) continue;
        marks.mark(r.index());
        values[n++] = r.value();
    }
    marks.finish();
    return n;
}

// The same from a dense float or double array, branch-free (at these
// densities a branch per element mispredicts at random): each value is
// stored at the next slot and the slot advances only for an entry, so the
// writer stores one value past the last entry: values needs room for
// entries + 1 (the encoder takes the form only where it is smaller than
// dense, which leaves that room in the block).
template <rle_value T>
std::size_t write_bitmap_dense(const T* p, std::size_t len, const T& id, std::uint64_t* bits, T* values)
{
    using B = typename rle::layout<T>::bits;
    const B idb = std::bit_cast<B>(id);
    std::size_t n = 0;
    for (std::size_t k = 0; k < len; k += 64) {
        const std::size_t m = len - k < 64 ? len - k : 64;
        std::uint64_t word = 0;
        for (std::size_t j = 0; j < m; ++j) {
            const B bit = nonzero_bit<B>(std::bit_cast<B>(p[k + j]) ^ idb);
            word |= static_cast<std::uint64_t>(bit) << j;
            values[n] = p[k + j];
            n += bit;
        }
        bits[k / 64] = word;
    }
    return n;
}

} // namespace sparse_reduce::detail
