#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <sparse_reduce/kernel/gather_entries.hpp>
#include <sparse_reduce/kernel/merge_arrays.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <tuple>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

// Each "form" builds one representation from a dense reference vector.
template <class T>
struct as_vector {
    using type = std::vector<T>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op&) { return d; }
};
template <class T>
struct as_span {
    using type = std::span<const T>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op&) { return d; }
};
template <class T>
struct as_eigen_dense {
    using type = Eigen::Matrix<T, Eigen::Dynamic, 1>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op&)
    {
        return Eigen::Map<const type>(d.data(), static_cast<Eigen::Index>(d.size()));
    }
};
template <class T, class I = std::uint32_t>
struct as_index_value {
    using type = sr::index_value_vector<T, I>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op& op) { return sr::to_index_value<I>(d, op); }
};
template <class T>
struct as_rle {
    using type = sr::rle_vector<T>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op& op) { return sr::to_rle(d, op); }
};
template <class T>
struct as_eigen_sparse {
    using type = Eigen::SparseVector<T>;
    template <class Op>
    static type make(const std::vector<T>& d, const Op& op)
    {
        type e;
        sr::convert_into(e, d, op);
        return e;
    }
};

template <class... F>
struct forms {};

template <class T, class Op>
std::vector<T> dense_of(const auto& v, const Op& op)
{
    return sr::to_dense(v, op);
}

const std::size_t dims[] = {0, 1, 2, 63, 1001, 40000};
const double densities[] = {0, 0.001, 0.01, 0.1, 0.5, 1};

// a ⊗ b for every pair of forms, checked against the dense fold; the result
// comes back in a's form (combine) and, for the first op of each type, in
// every output form (combine_into), including in place into a.
template <class T, class Op, class FA, class... FB>
void check_pairs_with(const Op& op, std::mt19937_64& rng, forms<FB...>)
{
    for (std::size_t n : dims)
        for (double d : densities) {
            const auto x = random_dense<T>(rng, n, d, op);
            const auto y = random_dense<T>(rng, n, d * 2 > 1 ? 1 : d * 2, op);
            const auto expected = dense_fold(x, y, op);
            const auto a = FA::make(x, op);
            (
                [&] {
                    const auto b = FB::make(y, op);
                    const auto r = sr::combine(a, b, op);
                    const long diff = first_difference(dense_of<T>(r, op), expected);
                    BOOST_TEST(diff == -1, "combine " << typeid(typename FA::type).name() << " x "
                                                      << typeid(typename FB::type).name() << " n=" << n
                                                      << " d=" << d << " differs at " << diff);
                }(),
                ...);
        }
}

template <class T, class Op, class... F>
void check_all_pairs(const Op& op, std::mt19937_64& rng, forms<F...> fs)
{
    (check_pairs_with<T, Op, F>(op, rng, fs), ...);
}

template <class T, class Op, class Out, class... F>
void check_outputs_for(const Op& op, std::mt19937_64& rng, forms<F...>)
{
    for (double d : densities) {
        const std::size_t n = 3001;
        const auto x = random_dense<T>(rng, n, d, op);
        const auto y = random_dense<T>(rng, n, d, op);
        const auto expected = dense_fold(x, y, op);
        (
            [&] {
                const auto a = F::make(x, op);
                const auto b = F::make(y, op);
                typename Out::type out = Out::make(std::vector<T>(n, sr::identity<T>(op)), op);
                sr::combine_into(out, a, b, op);
                BOOST_TEST(first_difference(dense_of<T>(out, op), expected) == -1,
                           "combine_into " << typeid(typename Out::type).name() << " from "
                                           << typeid(typename F::type).name() << " d=" << d);
            }(),
            ...);
    }
}

template <class T, class Op, class... Out, class... F>
void check_all_outputs(const Op& op, std::mt19937_64& rng, forms<Out...>, forms<F...> fs)
{
    (check_outputs_for<T, Op, Out>(op, rng, fs), ...);
}

