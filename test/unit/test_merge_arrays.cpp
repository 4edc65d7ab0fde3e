// kernel/merge_arrays.hpp: merge_arrays against a plain map fold, for the
// branch-free kernel (built-in ops on numbers) and the branchy one (other
// ops, signed plus), on supports that are independent, identical, disjoint
// and in runs, so both kernels and the switch between them run.

#include <boost/test/unit_test.hpp>

#include <sparse_reduce/kernel/fold_into_copy.hpp>
#include <sparse_reduce/kernel/gather_entries.hpp>
#include <sparse_reduce/kernel/merge_arrays.hpp>
#include <sparse_reduce/op/builtin.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace sr = sparse_reduce;

namespace {

template <class I, class T>
struct entries {
    std::vector<I> idx;
    std::vector<T> val;
};

enum class support { independent, identical, disjoint_halves, runs };

// Values that stress the identity rules: -0.0, NaN payloads and pairs that
// cancel to the identity under +.
template <class T>
T value_for(std::mt19937_64& g, std::uint64_t k)
{
    if constexpr (std::is_floating_point_v<T>) {
        switch (g() % 16) {
        case 0: return T(-0.0);
        case 1: return std::bit_cast<T>(std::bit_cast<sr::detail::bits_of<T>>(std::numeric_limits<T>::quiet_NaN()) | 5);
        case 2: return T(k % 7) - T(3); // integral: sums cancel exactly
        default: return static_cast<T>(std::uniform_real_distribution<double>(-4, 4)(g));
        }
    } else {
        return static_cast<T>(g() % 9) + T(1);
    }
}

template <class T>
bool same_bits(const T& x, const T& y)
{
    return sr::detail::same_value(x, y);
}

// Two entry lists as the merge gets them: no stored identities (a caller's
// are filtered after validation; the library never writes one).
template <class I, class T>
std::pair<entries<I, T>, entries<I, T>> make_pair_of(support s, std::size_t dim, double density, std::uint64_t seed,
                                                     T id)
{
    std::mt19937_64 g(seed);
    std::bernoulli_distribution keep(density);
    entries<I, T> a, b;
    for (std::size_t k = 0; k < dim; ++k) {
        bool in_a = keep(g), in_b = keep(g);
        if (s == support::identical) in_b = in_a;
        if (s == support::disjoint_halves) in_a = in_a && k < dim / 2, in_b = in_b && k >= dim / 2;
        if (s == support::runs) in_a = in_a && (k / 300) % 2 == 0, in_b = in_b && (k / 200) % 3 != 1;
        const T va = value_for<T>(g, k), vb = value_for<T>(g, k + 1);
        if (in_a && !same_bits(va, id)) a.idx.push_back(static_cast<I>(k)), a.val.push_back(va);
        if (in_b && !same_bits(vb, id)) b.idx.push_back(static_cast<I>(k)), b.val.push_back(vb);
    }
    return {a, b};
}

// The reference: absent on one side -> the other's value bit for bit; on
// both -> op(a, b), dropped when it is the identity.
template <class IO, class I, class T, class Op>
entries<IO, T> reference(const entries<I, T>& a, const entries<I, T>& b, const Op& op, T id)
{
    std::map<std::uint64_t, std::pair<std::optional<T>, std::optional<T>>> m;
    for (std::size_t k = 0; k < a.idx.size(); ++k) m[a.idx[k]].first = a.val[k];
    for (std::size_t k = 0; k < b.idx.size(); ++k) m[b.idx[k]].second = b.val[k];
    entries<IO, T> r;
    for (const auto& [i, p] : m) {
        T v = p.first && p.second ? static_cast<T>(op(*p.first, *p.second)) : p.first ? *p.first : *p.second;
        if (p.first && p.second && same_bits(v, id)) continue;
        r.idx.push_back(static_cast<IO>(i));
        r.val.push_back(v);
    }
    return r;
}

template <class IO, class I, class T, class Op>
void check_merge(const Op& op, T id, double density)
{
    for (auto s : {support::independent, support::identical, support::disjoint_halves, support::runs})
        for (std::uint64_t seed : {1u, 2u}) {
            const auto [a, b] = make_pair_of<I, T>(s, 20000, density, seed, id);
            std::vector<IO> oi(a.idx.size() + b.idx.size());
            std::vector<T> ov(oi.size());
            const std::size_t n = sr::detail::merge_arrays(a.idx.data(), a.val.data(), a.idx.size(), b.idx.data(),
                                                           b.val.data(), b.idx.size(), oi.data(), ov.data(), op, id);
            const auto want = reference<IO>(a, b, op, id);
            BOOST_TEST_REQUIRE(n == want.idx.size(), "support " << int(s) << " seed " << seed);
            bool ok = true;
            for (std::size_t k = 0; k < n && ok; ++k) ok = oi[k] == want.idx[k] && same_bits(ov[k], want.val[k]);
            BOOST_TEST(ok, "support " << int(s) << " seed " << seed << " density " << density);
        }
}

} // namespace

