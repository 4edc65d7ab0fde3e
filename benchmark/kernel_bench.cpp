// Combine-kernel benchmark of SparseReduce (Google Benchmark).
//
// Every row works on T = double with op std::plus<>, for vectors of
// N = 2^16 (512 KiB per vector: in cache) and N = 2^21 (16 MiB per vector:
// out of cache), at densities 0.001, 0.01, 0.1, 0.5 and 1.0. A vector of
// density d has exactly round(d * N) non-zero entries at uniformly random,
// distinct positions, with values drawn from [1, 2) (never zero, and a + b is
// never zero, so no cancellation). Inputs a and b use independent positions.
// Arguments are {log2N, density in permille}; the baselines, whose cost does
// not depend on the data, run only at permille 1000.
//
// Throughput: SetBytesProcessed is N * sizeof(double) per iteration for EVERY
// row, whatever the kernel reads or writes, i.e. "GB/s of dense-equivalent
// vector processed": rows are directly comparable (a row at twice the
// bytes_per_second of dense_add is twice as fast as dense_add for the same N),
// not memory bandwidths.
//
// Mentries/s (rows with sparse inputs): stored entries of the sparse inputs
// consumed per second, in millions (for the index/value merge: nnz(a) + nnz(b)
// per iteration), a kIsIterationInvariantRate counter; the value is already
// divided by 1e6, so "250/s" in the console means 250 M entries/s.
//
// Outputs are allocated and sized by one untimed call before the timed loop;
// combine_into / convert_into into an already sized output reuse its storage.
// That includes "encode rle": convert_into from dense to an existing
// rle_vector encodes into the vector's own storage.
//
// Each (row, arguments) pair is checked once against a reference computed
// with plain loops before it is timed; a mismatch skips the row with an error.
//
// Minimum time: 0.2 s per row (full run well under three minutes on two
// cores), unless --benchmark_min_time is given on the command line (or
// BENCHMARK_MIN_TIME in the environment), which then applies, e.g. the short
// smoke run of scripts/test.sh.

#include <sparse_reduce/sparse_reduce.hpp>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sr = sparse_reduce;