template <class T>
using float_forms = forms<as_vector<T>, as_span<T>, as_eigen_dense<T>, as_index_value<T>, as_rle<T>, as_eigen_sparse<T>>;
template <class T>
using float_outputs = forms<as_vector<T>, as_eigen_dense<T>, as_index_value<T>, as_rle<T>, as_eigen_sparse<T>>;
template <class T>
using int_forms = forms<as_vector<T>, as_span<T>, as_eigen_dense<T>, as_index_value<T>,
                        as_index_value<T, std::uint64_t>, as_eigen_sparse<T>>;
template <class T>
using int_outputs = forms<as_vector<T>, as_eigen_dense<T>, as_index_value<T>, as_eigen_sparse<T>>;
template <class T>
using struct_outputs = forms<as_vector<T>, as_index_value<T>, as_index_value<T, std::uint64_t>>;
template <class T>
using struct_forms = forms<as_vector<T>, as_span<T>, as_index_value<T>, as_index_value<T, std::uint64_t>>;

} // namespace

BOOST_AUTO_TEST_SUITE(combine)

BOOST_AUTO_TEST_CASE(double_every_pair)
{
    std::mt19937_64 rng(1);
    check_all_pairs<double>(std::plus<>{}, rng, float_forms<double>{});
    check_all_pairs<double>(std::multiplies<>{}, rng, float_forms<double>{});
    check_all_pairs<double>(sr::min{}, rng, float_forms<double>{});
    check_all_pairs<double>(boost::mpi::maximum<double>{}, rng, float_forms<double>{});
    check_all_outputs<double>(std::plus<>{}, rng, float_outputs<double>{}, float_forms<double>{});
}

BOOST_AUTO_TEST_CASE(float_every_pair)
{
    std::mt19937_64 rng(2);
    check_all_pairs<float>(std::plus<>{}, rng, float_forms<float>{});
    check_all_pairs<float>(sr::max{}, rng, float_forms<float>{});
}

BOOST_AUTO_TEST_CASE(integer_every_pair)
{
    std::mt19937_64 rng(3);
    check_all_pairs<std::int64_t>(std::plus<>{}, rng, int_forms<std::int64_t>{});
    check_all_pairs<std::int64_t>(std::bit_and<>{}, rng, int_forms<std::int64_t>{});
    check_all_pairs<std::int64_t>(std::bit_or<>{}, rng, int_forms<std::int64_t>{});
    check_all_pairs<std::int64_t>(std::bit_xor<>{}, rng, int_forms<std::int64_t>{});
    check_all_pairs<std::int64_t>(sr::min{}, rng, int_forms<std::int64_t>{});
    check_all_pairs<std::uint32_t>(std::multiplies<>{}, rng, int_forms<std::uint32_t>{});
    check_all_pairs<std::uint32_t>(sr::max{}, rng, int_forms<std::uint32_t>{});
    check_all_outputs<std::int64_t>(std::bit_xor<>{}, rng, int_outputs<std::int64_t>{}, int_forms<std::int64_t>{});
}

BOOST_AUTO_TEST_CASE(logical_ops)
{
    std::mt19937_64 rng(4);
    using forms8 = forms<as_vector<std::uint8_t>, as_index_value<std::uint8_t>>;
    check_all_pairs<std::uint8_t>(std::logical_and<>{}, rng, forms8{});
    check_all_pairs<std::uint8_t>(std::logical_or<>{}, rng, forms8{});
}

BOOST_AUTO_TEST_CASE(non_commutative_keeps_a_on_the_left)
{
    std::mt19937_64 rng(5);
    check_all_pairs<affine>(compose{}, rng, struct_forms<affine>{});
    auto op = sr::make_op([](const affine& f, const affine& g) { return compose{}(f, g); }, affine{}, sr::non_commutative);
    check_all_pairs<affine>(op, rng, struct_forms<affine>{});
    check_all_outputs<affine>(compose{}, rng, struct_outputs<affine>{}, struct_forms<affine>{});
}

