#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

namespace sr = sparse_reduce;
namespace rle_codec = sparse_reduce::detail::rle;
using namespace sparse_reduce_test;

namespace {

template <class T>
T from_bits(sr::detail::bits_of<T> b) { return std::bit_cast<T>(b); }

// Values the encoding must carry bit for bit.
template <class T>
std::vector<T> awkward_values()
{
    using L = rle_codec::layout<T>;
    using B = typename L::bits;
    const B exp = L::marker_mask & ~L::sign;
    return {
        std::numeric_limits<T>::quiet_NaN(),
        -std::numeric_limits<T>::quiet_NaN(),
        from_bits<T>(exp | 1),                    // positive signalling NaN, payload 1
        from_bits<T>(L::sign | exp | 1),          // negative NaN with the escape's own bits
        from_bits<T>(L::sign | exp | 2),          // negative NaN that looks like a run of 2
        from_bits<T>(L::sign | exp | L::mantissa), // negative NaN, all payload bits
        from_bits<T>(exp | 12345),
        std::numeric_limits<T>::infinity(),
        -std::numeric_limits<T>::infinity(),     // the bit pattern a zero-length run would have
        T(-0.0),
        std::numeric_limits<T>::denorm_min(),
        -std::numeric_limits<T>::denorm_min(),
        std::numeric_limits<T>::min() / 2,
        T(1.5),
    };
}

template <class T>
void check_awkward_round_trip()
{
    std::mt19937_64 rng(3);
    const auto specials = awkward_values<T>();
    for (double density : {0.001, 0.05, 0.5, 1.0}) {
        std::vector<T> data(5000, T(0));
        std::uniform_real_distribution<double> u(0, 1);
        for (auto& x : data)
            if (u(rng) < density) x = specials[rng() % specials.size()];
        const auto r = sr::to_rle(data);
        const auto back = sr::to_dense(r);
        BOOST_TEST(first_difference(back, data) == -1);
        // and through the validating constructor
        const sr::rle_vector<T> copy(data.size(), r.words());
        BOOST_TEST((copy == r));
    }
}

} // namespace

BOOST_AUTO_TEST_SUITE(rle)

BOOST_AUTO_TEST_CASE(encoding_of_seed_example)
{
    const std::vector<double> data = {3.0, 0, 0, 0, 0, 5.0, 0, 7.0, 0, 0};
    const auto r = sr::to_rle(data);
    const auto w = r.words();
    BOOST_TEST(w.size() == 6u);
    BOOST_TEST(w[0] == 3.0);
    BOOST_TEST(rle_codec::is_marker(w[1]));
    BOOST_TEST(rle_codec::marker_length(w[1]) == 4u);
    BOOST_TEST(w[2] == 5.0);
    BOOST_TEST(std::bit_cast<std::uint64_t>(w[3]) == 0u); // lone identity stays a plain value
    BOOST_TEST(w[4] == 7.0);
    BOOST_TEST(rle_codec::marker_length(w[5]) == 2u);
    BOOST_TEST(r.nnz() == 4u);
}

BOOST_AUTO_TEST_CASE(nan_payloads_signs_infinities_zeros_denormals_survive)
{
    check_awkward_round_trip<double>();
    check_awkward_round_trip<float>();
}

BOOST_AUTO_TEST_CASE(identity_other_than_zero)
{
    // Under max the identity is -inf: runs of -inf compress, zeros are data.
    const double ninf = -std::numeric_limits<double>::infinity();
    const std::vector<double> data = {ninf, ninf, ninf, 0.0, 0.0, 2.0, ninf};
    const auto r = sr::to_rle(data, sr::max{});
    BOOST_TEST(r.words().size() == 5u);
    BOOST_TEST(first_difference(sr::to_dense(r, sr::max{}), data) == -1);
}

BOOST_AUTO_TEST_CASE(runs_longer_than_the_mantissa_split)
{
    const std::size_t n = (std::size_t{1} << 23) + 5; // float mantissa holds 2^23 - 1
    std::vector<float> data(n, 0.0f);
    data[n - 1] = 1.0f;
    const auto r = sr::to_rle(data);
    BOOST_TEST(r.words().size() == 3u); // run(2^23 - 1), run(5), 1.0
    BOOST_TEST(first_difference(sr::to_dense(r), data) == -1);
    data[n - 1] = 0.0f;
    data[(std::size_t{1} << 23)] = 2.0f; // leaves a lone zero after a maximal run
    const auto r2 = sr::to_rle(data);
    BOOST_TEST(first_difference(sr::to_dense(r2), data) == -1);
}

BOOST_AUTO_TEST_CASE(malformed_buffers_throw)
{
    using V = sr::rle_vector<double>;
    const double run3 = rle_codec::run_marker<double>(3), esc = rle_codec::escape_marker<double>();
    const double neg_nan = std::bit_cast<double>(rle_codec::layout<double>::marker_mask | 77);
    auto fails = [](std::size_t dim, std::vector<double> w, const char* what) {
        try {
            V v(dim, std::span<const double>(w));
            BOOST_ERROR("no exception for " << what);
        } catch (const sr::error& e) {
            BOOST_TEST_MESSAGE(what << ": " << e.what());
        }
    };
    fails(4, {1.0, run3, 2.0, 3.0}, "too many values");
    fails(4, {1.0, 2.0, run3}, "run past the end");
    fails(4, {1.0, 2.0}, "truncated");
    fails(4, {1.0, 2.0, 3.0, esc}, "escape at the end");
    fails(4, {esc, 1.0, 2.0, 3.0, 4.0}, "escape before a plain value");
    fails(0, {1.0}, "value in an empty vector");
    BOOST_CHECK_NO_THROW(V(3, std::vector<double>{esc, neg_nan, 0.0, 1.0}));
    // A zero-length run cannot be written: its bit pattern is -inf, data.
    const V minus_inf(1, std::vector<double>{std::bit_cast<double>(rle_codec::layout<double>::marker_mask)});
    BOOST_TEST(sr::to_dense(minus_inf)[0] == -std::numeric_limits<double>::infinity());
}

BOOST_AUTO_TEST_SUITE_END()
