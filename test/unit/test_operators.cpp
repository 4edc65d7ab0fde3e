#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>

namespace sr = sparse_reduce;
using sparse_reduce_test::affine;
using sparse_reduce_test::compose;

namespace {
struct no_identity {
    int operator()(int a, int b) const { return a + b; }
};
struct user_op { // commutativity declared through Boost.MPI's trait
    int operator()(int a, int b) const { return a + b; }
    int identity() const { return 0; }
};
} // namespace

template <>
struct boost::mpi::is_commutative<user_op, int> : boost::mpl::true_ {};

BOOST_AUTO_TEST_SUITE(operators)

BOOST_AUTO_TEST_CASE(builtin_identities)
{
    BOOST_TEST(sr::identity<double>(std::plus<>{}) == 0.0);
    BOOST_TEST(sr::identity<int>(std::plus<int>{}) == 0);
    BOOST_TEST(sr::identity<double>(std::multiplies<>{}) == 1.0);
    BOOST_TEST(sr::identity<std::uint32_t>(std::bit_and<>{}) == 0xffffffffu);
    BOOST_TEST(sr::identity<std::int16_t>(std::bit_and<std::int16_t>{}) == -1);
    BOOST_TEST(sr::identity<std::uint64_t>(std::bit_or<>{}) == 0u);
    BOOST_TEST(sr::identity<std::uint64_t>(std::bit_xor<>{}) == 0u);
    BOOST_TEST(sr::identity<bool>(std::logical_and<>{}) == true);
    BOOST_TEST(sr::identity<bool>(std::logical_or<>{}) == false);
    BOOST_TEST(sr::identity<double>(sr::min{}) == std::numeric_limits<double>::infinity());
    BOOST_TEST(sr::identity<double>(sr::max{}) == -std::numeric_limits<double>::infinity());
    BOOST_TEST(sr::identity<int>(sr::min{}) == std::numeric_limits<int>::max());
    BOOST_TEST(sr::identity<int>(sr::max{}) == std::numeric_limits<int>::lowest());
    BOOST_TEST(sr::identity<float>(boost::mpi::minimum<float>{}) == std::numeric_limits<float>::infinity());
    BOOST_TEST(sr::identity<long>(boost::mpi::maximum<long>{}) == std::numeric_limits<long>::lowest());
    BOOST_TEST(sr::identity<unsigned>(boost::mpi::bitwise_and<unsigned>{}) == ~0u);
}

BOOST_AUTO_TEST_CASE(identity_is_neutral_on_both_sides)
{
    auto check = [](auto op, auto x) {
        using T = decltype(x);
        const T e = sr::identity<T>(op);
        return op(e, x) == x && op(x, e) == x;
    };
    BOOST_TEST(check(std::plus<>{}, 3.5));
    BOOST_TEST(check(std::multiplies<>{}, -2.0));
    BOOST_TEST(check(std::bit_and<>{}, 0x5a5au));
    BOOST_TEST(check(std::bit_or<>{}, 0x5a5au));
    BOOST_TEST(check(std::bit_xor<>{}, 0x5a5au));
    BOOST_TEST(check(sr::min{}, -7));
    BOOST_TEST(check(sr::max{}, -7.5));
    BOOST_TEST(check(compose{}, affine{3, 4}));
}

BOOST_AUTO_TEST_CASE(commutativity_is_declared_not_guessed)
{
    static_assert(sr::is_commutative_v<std::plus<>, double>);
    static_assert(sr::is_commutative_v<std::plus<int>, int>);
    static_assert(sr::is_commutative_v<std::multiplies<>, float>);
    static_assert(sr::is_commutative_v<std::bit_xor<>, unsigned>);
    static_assert(sr::is_commutative_v<sr::min, int> && sr::is_commutative_v<sr::max, int>);
    static_assert(sr::is_commutative_v<boost::mpi::maximum<int>, int>);
    static_assert(!sr::is_commutative_v<compose, affine>);
    static_assert(sr::is_commutative_v<user_op, int>, "a boost::mpi::is_commutative specialisation counts");
    auto c = sr::make_op([](int a, int b) { return a + b; }, 0, sr::commutative);
    auto n = sr::make_op([](int a, int b) { return a - b; }, 0, sr::non_commutative);
    static_assert(sr::is_commutative_v<decltype(c), int>);
    static_assert(!sr::is_commutative_v<decltype(n), int>);
    BOOST_TEST(c(2, 3) == 5);
    BOOST_TEST(n(2, 3) == -1);
}

BOOST_AUTO_TEST_CASE(concept_membership)
{
    static_assert(sr::associative_op<std::plus<>, double>);
    static_assert(sr::associative_op<sr::max, std::int64_t>);
    static_assert(sr::associative_op<compose, affine>);
    static_assert(sr::associative_op<user_op, int>);
    static_assert(!sr::associative_op<no_identity, int>, "an op needs an identity");
    static_assert(!sr::associative_op<std::plus<>, affine>, "an op must be callable on T");
    auto m = sr::make_op([](const affine& f, const affine& g) { return compose{}(f, g); }, affine{}, sr::non_commutative);
    static_assert(sr::associative_op<decltype(m), affine>);
    BOOST_TEST((sr::identity<affine>(m) == affine{1, 0}));
}

BOOST_AUTO_TEST_CASE(affine_composition_is_associative_and_not_commutative)
{
    std::mt19937_64 rng(7);
    const compose op;
    for (int k = 0; k < 1000; ++k) {
        const affine f{rng(), rng()}, g{rng(), rng()}, h{rng(), rng()};
        BOOST_TEST((op(op(f, g), h) == op(f, op(g, h))));
    }
    BOOST_TEST(!(op(affine{2, 1}, affine{3, 5}) == op(affine{3, 5}, affine{2, 1})));
}

BOOST_AUTO_TEST_SUITE_END()