BOOST_AUTO_TEST_CASE(in_place_and_aliasing)
{
    std::mt19937_64 rng(6);
    const compose op;
    const auto x = random_dense<affine>(rng, 500, 0.3, op);
    const auto y = random_dense<affine>(rng, 500, 0.3, op);
    const auto expected = dense_fold(x, y, op);
    auto a = sr::to_index_value(x, op);
    sr::combine_into(a, a, sr::to_index_value(y, op), op); // a = a ⊗ b
    BOOST_TEST(first_difference(sr::to_dense(a, op), expected) == -1);
    auto b = sr::to_index_value(y, op);
    sr::combine_into(b, sr::to_index_value(x, op), b, op); // b = a ⊗ b
    BOOST_TEST(first_difference(sr::to_dense(b, op), expected) == -1);
    auto d = x;
    sr::combine_into(d, d, sr::to_index_value(y, op), op);
    BOOST_TEST(first_difference(d, expected) == -1);
    auto e = y;
    sr::combine_into(e, sr::to_index_value(x, op), e, op);
    BOOST_TEST(first_difference(e, expected) == -1);
    std::vector<double> p = {1, 0, 2}, q = {0, 0, 3};
    auto r = sr::to_rle(p);
    sr::combine_into(r, r, q, std::plus<>{});
    BOOST_TEST((sr::to_dense(r) == std::vector<double>{1, 0, 5}));
}

BOOST_AUTO_TEST_CASE(results_equal_to_the_identity_are_not_stored)
{
    const std::vector<double> x = {1, 2, 0, -4}, y = {-1, 0, 0, 4};
    const auto r = sr::combine(sr::to_index_value(x), sr::to_index_value(y), std::plus<>{});
    BOOST_TEST(r.nnz() == 1u);
    const auto q = sr::combine(sr::to_rle(x), y, std::plus<>{});
    // 0 2 0 0 encodes as: lone identity (a plain word), 2, run of 2
    BOOST_TEST(q.words().size() == 3u);
    BOOST_TEST(q.nnz() == 2u);
}

BOOST_AUTO_TEST_CASE(dimension_mismatch_throws)
{
    const std::vector<double> x(5), y(6);
    BOOST_CHECK_THROW(sr::combine(x, y, std::plus<>{}), sr::error);
    BOOST_CHECK_THROW(sr::combine(sr::to_index_value(x), sr::to_rle(y), std::plus<>{}), sr::error);
    std::vector<double> out(4);
    BOOST_CHECK_THROW(sr::combine_into(std::span<double>(out), x, x, std::plus<>{}), sr::error);
}

// gather_entries fills arrays sized for exactly the entries it finds: a
// trailing identity must not be stored one slot past them (it overwrote the
// first value of a whole-message reduce's outgoing message: two_tree at 4
// ranks, root 2, returned 10 + 150 ulp for 1 + 2 + 3 + 4).
BOOST_AUTO_TEST_CASE(gather_entries_writes_nothing_past_its_entries)
{
    const std::vector<double> x = {0, 5, 0, 7, 0, 0};
    std::vector<std::uint32_t> idx(3, 0xdeadbeefu);
    std::vector<double> val(3, -1.0);
    const std::size_t n = sr::detail::gather_entries(x.data(), x.size(), idx.data(), val.data(), 0.0);
    BOOST_TEST(n == 2u);
    BOOST_TEST(idx[0] == 1u);
    BOOST_TEST(idx[1] == 3u);
    BOOST_TEST(idx[2] == 0xdeadbeefu); // the slot after the entries is untouched
    BOOST_TEST(val[0] == 5.0);
    BOOST_TEST(val[1] == 7.0);
    BOOST_TEST(val[2] == -1.0);
    const std::vector<double> none(4, 0.0);
    BOOST_TEST(sr::detail::gather_entries(none.data(), none.size(), idx.data(), val.data(), 0.0) == 0u);
    BOOST_TEST(idx[0] == 1u); // nothing written
}

BOOST_AUTO_TEST_SUITE_END()