BOOST_AUTO_TEST_SUITE(merge)

BOOST_AUTO_TEST_CASE(branch_free_kernel_matches_the_fold)
{
    static_assert(sr::detail::branch_free_merge<double, std::plus<>>());
    static_assert(sr::detail::branch_free_merge<float, sr::max>());
    static_assert(sr::detail::branch_free_merge<std::uint32_t, std::plus<>>());
    static_assert(sr::detail::branch_free_merge<std::int64_t, sr::min>());
    for (double d : {0.01, 0.3, 1.0}) {
        check_merge<std::uint32_t, std::uint32_t>(std::plus<>{}, 0.0, d);
        check_merge<int, std::uint32_t>(std::plus<double>{}, 0.0, d); // Eigen's index type out
        check_merge<std::uint64_t, std::uint64_t>(sr::max{}, -std::numeric_limits<float>::infinity(), d);
        check_merge<std::uint32_t, std::uint32_t>(sr::min{}, std::numeric_limits<double>::infinity(), d);
        check_merge<std::uint32_t, std::uint32_t, std::uint32_t>(std::plus<>{}, 0u, d);
        check_merge<std::uint32_t, std::uint32_t, std::int64_t>(sr::min{}, std::numeric_limits<std::int64_t>::max(), d);
    }
}

BOOST_AUTO_TEST_CASE(branchy_kernel_matches_the_fold)
{
    static_assert(!sr::detail::branch_free_merge<std::int64_t, std::plus<>>()); // signed overflow is UB
    const auto minus = [](double a, double b) { return a - 2 * b; };         // any op, order kept
    static_assert(!sr::detail::branch_free_merge<double, decltype(minus)>());
    for (double d : {0.01, 0.3, 1.0}) {
        check_merge<std::uint32_t, std::uint32_t, std::int64_t>(std::plus<>{}, std::int64_t{0}, d);
        check_merge<std::uint32_t, std::uint32_t>(minus, 0.0, d);
    }
}

// fold_dense_to, the dense windows' fold (bit masks for the built-in ops,
// fold_values otherwise), against fold_values element by element, bit for
// bit where one side is absent: every pair of special values (the identity, -0.0, NaN payloads,
// signalling NaN, infinities) under +, min, max and *, into a third array
// and in place on either side.
template <class T, class Op>
void check_dense_fold(const Op& op)
{
    const T id = sr::identity<T>(op);
    using B = sr::detail::bits_of<T>;
    const T specials[] = {id,
                          T(0),
                          T(-0.0),
                          T(1.5),
                          T(-2),
                          std::numeric_limits<T>::infinity(),
                          -std::numeric_limits<T>::infinity(),
                          std::numeric_limits<T>::quiet_NaN(),
                          std::bit_cast<T>(static_cast<B>(std::bit_cast<B>(std::numeric_limits<T>::quiet_NaN()) | 5)),
                          std::numeric_limits<T>::signaling_NaN(),
                          -std::numeric_limits<T>::quiet_NaN()};
    std::vector<T> a, b;
    for (T x : specials)
        for (T y : specials) {
            a.push_back(x);
            b.push_back(y);
        }
    const std::size_t n = a.size();
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = sr::detail::fold_values(a[i], b[i], op, id);
    // Where both are present and op gives a NaN, which operand's payload it
    // carries is the compiler's choice (it may swap a commutative op's
    // operands): any NaN is right there. Everywhere else, the same bits.
    auto same = [&](const std::vector<T>& got) {
        for (std::size_t i = 0; i < n; ++i) {
            const bool both = !same_bits(a[i], id) && !same_bits(b[i], id);
            if (both && std::isnan(want[i]) ? !std::isnan(got[i]) : !same_bits(got[i], want[i])) return false;
        }
        return true;
    };
    std::vector<T> out(n);
    sr::detail::fold_dense_to(out.data(), a.data(), b.data(), n, op, id);
    BOOST_TEST(same(out), "into a third array");
    std::vector<T> in_a = a, in_b = b;
    sr::detail::fold_dense_to(in_a.data(), in_a.data(), b.data(), n, op, id);
    BOOST_TEST(same(in_a), "in place on a");
    sr::detail::fold_dense_to(in_b.data(), a.data(), in_b.data(), n, op, id);
    BOOST_TEST(same(in_b), "in place on b");
}

