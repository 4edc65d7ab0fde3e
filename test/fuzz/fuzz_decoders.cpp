// libFuzzer target for every decoder that reads bytes from another rank:
// RLE streams (float, double), wire blocks (double, float, int32; empty runs
// too), whole partial-result messages (exec/partial_message.hpp, 32-bit
// indices, blocked or not; dimensions up to 2^22 so several 65536-element
// windows occur) and allreduce's partials (collective/allreduce/
// partial_codec.hpp: runs of blocks and empty runs, windows of 1-64) and
// reduce_scatter's slice indices as gaps (wire/index_gaps.hpp).
// Whatever the bytes, a decoder either throws sparse_reduce::error or yields
// a vector that re-encodes and decodes to itself; it never reads or writes
// out of bounds (ASan + UBSan are on in this build).
//
// Input: byte 0 picks the decoder, bytes 1-2 the dimension, the rest is the
// buffer, copied to 8-aligned storage as a receive buffer would be.

#include <sparse_reduce/sparse_reduce.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace sr = sparse_reduce;

namespace {

[[noreturn]] void broken(const char* what)
{
    std::fprintf(stderr, "fuzz_decoders: %s\n", what);
    std::abort();
}

template <class T>
void rle_stream(const std::byte* p, std::size_t n, std::size_t dim)
{
    std::vector<T> words(n / sizeof(T));
    if (!words.empty()) std::memcpy(words.data(), p, words.size() * sizeof(T));
    try {
        const sr::rle_vector<T> v(dim, std::span<const T>(words));
        const auto dense = sr::to_dense(v);
        const auto again = sr::to_dense(sr::to_rle(dense));
        if (again.size() != dim) broken("rle decode has the wrong dimension");
        for (std::size_t i = 0; i < dim; ++i)
            if (!sr::detail::same_value(again[i], dense[i])) broken("rle re-encode changed data");
    } catch (const sr::error&) {
    }
}

template <class T>
void block(const std::byte* p, std::size_t n, std::size_t len)
{
    std::vector<std::uint64_t> storage(n / 8 + 1);
    if (n) std::memcpy(storage.data(), p, n);
    const auto* bytes = reinterpret_cast<const std::byte*>(storage.data());
    const T id{};
    try {
        const auto view = sr::wire::parse_block<T>({bytes, n}, len, true); // an empty run: its first window
        if (view.bytes > n) broken("block claims more bytes than it was given");
        std::vector<T> out(len);
        sr::wire::visit_block(view, id, [&](auto reader) {
            sr::detail::dense_sink<T> sink(out, id);
            sr::detail::drain(reader, sink);
        });
        std::vector<std::uint64_t> again(sr::wire::max_block_bytes<T>(len) / 8 + 1);
        auto* enc = reinterpret_cast<std::byte*>(again.data());
        const std::size_t m = sr::wire::encode_block<T>(std::span<const T>(out), id, sr::wire::format::adaptive, enc);
        const auto view2 = sr::wire::parse_block<T>({enc, m}, len);
        std::vector<T> out2(len);
        sr::wire::visit_block(view2, id, [&](auto reader) {
            sr::detail::dense_sink<T> sink(out2, id);
            sr::detail::drain(reader, sink);
        });
        for (std::size_t i = 0; i < len; ++i)
            if (!sr::detail::same_value(out[i], out2[i])) broken("block re-encode changed data");
    } catch (const sr::error&) {
    }
}

void partial(const std::byte* p, std::size_t n, std::size_t dim)
{
    std::vector<std::uint64_t> storage(n / 8 + 1), decoded(n / 2 + 1);
    if (n) std::memcpy(storage.data(), p, n);
    auto* bytes = reinterpret_cast<std::byte*>(storage.data());
    try {
        const auto v = sr::detail::parse_partial<double, std::uint32_t>(bytes, n, dim, [&](std::size_t count) {
            if (count > 2 * decoded.size()) broken("blocked indices claim more entries than the bytes hold");
            return reinterpret_cast<std::uint32_t*>(decoded.data());
        });
        if (v.h.flags || v.h.dimension != dim) return; // error texts, dense forms, mismatches: nothing to re-encode
        for (std::size_t k = 0; k < v.n; ++k)
            if (v.idx[k] >= dim || (k && v.idx[k - 1] >= v.idx[k])) broken("partial indices out of order or range");
        // re-encode the entries and parse them again: the same entries
        std::vector<std::uint64_t> again(sr::detail::partial_bytes<double, std::uint32_t>(v.n) / 8 + 1);
        std::vector<std::uint32_t> pairs(2 * (v.n / 4 + 1));
        auto* msg = reinterpret_cast<std::byte*>(again.data());
        std::memcpy(msg + sr::detail::partial_header_bytes, v.val, v.n * sizeof(double));
        std::memcpy(msg + sr::detail::partial_indices_at<double, std::uint32_t>(v.n), v.idx, v.n * 4);
        const std::size_t m = sr::detail::finish_partial<double, std::uint32_t>(msg, v.n, v.n, dim, pairs.data());
        std::vector<std::uint32_t> decoded2(v.n + 1);
        const auto w = sr::detail::parse_partial<double, std::uint32_t>(msg, m, dim, [&](std::size_t) { return decoded2.data(); });
        if (w.n != v.n) broken("partial re-encode changed the count");
        for (std::size_t k = 0; k < v.n; ++k)
            if (w.idx[k] != v.idx[k] || !sr::detail::same_value(w.val[k], v.val[k])) broken("partial re-encode changed data");
    } catch (const sr::error&) {
    }
}

// allreduce's partial: parsed, decoded, re-encoded and decoded again to the same values.
void allreduce_partial(const std::byte* p, std::size_t n, std::size_t dim, std::size_t window)
{
    namespace d = sr::detail;
    d::wire_buffer storage(n / 8 + 1);
    if (n) std::memcpy(storage.data(), p, n);
    try {
        const auto q = d::decode_partial(d::parse_partial<double>(d::bytes_of(storage, n), dim, window), dim, 0.0);
        if (q.entries() > dim) broken("allreduce partial holds more entries than its dimension");
        d::wire_buffer again;
        const std::size_t m = d::encode_partial(&q, dim, window, 0.0, sr::wire::adaptive, 0, again);
        const auto q2 = d::decode_partial(d::parse_partial<double>(d::bytes_of(again, m).subspan(8), dim, window), dim, 0.0);
        const auto dense = [](const d::partial<double>& x) {
            return x.is_dense ? x.dense : sr::to_dense(x.sparse, std::plus<>{});
        };
        const auto a = dense(q), b = dense(q2);
        if (a.size() != dim || b.size() != dim) broken("allreduce partial decodes to the wrong dimension");
        for (std::size_t i = 0; i < dim; ++i)
            if (!sr::detail::same_value(a[i], b[i])) broken("allreduce partial re-encode changed data");
    } catch (const sr::error&) {
    }
}

// Gaps: n indices below len, increasing, or refused; accepted ones write
// back to the same bytes.
void index_gaps(const std::byte* p, std::size_t n, std::size_t len)
{
    const std::size_t count = n == 0 ? 0 : static_cast<std::size_t>(p[0]) % 64;
    if (n) ++p, --n;
    std::vector<std::uint32_t> idx(count + 1, 0xdeadbeef);
    if (!sr::detail::read_index_gaps(p, n, count, 5, len, idx.data())) return;
    if (idx[count] != 0xdeadbeef) broken("gaps wrote past their count");
    for (std::size_t k = 0; k < count; ++k)
        if (idx[k] < 5 || idx[k] >= 5 + len || (k && idx[k - 1] >= idx[k])) broken("gaps out of order or range");
    std::vector<std::byte> again(n + 1);
    if (sr::detail::write_index_gaps(idx.data(), count, 5, again.data()) != n || std::memcmp(again.data(), p, n) != 0)
        broken("gaps re-encode changed bytes");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 3) return 0;
    const std::size_t dim = static_cast<std::size_t>(data[1]) | (static_cast<std::size_t>(data[2]) << 8);
    const auto* p = reinterpret_cast<const std::byte*>(data + 3);
    const std::size_t n = size - 3;
    switch (data[0] % 8) {
    case 0: rle_stream<double>(p, n, dim); break;
    case 1: rle_stream<float>(p, n, dim); break;
    case 2: block<double>(p, n, dim); break;
    case 3: block<float>(p, n, dim); break;
    case 4: block<std::int32_t>(p, n, dim); break;
    case 5: partial(p, n, (dim << 6) | 1); break;
    case 6: index_gaps(p, n, dim); break;
    default: allreduce_partial(p, n, dim & 1023, 1 + (dim >> 10)); break;
    }
    return 0;
}
