#pragma once
// Run-length encoding of floating-point data with NaN markers (Hofmann and Rünger 2008, §2.1).
//
// A run of two or more identity elements becomes ONE word: a NaN with the sign
// bit set and the run length in the mantissa (52 bits for double, 23 for
// float). A lone identity stays a plain value. Everything else is stored as is.
//
//   data:    3.0  0  0  0  0  5.0  0  7.0  0  0
//   encoded: 3.0  -NaN(4)     5.0  0  7.0  -NaN(2)
//
// Data NaNs survive bit for bit: a positive NaN cannot be mistaken for a
// marker. A negative data NaN is escaped: the marker with mantissa 1 (a run
// of length 1 never occurs) says "the next word is a literal":
//
//   data:    -NaN(0x8000...)       encoded: -NaN(1)  -NaN(0x8000...)
//
// Mantissa 0 with the sign set is -inf, which is data, so no zero-length run
// exists. Runs longer than the mantissa allows are split.

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "../detail/value_equal.hpp"
#include "../error.hpp"

namespace sparse_reduce {

/// A value rle_vector and the RLE wire format can hold: an IEEE float or double.
template <class T>
concept rle_value = std::floating_point<T> && std::numeric_limits<T>::is_iec559 &&
                    (sizeof(T) == 4 || sizeof(T) == 8);

namespace detail::rle {

template <rle_value T>
struct layout {
    using bits = bits_of<T>;
    static constexpr int mantissa_bits = std::numeric_limits<T>::digits - 1; // 52 or 23
    static constexpr bits mantissa = (bits{1} << mantissa_bits) - 1;
    static constexpr bits sign = bits{1} << (sizeof(T) * 8 - 1);
    static constexpr bits marker_mask = ~mantissa; // sign and exponent, all ones for a marker
    static constexpr std::uint64_t max_run = mantissa;
    static constexpr bits escape_bits = marker_mask | 1;
};

template <rle_value T>
constexpr typename layout<T>::bits to_bits(T v) { return std::bit_cast<typename layout<T>::bits>(v); }

// A marker is a negative NaN; its mantissa is 1 (escape) or a run length >= 2.
template <rle_value T>
constexpr bool is_marker(T w)
{
    using L = layout<T>;
    const auto b = to_bits(w);
    return (b & L::marker_mask) == L::marker_mask && (b & L::mantissa) != 0;
}
template <rle_value T>
constexpr std::uint64_t marker_length(T w) { return to_bits(w) & layout<T>::mantissa; }
template <rle_value T>
constexpr T run_marker(std::uint64_t n)
{
    return std::bit_cast<T>(static_cast<typename layout<T>::bits>(layout<T>::marker_mask | n));
}
template <rle_value T>
constexpr T escape_marker() { return std::bit_cast<T>(layout<T>::escape_bits); }

// 1 when w is a marker, by arithmetic only (x | -x has its top bit set iff
// x != 0), so that loops over many words vectorise even on plain SSE2.
template <rle_value T>
constexpr typename layout<T>::bits marker_flag(T w)
{
    using L = layout<T>;
    using B = typename L::bits;
    const B b = std::bit_cast<B>(w), x = ~b & L::marker_mask, m = b & L::mantissa;
    return (B(1) - nonzero_bit(x)) & nonzero_bit(m);
}

// Worst case of encoded words for n elements: every element an escaped NaN.
constexpr std::size_t max_words(std::size_t n) { return 2 * n; }

// Worst case for n elements of which at most `entries` are not the identity:
// each entry may need an escape, each gap between entries one marker (or a
// few for gaps longer than the longest run).
template <rle_value T>
constexpr std::size_t max_words(std::size_t n, std::size_t entries)
{
    const std::size_t sparse_bound = 3 * entries + n / layout<T>::max_run + 2;
    return sparse_bound < max_words(n) ? sparse_bound : max_words(n);
}

// Writes an encoded stream into a buffer the caller sized with max_words().
// Identity values are held back as a pending run, so callers just put()
// every result and the compression happens on the way out (the fused
// "a ⊗ b → c_C" of Hofmann and Rünger 2008).
template <rle_value T>
class writer {
public:
    writer(T* out, T identity) noexcept : out_(out), begin_(out), id_(identity) {}