// The clean blocks (fold_clean_blocks: no identity on either side, op lane
// by lane) and the blend around them, on long arrays: every length around
// the block (4 vectors of 16 bytes) and the run after a block with a hole,
// holes and special values (-0.0, NaN payloads, infinities, a sum that
// cancels to the identity's bits) at random places, into a third array and
// in place on either side, with and without the count.
template <class T, class Op>
void check_long_dense_fold(const Op& op, std::uint64_t seed)
{
    const T id = sr::identity<T>(op);
    std::mt19937_64 rng(seed);
    std::vector<T> specials = {id, T(1), T(2)};
    if constexpr (std::is_floating_point_v<T>) {
        using B = sr::detail::bits_of<T>;
        specials = {id,
                    T(-0.0),
                    T(0.0),
                    std::numeric_limits<T>::infinity(),
                    -std::numeric_limits<T>::infinity(),
                    std::numeric_limits<T>::quiet_NaN(),
                    std::bit_cast<T>(static_cast<B>(std::bit_cast<B>(std::numeric_limits<T>::quiet_NaN()) | 5)),
                    std::numeric_limits<T>::signaling_NaN()};
    }
    auto value = [&](double holes) -> T {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        if (u < holes) return id;
        if (u < holes + 0.01) return specials[rng() % specials.size()];
        if constexpr (std::is_floating_point_v<T>) return static_cast<T>(1 + rng() % 1000) / T(8);
        else return static_cast<T>(rng() | 1);
    };
    for (std::size_t n : {0, 1, 7, 8, 15, 16, 17, 31, 33, 255, 256, 257, 300, 1000, 4099})
        for (double holes : {0.0, 0.002, 0.05, 0.5}) {
            std::vector<T> a(n), b(n);
            for (std::size_t i = 0; i < n; ++i) {
                a[i] = value(holes);
                b[i] = value(holes);
                if constexpr (std::is_floating_point_v<T>) {
                    if (i % 97 == 5) b[i] = -a[i]; // cancels: x + -x is +0.0, the identity of + (absent)
                    // where op on the identity is not the value itself (-0.0 + 0.0 is +0.0, a
                    // signalling NaN comes back quiet), alone in an otherwise clean block
                    const T odd = i % 2 ? T(-0.0) : std::numeric_limits<T>::signaling_NaN();
                    if (i % 61 == 3) a[i] = odd, b[i] = id;
                    if (i % 67 == 9) a[i] = id, b[i] = odd;
                }
            }
            std::vector<T> want(n);
            std::size_t present = 0;
            for (std::size_t i = 0; i < n; ++i) {
                want[i] = sr::detail::fold_values(a[i], b[i], op, id);
                present += !same_bits(want[i], id);
            }
            auto same = [&](const std::vector<T>& got) {
                for (std::size_t i = 0; i < n; ++i) {
                    const bool both = !same_bits(a[i], id) && !same_bits(b[i], id);
                    if constexpr (std::is_floating_point_v<T>)
                        if (both && std::isnan(want[i])) {
                            if (!std::isnan(got[i])) return false;
                            continue;
                        }
                    if (!same_bits(got[i], want[i])) return false;
                }
                return true;
            };
            const std::string where = "n = " + std::to_string(n) + ", holes " + std::to_string(holes);
            std::vector<T> out(n);
            BOOST_TEST(sr::detail::fold_dense_to(out.data(), a.data(), b.data(), n, op, id) == 0u);
            BOOST_TEST(same(out), where << ", into a third array");
            std::vector<T> counted(n);
            BOOST_TEST(sr::detail::fold_dense_to<true>(counted.data(), a.data(), b.data(), n, op, id) == present, where);
            BOOST_TEST(same(counted), where << ", counting");
            std::vector<T> in_a = a, in_b = b;
            BOOST_TEST(sr::detail::fold_dense_to<true>(in_a.data(), in_a.data(), b.data(), n, op, id) == present, where);
            BOOST_TEST(same(in_a), where << ", in place on a");
            sr::detail::fold_dense_to(in_b.data(), a.data(), in_b.data(), n, op, id);
            BOOST_TEST(same(in_b), where << ", in place on b");
        }
}