namespace {

using T = double;
using plus = std::plus<>;
constexpr plus op{};
constexpr T id = T{0};

constexpr std::size_t wire_block = 65536; // elements per wire block

// ---- inputs ----------------------------------------------------------------

// A dense vector of n elements with round(density * n) non-zero values at
// uniformly random distinct positions.
std::vector<T> random_dense(std::size_t n, double density, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<T> value(1.0, 2.0);
    std::vector<T> v(n, id);
    const auto k = static_cast<std::size_t>(std::llround(density * static_cast<double>(n)));
    if (k >= n) {
        for (auto& x : v) x = value(rng);
        return v;
    }
    // Partial Fisher-Yates: the first k slots of perm are a uniform k-subset.
    std::vector<std::uint32_t> perm(n);
    std::iota(perm.begin(), perm.end(), std::uint32_t{0});
    for (std::size_t i = 0; i < k; ++i) {
        std::uniform_int_distribution<std::size_t> pick(i, n - 1);
        std::swap(perm[i], perm[pick(rng)]);
    }
    std::sort(perm.begin(), perm.begin() + static_cast<std::ptrdiff_t>(k));
    for (std::size_t i = 0; i < k; ++i) v[perm[i]] = value(rng);
    return v;
}

struct wire_blocks {
    std::vector<std::uint64_t> buffer; // 8-aligned storage of the encoded blocks
    std::size_t bytes = 0;             // bytes used
};

// Every form of a and b for one (log2N, permille), built once and shared by
// all rows (never modified by them).
struct inputs {
    std::size_t n = 0;
    std::vector<T> a, b;     // dense
    std::vector<T> sum;      // reference a + b
    sr::rle_vector<T> a_rle, b_rle;
    sr::index_value_vector<T> a_iv, b_iv;
    wire_blocks a_wire;      // a encoded as adaptive blocks of wire_block elements
};

std::size_t wire_capacity_bytes(std::size_t n)
{
    std::size_t total = 0;
    for (std::size_t off = 0; off < n; off += wire_block)
        total += sr::wire::max_block_bytes<T>(std::min(wire_block, n - off), sr::wire::format::adaptive);
    return total;
}

// Encodes `v` block by block into w.buffer (sized beforehand); returns the bytes.
std::size_t wire_encode(std::span<const T> v, std::byte* out)
{
    std::size_t bytes = 0;
    for (std::size_t off = 0; off < v.size(); off += wire_block) {
        const std::size_t len = std::min(wire_block, v.size() - off);
        bytes += sr::wire::encode_block<T>(v.subspan(off, len), id, sr::wire::format::adaptive, out + bytes);
    }
    return bytes;
}

// Decodes the blocks at `in` into the dense vector `out` (sized to the dimension).
void wire_decode(const std::byte* in, std::size_t bytes, std::span<T> out)
{
    std::size_t pos = 0;
    for (std::size_t off = 0; off < out.size(); off += wire_block) {
        const std::size_t len = std::min(wire_block, out.size() - off);
        const auto view = sr::wire::parse_block<T>(std::span<const std::byte>(in + pos, bytes - pos), len);
        sr::wire::decode_block_into(view, id, out.subspan(off, len));
        pos += view.bytes;
    }
}

const inputs& get_inputs(int log2n, int permille)
{
    static std::map<std::pair<int, int>, std::unique_ptr<inputs>> cache;
    auto& slot = cache[{log2n, permille}];
    if (!slot) {
        auto in = std::make_unique<inputs>();
        const std::size_t n = std::size_t{1} << log2n;
        const double density = permille / 1000.0;
        const auto seed = static_cast<std::uint64_t>(log2n) * 1000003u + static_cast<std::uint64_t>(permille) * 17u;
        in->n = n;
        in->a = random_dense(n, density, seed);
        in->b = random_dense(n, density, seed ^ 0x9e3779b97f4a7c15ull);
        in->sum.resize(n);
        for (std::size_t i = 0; i < n; ++i) in->sum[i] = in->a[i] + in->b[i];
        in->a_rle = sr::to_rle(in->a, op);
        in->b_rle = sr::to_rle(in->b, op);
        in->a_iv = sr::to_index_value(in->a, op);
        in->b_iv = sr::to_index_value(in->b, op);
        in->a_wire.buffer.resize(wire_capacity_bytes(n) / 8);
        in->a_wire.bytes = wire_encode(in->a, reinterpret_cast<std::byte*>(in->a_wire.buffer.data()));
        slot = std::move(in);
    }
    return *slot;
}

// ---- helpers ---------------------------------------------------------------

bool same_bits(std::span<const T> x, std::span<const T> y)
{
    return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// Runs `check` once per (row, arguments); false skips the row with an error.
bool checked_once(benchmark::State& state, const char* row, const std::function<bool()>& check)
{
    static std::set<std::tuple<std::string, std::int64_t, std::int64_t>> passed;
    const auto key = std::make_tuple(std::string(row), state.range(0), state.range(1));
    if (passed.count(key)) return true;
    bool ok = false;
    try {
        ok = check();
    } catch (const std::exception& e) {
        state.SkipWithError((std::string(row) + ": threw " + e.what()).c_str());
        return false;
    }
    if (!ok) {
        state.SkipWithError((std::string(row) + ": result differs from the reference").c_str());
        return false;
    }
    passed.insert(key);
    return true;
}

// "GB/s of dense-equivalent vector processed": N * 8 bytes per iteration.
void set_dense_equivalent_bytes(benchmark::State& state, std::size_t n)
{
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n * sizeof(T)));
}