    void put(T v)
    {
        if (same_value(v, id_)) {
            ++pending_;
            return;
        }
        flush();
        literal(v);
    }
    void skip(std::size_t n) noexcept { pending_ += n; } // n identities
    void flush()
    {
        std::size_t n = pending_;
        pending_ = 0;
        while (n >= 2) {
            const std::size_t k = std::min<std::uint64_t>(n, layout<T>::max_run);
            *out_++ = run_marker<T>(k);
            n -= k;
        }
        if (n == 1) literal(id_);
    }
    // Encodes n dense values, skipping identity stretches a block at a time.
    void put_dense(const T* p, std::size_t n);

    // a ⊗ b of one element: op where both are present, else the present
    // one bit for bit (op(identity, x) may differ from x: -0.0, NaNs).
    template <class Op>
    T fold(T a, T b, const Op& op) const
    {
        if (same_value(a, id_)) return b;
        if (same_value(b, id_)) return a;
        return static_cast<T>(op(a, b));
    }

    // Bulk path of the fused kernels: when no identity is pending, writes
    // op(a[k], b[k]) for k < chunk straight into the output in one
    // branch-free pass and keeps them if none of a[k], b[k] and the result
    // is an identity or a marker (a[k] checked for markers with check_a);
    // returns false, having kept nothing, otherwise. Needs room for chunk
    // more words.
    static constexpr std::size_t chunk = 256;
    template <class Op>
    bool try_put_chunk(const T* a, const T* b, const Op& op, bool check_a)
    {
        if (pending_ != 0) return false;
        using B = typename layout<T>::bits;
        const B idb = std::bit_cast<B>(id_);
        B special = 0;
        T* o = out_;
        for (std::size_t k = 0; k < chunk; ++k) {
            const T v = static_cast<T>(op(a[k], b[k]));
            o[k] = v;
            const B x = std::bit_cast<B>(v) ^ idb;
            const B xa = std::bit_cast<B>(a[k]) ^ idb, xb = std::bit_cast<B>(b[k]) ^ idb;
            special |= (B(1) - nonzero_bit(x)) | (B(1) - nonzero_bit(xa)) | (B(1) - nonzero_bit(xb)) | marker_flag(v) |
                       (check_a ? marker_flag(a[k]) : B(0));
        }
        if (special != 0) return false;
        out_ += chunk;
        values_ += chunk;
        return true;
    }

    // Encodes op(a[i], b[i]) for i < n.
    template <class Op>
    void put_combined(const T* a, const T* b, std::size_t n, const Op& op)
    {
        std::size_t i = 0;
        while (i < n) {
            if (n - i >= chunk && try_put_chunk(a + i, b + i, op, false)) {
                i += chunk;
                continue;
            }
            const std::size_t end = std::min(n, i + chunk);
            for (; i < end; ++i) put(fold(a[i], b[i], op));
        }
    }

    std::size_t words() const noexcept { return static_cast<std::size_t>(out_ - begin_); }
    std::size_t values() const noexcept { return values_; } // literals written

private:
    void literal(T v)
    {
        if (is_marker(v)) [[unlikely]]
            *out_++ = escape_marker<T>();
        *out_++ = v;
        ++values_;
    }