// The clean test covers every lane of every vector on both sides: one
// identity at each place of a block otherwise full, against a value for
// which op(value, identity) is not the value's bits (-0.0 + 0.0 is +0.0, a
// signalling NaN comes back quiet), must give that value's bits.
template <class T, class Op>
void check_every_lane(const Op& op)
{
    const T id = sr::identity<T>(op);
    const std::size_t block = 4 * 16 / sizeof(T), n = 3 * block;
    for (const T odd : {T(-0.0), std::numeric_limits<T>::signaling_NaN()})
        for (std::size_t at = block; at < 2 * block; ++at)
            for (int side = 0; side < 2; ++side) {
                std::vector<T> a(n, T(1.5)), b(n, T(2.5));
                (side ? b : a)[at] = id;
                (side ? a : b)[at] = odd;
                std::vector<T> out(n);
                BOOST_TEST(sr::detail::fold_dense_to<true>(out.data(), a.data(), b.data(), n, op, id) == n);
                BOOST_TEST(same_bits(out[at], odd), "identity at " << at << " on side " << side);
                BOOST_TEST(same_bits(out[at + 1], static_cast<T>(op(T(1.5), T(2.5)))));
            }
}

BOOST_AUTO_TEST_CASE(dense_fold_of_long_arrays_with_clean_blocks)
{
    check_every_lane<double>(std::plus<>{});
    check_every_lane<double>(std::multiplies<>{});
    check_every_lane<float>(std::plus<>{});
    check_every_lane<float>(std::multiplies<>{});
    static_assert(sr::detail::lanewise_op<double, std::plus<>>() && sr::detail::lanewise_op<float, std::multiplies<>>());
    static_assert(sr::detail::lanewise_op<std::uint32_t, std::bit_xor<>>() && !sr::detail::lanewise_op<double, sr::min>());
    // an op typed for another type computes in that type, clean block or not
    static_assert(sr::detail::lanewise_op<double, std::plus<double>>() && !sr::detail::lanewise_op<double, std::plus<float>>());
    static_assert(!sr::detail::lanewise_op<std::uint64_t, std::plus<std::uint32_t>>());
    check_long_dense_fold<double>(std::plus<float>{}, 10);
    check_long_dense_fold<std::uint64_t>(std::plus<std::uint32_t>{}, 11);
    check_long_dense_fold<double>(std::plus<>{}, 1);
    check_long_dense_fold<double>(std::multiplies<>{}, 2);
    check_long_dense_fold<float>(std::plus<>{}, 3);
    check_long_dense_fold<float>(std::multiplies<>{}, 4);
    check_long_dense_fold<std::uint64_t>(std::plus<>{}, 5);
    check_long_dense_fold<std::uint32_t>(std::bit_xor<>{}, 6);
    check_long_dense_fold<std::uint64_t>(std::bit_and<>{}, 7);
    check_long_dense_fold<std::int64_t>(std::bit_or<>{}, 8);
    check_long_dense_fold<double>(sr::max{}, 9); // the blend alone
}

BOOST_AUTO_TEST_CASE(dense_fold_keeps_present_values_bit_for_bit)
{
    check_dense_fold<double>(std::plus<>{});
    check_dense_fold<double>(sr::min{});
    check_dense_fold<double>(sr::max{});
    check_dense_fold<double>(std::multiplies<>{});
    check_dense_fold<float>(std::plus<>{});
    check_dense_fold<float>(sr::min{});
    check_dense_fold<float>(sr::max{});
}