// Millions of entries per second, `entries` per iteration.
void set_mentries(benchmark::State& state, std::size_t entries)
{
    state.counters["Mentries/s"] =
        benchmark::Counter(static_cast<double>(entries) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}

const inputs& args(benchmark::State& state)
{
    return get_inputs(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
}

// ---- 1, 2: baselines (hand-written, not the library) -------------------------

void bm_memcpy(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> dst(in.n);
    for (auto _ : state) {
        std::memcpy(dst.data(), in.a.data(), in.n * sizeof(T));
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

void bm_dense_add(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    const T* a = in.a.data();
    const T* b = in.b.data();
    T* o = c.data();
    const std::size_t n = in.n;
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
        benchmark::DoNotOptimize(o);
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

void bm_dense_add_inplace(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> acc(in.a);
    T* a = acc.data();
    const T* b = in.b.data();
    const std::size_t n = in.n;
    for (auto _ : state) {
        for (std::size_t i = 0; i < n; ++i) a[i] += b[i];
        benchmark::DoNotOptimize(a);
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

// ---- 3-9: combine_into -------------------------------------------------------

// out = a ⊗ b through sr::combine_into, timed; `reference` checks the result
// of the untimed first call (which also sizes the output).
template <class Out, class A, class B, class ToDense>
void run_combine(benchmark::State& state, const char* row, Out& out, const A& a, const B& b, const inputs& in,
                 ToDense&& to_dense_of)
{
    sr::combine_into(out, a, b, op);
    if (!checked_once(state, row, [&] { return same_bits(to_dense_of(out), in.sum); })) return;
    for (auto _ : state) {
        sr::combine_into(out, a, b, op);
        benchmark::DoNotOptimize(&out);
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

const auto dense_of_dense = [](const std::vector<T>& v) -> std::span<const T> { return v; };
const auto dense_of_sparse = [](const auto& v) { return sr::to_dense(v, op); };

void bm_combine_dense_dense_dense(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    run_combine(state, "combine dense+dense->dense", c, in.a, in.b, in, dense_of_dense);
}

// a_C ⊗ b -> c_C: the fused kernel of Hofmann and Rünger (2008) (both inputs at the given density).
void bm_fused_rle_dense_rle(benchmark::State& state)
{
    const auto& in = args(state);
    sr::rle_vector<T> c;
    run_combine(state, "fused rle+dense->rle", c, in.a_rle, in.b, in, dense_of_sparse);
}

// a ⊗ b -> c_C
void bm_fused_dense_dense_rle(benchmark::State& state)
{
    const auto& in = args(state);
    sr::rle_vector<T> c;
    run_combine(state, "fused dense+dense->rle", c, in.a, in.b, in, dense_of_sparse);
}

void bm_rle_rle_rle(benchmark::State& state)
{
    const auto& in = args(state);
    sr::rle_vector<T> c;
    run_combine(state, "rle+rle->rle", c, in.a_rle, in.b_rle, in, dense_of_sparse);
    set_mentries(state, in.a_rle.nnz() + in.b_rle.nnz());
}

// Decompressing at the root: a_C ⊗ b -> c.
void bm_rle_dense_dense(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    run_combine(state, "rle+dense->dense", c, in.a_rle, in.b, in, dense_of_dense);
    set_mentries(state, in.a_rle.nnz());
}

void bm_index_value_merge(benchmark::State& state)
{
    const auto& in = args(state);
    sr::index_value_vector<T> c;
    run_combine(state, "index_value merge", c, in.a_iv, in.b_iv, in, dense_of_sparse);
    set_mentries(state, in.a_iv.nnz() + in.b_iv.nnz());
}

// Scatter of b's entries into a dense accumulator (a copied into c first).
void bm_dense_index_value_dense(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    run_combine(state, "dense+index_value->dense", c, in.a, in.b_iv, in, dense_of_dense);
    set_mentries(state, in.b_iv.nnz());
}

// ---- 10: rle conversions -----------------------------------------------------

void bm_encode_rle(benchmark::State& state)
{
    const auto& in = args(state);
    sr::rle_vector<T> c;
    sr::convert_into(c, in.a, op); // what to_rle does
    if (!checked_once(state, "encode rle", [&] { return same_bits(sr::to_dense(c, op), in.a); })) return;
    for (auto _ : state) {
        sr::convert_into(c, in.a, op);
        benchmark::DoNotOptimize(&c);
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

// to_dense into a preallocated vector (convert_into, which to_dense calls
// with a fresh vector).
void bm_decode_rle(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    sr::convert_into(c, in.a_rle, op);
    if (!checked_once(state, "decode rle", [&] { return same_bits(c, in.a); })) return;
    for (auto _ : state) {
        sr::convert_into(c, in.a_rle, op);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
}

// ---- 11: wire ----------------------------------------------------------------

void bm_wire_encode(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<std::uint64_t> buffer(wire_capacity_bytes(in.n) / 8);
    auto* out = reinterpret_cast<std::byte*>(buffer.data());
    std::size_t bytes = wire_encode(in.a, out);
    if (!checked_once(state, "wire encode adaptive", [&] {
            std::vector<T> back(in.n);
            wire_decode(out, bytes, back);
            return bytes == in.a_wire.bytes && same_bits(back, in.a);
        }))
        return;
    for (auto _ : state) {
        bytes = wire_encode(in.a, out);
        benchmark::DoNotOptimize(out);
        benchmark::DoNotOptimize(bytes);
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
    // Encoded size relative to the dense vector (not a rate).
    state.counters["wire/dense"] = static_cast<double>(bytes) / static_cast<double>(in.n * sizeof(T));
}

void bm_wire_decode(benchmark::State& state)
{
    const auto& in = args(state);
    std::vector<T> c(in.n);
    const auto* src = reinterpret_cast<const std::byte*>(in.a_wire.buffer.data());
    wire_decode(src, in.a_wire.bytes, c);
    if (!checked_once(state, "wire decode", [&] { return same_bits(c, in.a); })) return;
    for (auto _ : state) {
        wire_decode(src, in.a_wire.bytes, c);
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    set_dense_equivalent_bytes(state, in.n);
    state.counters["wire/dense"] = static_cast<double>(in.a_wire.bytes) / static_cast<double>(in.n * sizeof(T));
}

// ---- registration ------------------------------------------------------------

constexpr int log2_sizes[] = {16, 21};
constexpr int densities_permille[] = {1, 10, 100, 500, 1000};

// True when the user set the minimum time (flag or environment), which a
// per-benchmark MinTime() would override. Registration runs before main()
// parses the flags, hence the look at /proc/self/cmdline.
bool min_time_given()
{
    if (std::getenv("BENCHMARK_MIN_TIME") != nullptr) return true;
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string arg;
    while (std::getline(cmdline, arg, '\0'))
        if (arg.rfind("--benchmark_min_time", 0) == 0) return true;
    return false;
}

benchmark::internal::Benchmark* add(const char* name, void (*fn)(benchmark::State&), bool all_densities)
{
    static const bool user_min_time = min_time_given();
    auto* b = benchmark::RegisterBenchmark(name, fn);
    b->ArgNames({"log2N", "permille"})->Unit(benchmark::kMicrosecond);
    if (!user_min_time) b->MinTime(0.2);
    for (const int log2n : log2_sizes) {
        if (all_densities)
            for (const int permille : densities_permille) b->Args({log2n, permille});
        else
            b->Args({log2n, 1000});
    }
    return b;
}

const bool registered = [] {
    add("memcpy", bm_memcpy, false);
    add("dense_add", bm_dense_add, false);
    add("dense_add_inplace", bm_dense_add_inplace, false);
    add("combine dense+dense->dense", bm_combine_dense_dense_dense, false);
    add("fused rle+dense->rle", bm_fused_rle_dense_rle, true);
    add("fused dense+dense->rle", bm_fused_dense_dense_rle, true);
    add("rle+rle->rle", bm_rle_rle_rle, true);
    add("rle+dense->dense", bm_rle_dense_dense, true);
    add("index_value merge", bm_index_value_merge, true);
    add("dense+index_value->dense", bm_dense_index_value_dense, true);
    add("encode rle", bm_encode_rle, true);
    add("decode rle", bm_decode_rle, true);
    add("wire encode adaptive", bm_wire_encode, true);
    add("wire decode", bm_wire_decode, true);
    return true;
}();

} // namespace

BENCHMARK_MAIN();