    T* out_;
    T* begin_;
    T id_;
    std::size_t pending_ = 0;
    std::size_t values_ = 0;
};

} // namespace detail::rle

namespace detail {

// Index of the first element in [from, n) whose bits differ from identity, or
// n. Blocks of 8 are tested with 16-byte vector XOR/OR (SSE2 and up), so
// identity stretches are skipped at memory speed.
inline constexpr std::size_t simd_bytes = 16; // SSE2's register, which every x86-64 has

template <class T>
std::size_t find_non_identity(const T* p, std::size_t from, std::size_t n, const T& id)
{
    if constexpr ((bit_comparable_float<T> || std::is_integral_v<T>) && (sizeof(T) == 4 || sizeof(T) == 8)) {
        using B = bits_of<T>;
        typedef B lanes __attribute__((vector_size(simd_bytes)));
        constexpr std::size_t per = simd_bytes / sizeof(B), block = 4 * per; // four registers a step (the OR below)
        const B idb = std::bit_cast<B>(id);
        lanes idv;
        for (std::size_t k = 0; k < per; ++k) idv[k] = idb;
        std::size_t i = from;
        for (; i + block <= n; i += block) {
            lanes v[4];
            std::memcpy(v, p + i, sizeof v);
            const lanes x = (v[0] ^ idv) | (v[1] ^ idv) | (v[2] ^ idv) | (v[3] ^ idv);
            B any = 0;
            for (std::size_t k = 0; k < per; ++k) any |= x[k];
            if (any) break;
        }
        for (; i < n; ++i)
            if (std::bit_cast<B>(p[i]) != idb) return i;
        return n;
    } else {
        std::size_t i = from;
        while (i < n && same_value(p[i], id)) ++i;
        return i;
    }
}

} // namespace detail

template <rle_value T>
void detail::rle::writer<T>::put_dense(const T* p, std::size_t n)
{
    std::size_t i = 0;
    while (i < n) {
        const std::size_t j = find_non_identity(p, i, n, id_);
        pending_ += j - i;
        if (j == n) break;
        flush();
        literal(p[j]);
        i = j + 1;
    }
}

namespace detail::rle {

// Walks an encoded stream one item at a time, checking as it goes: it never
// reads past the words it was given nor yields a position at or past the
// dimension, whatever the bytes. next() returns false at the (checked) end.
// Failures are reported out of line, so the cursor's loop stays small and inlines.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_truncated(std::size_t pos, std::size_t dim)
{
    fail("malformed RLE buffer: truncated, it decodes to ", pos, " elements of ", dim);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_run(std::uint64_t len, std::size_t pos, std::size_t dim)
{
    fail("malformed RLE buffer: run of ", len, " at position ", pos, " passes the dimension ", dim);
}
[[noreturn, gnu::cold, gnu::noinline]] inline void fail_overflow(std::size_t dim)
{
    fail("malformed RLE buffer: more values than the dimension ", dim);
}

template <rle_value T>
class cursor {
public:
    cursor(const T* words, std::size_t nwords, std::size_t dimension) noexcept
        : w_(words), n_(nwords), dim_(dimension) {}

    // After next() returned true: either a run [pos, pos + run) or one literal at pos.
    std::size_t pos = 0;
    std::size_t run = 0; // 0 for a literal
    T value{};

    [[gnu::always_inline]] bool next()
    {
        pos += run == 0 && started_ ? 1 : run;
        started_ = true;
        if (k_ == n_) {
            if (pos != dim_) fail_truncated(pos, dim_);
            return false;
        }
        T v = w_[k_++];
        run = 0;
        if (is_marker(v)) {
            const std::uint64_t len = marker_length(v);
            if (len == 1) { // escape: the next word is a literal negative NaN
                if (k_ == n_) fail("malformed RLE buffer: escape marker at the end of the buffer");
                v = w_[k_++];
                if (!is_marker(v)) fail("malformed RLE buffer: escape marker before a word that needs no escape");
            } else {
                if (len > dim_ - pos) fail_run(len, pos, dim_);
                run = static_cast<std::size_t>(len);
                return true;
            }
        }
        if (pos >= dim_) fail_overflow(dim_);
        value = v;
        return true;
    }

private:
    const T* w_;
    std::size_t n_;
    std::size_t k_ = 0;
    std::size_t dim_;
    bool started_ = false;
};

// Checks a whole stream; throws error when it is malformed.
template <rle_value T>
void validate(const T* words, std::size_t nwords, std::size_t dimension)
{
    cursor<T> c(words, nwords, dimension);
    while (c.next()) {}
}

} // namespace detail::rle
} // namespace sparse_reduce