// gather_entries against a plain loop: arrays with clean blocks (copied by
// copy_clean_blocks), holes at every position of a block, -0.0 beside a +0.0
// identity (equal as numbers, not as bits: present), NaNs, a NaN identity,
// integers, 32- and 64-bit indices and an index base.
template <class IO, class T>
void check_gather(const T id, std::uint64_t seed)
{
    std::mt19937_64 g(seed);
    for (const std::size_t n : {0, 1, 7, 8, 63, 64, 65, 1000, 4099}) {
        for (const int pattern : {0, 1, 2, 3, 4}) {
            std::vector<T> x(n);
            for (std::size_t i = 0; i < n; ++i) {
                x[i] = static_cast<T>(1 + static_cast<int>(i % 97));
                const bool hole = pattern == 1 ? g() % 50 == 0 : pattern == 2 ? g() % 2 == 0 : pattern == 3 && i % 300 == 17;
                if (hole) x[i] = id;
                if constexpr (std::is_floating_point_v<T>) {
                    if (pattern == 4 && i % 13 == 5) x[i] = -x[i] * T(0); // -0.0 or +0.0 times a sign
                    if (pattern == 4 && i % 31 == 7) x[i] = std::numeric_limits<T>::quiet_NaN();
                }
            }
            if (n > 2 && pattern == 3) x[n - 1] = x[n - 2] = id; // trailing identities
            const std::size_t base = pattern * 1000;
            std::vector<IO> want_i;
            std::vector<T> want_v;
            for (std::size_t i = 0; i < n; ++i)
                if (!same_bits(x[i], id)) want_i.push_back(static_cast<IO>(base + i)), want_v.push_back(x[i]);
            std::vector<IO> idx(want_i.size() + 1, IO(12345));
            std::vector<T> val(want_v.size() + 1, T(-7));
            const std::size_t m = sr::detail::gather_entries(x.data(), n, idx.data(), val.data(), id, base);
            BOOST_TEST_REQUIRE(m == want_i.size(), "n " << n << " pattern " << pattern);
            for (std::size_t k = 0; k < m; ++k) {
                BOOST_TEST(idx[k] == want_i[k]);
                BOOST_TEST(same_bits(val[k], want_v[k]), "entry " << k);
            }
            BOOST_TEST(idx[m] == IO(12345)); // nothing written past the entries
            BOOST_TEST(same_bits(val[m], T(-7)));
        }
    }
}

BOOST_AUTO_TEST_CASE(gather_entries_copies_clean_blocks_and_keeps_the_identity_law)
{
    check_gather<std::uint32_t, double>(0.0, 1);
    check_gather<std::uint64_t, double>(0.0, 2);
    check_gather<std::uint32_t, float>(0.0f, 3);
    check_gather<std::uint64_t, float>(1.0f, 4); // the identity of *
    check_gather<std::uint32_t, double>(std::numeric_limits<double>::infinity(), 5);
    check_gather<std::uint32_t, double>(std::numeric_limits<double>::quiet_NaN(), 6); // no block is clean
    check_gather<std::uint32_t, std::int64_t>(0, 7);
    check_gather<std::uint64_t, std::uint32_t>(0xffffffffu, 8);
    check_gather<std::uint16_t, double>(0.0, 9); // 8 indices a vector, 8 values a block
    check_gather<std::uint8_t, double>(0.0, 10); // 16 indices a vector: no block copy
}

// fold_into_copy, the root's own array and a child's sparse block in one
// pass: dst = src with each entry folded in (a fold that is not
// commutative, a * 10 + v), for entries in index order and shuffled, on
// both sides of a 4 KiB stretch's edge, none at all, and every element.
BOOST_AUTO_TEST_CASE(fold_into_copy_folds_each_entry_into_the_copy)
{
    using entries = std::vector<std::pair<std::size_t, double>>;
    struct entry_reader {
        const entries* e;
        std::size_t k = 0;
        bool done() const { return k == e->size(); }
        std::size_t index() const { return (*e)[k].first; }
        const double& value() const { return (*e)[k].second; }
        void next() { ++k; }
    };
    std::mt19937_64 rng(21);
    for (std::size_t len : {0u, 1u, 511u, 512u, 513u, 1025u, 16384u})
        for (double density : {0.0, 0.001, 0.1, 1.0})
            for (bool shuffled : {false, true}) {
                std::vector<double> src(len);
                for (auto& x : src) x = static_cast<double>(rng() % 1000);
                entries e;
                for (std::size_t i = 0; i < len; ++i)
                    if (std::uniform_real_distribution<double>(0, 1)(rng) < density || (density > 0 && (i == 511 || i == 512)))
                        e.push_back({i, static_cast<double>(1 + rng() % 7)});
                if (shuffled) std::shuffle(e.begin(), e.end(), rng);
                std::vector<double> want = src, dst(len, -1.0);
                for (const auto& [i, v] : e) want[i] = want[i] * 10 + v;
                const std::size_t n = sr::detail::fold_into_copy(src.data(), dst.data(), len, entry_reader{&e},
                                                                 [](double a, double v) { return a * 10 + v; });
                BOOST_TEST(n == e.size());
                BOOST_TEST((dst == want), "len " << len << " density " << density << " shuffled " << shuffled);
            }
}

BOOST_AUTO_TEST_SUITE_END()
