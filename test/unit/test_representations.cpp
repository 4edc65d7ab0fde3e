#include <boost/test/unit_test.hpp>

#include "../support/reference.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

BOOST_AUTO_TEST_SUITE(representations)

BOOST_AUTO_TEST_CASE(index_value_vector_basics)
{
    sr::index_value_vector<double> v(10);
    v.push_back(1, 7.0);
    v.push_back(5, 2.0);
    v.push_back(8, 9.0);
    BOOST_TEST(v.size() == 10u);
    BOOST_TEST(v.nnz() == 3u);
    BOOST_TEST(v.indices()[1] == 5u);
    BOOST_TEST(v.values()[2] == 9.0);
    const std::vector<double> dense = {0, 7, 0, 0, 0, 2, 0, 0, 9, 0};
    BOOST_TEST(sr::to_dense(v) == dense);
    BOOST_TEST((sr::to_index_value(dense) == v));
}

// bools are kept as an array of bools (std::vector<bool> packs bits): the
// values are contiguous, grow, shrink, copy and fold like any other type's.
BOOST_AUTO_TEST_CASE(index_value_vector_of_bools)
{
    sr::index_value_vector<bool> v(1000);
    for (std::uint32_t i = 0; i < 1000; i += 3) v.push_back(i, i % 2 == 0); // grows past its capacity often
    BOOST_TEST(v.nnz() == 334u);
    const std::span<const bool> values = v.values();
    for (std::size_t k = 0; k < values.size(); ++k) BOOST_TEST(values[k] == ((3 * k) % 2 == 0));
    const auto copy = v;
    BOOST_TEST((copy == v));
    v.resize_nnz(2);
    BOOST_TEST(v.nnz() == 2u);
    BOOST_TEST(copy.nnz() == 334u);
    // duplicates folded with or; an entry equal to the identity (false) dropped
    const std::vector<std::uint32_t> idx{4, 1, 4, 2};
    const std::array<bool, 4> val{false, true, true, false};
    const auto folded = sr::index_value_vector<bool>::from_unsorted(10, std::span<const std::uint32_t>(idx),
                                                                    std::span<const bool>(val), sr::max{});
    BOOST_TEST(folded.nnz() == 2u);
    BOOST_TEST(folded.indices()[0] == 1u);
    BOOST_TEST(folded.indices()[1] == 4u);
    BOOST_TEST((folded.values()[0] && folded.values()[1]));
    const std::vector<bool> dense{false, true, false, false, true, false, false, false, false, false};
    const auto as_dense = sr::to_dense(folded, sr::max{});
    BOOST_TEST((std::vector<bool>(as_dense.begin(), as_dense.end()) == dense));
}

BOOST_AUTO_TEST_CASE(index_value_vector_rejects_bad_input)
{
    sr::index_value_vector<double> v(4);
    BOOST_CHECK_THROW(v.push_back(4, 1.0), sr::error);  // at the dimension
    v.push_back(2, 1.0);
    BOOST_CHECK_THROW(v.push_back(2, 1.0), sr::error);  // duplicate
    BOOST_CHECK_THROW(v.push_back(1, 1.0), sr::error);  // decreasing
    using iv = sr::index_value_vector<int>;
    BOOST_CHECK_THROW(iv(5, {0, 3, 2}, {1, 1, 1}), sr::error);
    BOOST_CHECK_THROW(iv(5, {0, 3, 3}, {1, 1, 1}), sr::error);
    BOOST_CHECK_THROW(iv(5, {0, 5}, {1, 1}), sr::error);
    BOOST_CHECK_THROW(iv(5, {0, 1}, {1}), sr::error);
    using small = sr::index_value_vector<int, std::uint16_t>;
    BOOST_CHECK_NO_THROW(small(65536));
    BOOST_CHECK_THROW(small(65537), sr::error);
    try {
        v.push_back(9, 1.0);
        BOOST_FAIL("no exception");
    } catch (const sr::error& e) {
        BOOST_TEST(std::string(e.what()).find("index 9 is out of range for dimension 4") != std::string::npos);
    }
}

BOOST_AUTO_TEST_CASE(from_unsorted_sorts_and_folds_duplicates_in_order)
{
    const std::vector<std::uint32_t> idx = {7, 2, 7, 0, 2, 7};
    const std::vector<affine> val = {{2, 1}, {3, 0}, {5, 2}, {7, 7}, {1, 9}, {1, 1}};
    const compose op;
    const auto v = sr::index_value_vector<affine>::from_unsorted(8, std::span(idx), std::span(val), op);
    BOOST_TEST(v.nnz() == 3u);
    BOOST_TEST(v.indices()[0] == 0u);
    BOOST_TEST(v.indices()[1] == 2u);
    BOOST_TEST(v.indices()[2] == 7u);
    BOOST_TEST((v.values()[1] == op(affine{3, 0}, affine{1, 9})));
    BOOST_TEST((v.values()[2] == op(op(affine{2, 1}, affine{5, 2}), affine{1, 1})));
    // duplicates cancelling to the identity are dropped
    const std::vector<std::uint32_t> i2 = {3, 3};
    const std::vector<double> v2 = {1.5, -1.5};
    BOOST_TEST(sr::index_value_vector<double>::from_unsorted(4, std::span(i2), std::span(v2), std::plus<>{}).nnz() == 0u);
    const std::vector<std::uint32_t> bad = {4};
    const std::vector<double> one = {1.0};
    BOOST_CHECK_THROW(sr::index_value_vector<double>::from_unsorted(4, std::span(bad), std::span(one), std::plus<>{}),
                      sr::error);
}

// Every representation converts to every other and back without loss.
template <class T, class Op>
void check_round_trips(std::size_t n, double density, const Op& op, std::mt19937_64& rng)
{
    const auto dense = random_dense<T>(rng, n, density, op);
    const auto iv = sr::to_index_value(dense, op);
    const auto iv64 = sr::to_index_value<std::uint64_t>(dense, op);
    BOOST_TEST(first_difference(sr::to_dense(iv, op), dense) == -1);
    BOOST_TEST(first_difference(sr::to_dense(iv64, op), dense) == -1);
    std::size_t expected_nnz = 0;
    for (const T& x : dense) expected_nnz += !sr::detail::same_value(x, sr::identity<T>(op));
    BOOST_TEST(iv.nnz() == expected_nnz);
    if constexpr (sr::rle_value<T>) {
        const auto r = sr::to_rle(dense, op);
        BOOST_TEST(r.nnz() <= n);
        BOOST_TEST(first_difference(sr::to_dense(r, op), dense) == -1);
        BOOST_TEST((sr::to_rle(iv, op) == r), "rle from index/value equals rle from dense");
        BOOST_TEST((sr::to_index_value(r, op) == iv));
        Eigen::SparseVector<T> e;
        sr::convert_into(e, r, op);
        BOOST_TEST(static_cast<std::size_t>(e.nonZeros()) == expected_nnz);
        Eigen::Matrix<T, Eigen::Dynamic, 1> ed;
        sr::convert_into(ed, e, op);
        BOOST_TEST(first_difference(std::vector<T>(ed.data(), ed.data() + ed.size()), dense) == -1);
    }
}

BOOST_AUTO_TEST_CASE(round_trips)
{
    std::mt19937_64 rng(42);
    for (std::size_t n : {0u, 1u, 2u, 7u, 1001u, 70000u})
        for (double d : {0.0, 0.001, 0.01, 0.1, 0.5, 1.0}) {
            check_round_trips<double>(n, d, std::plus<>{}, rng);
            check_round_trips<float>(n, d, sr::max{}, rng);
            check_round_trips<double>(n, d, std::multiplies<>{}, rng);
            check_round_trips<std::int32_t>(n, d, std::bit_and<>{}, rng);
            check_round_trips<affine>(n, d, compose{}, rng);
        }
}

BOOST_AUTO_TEST_CASE(dense_adapters)
{
    const std::vector<int> v = {0, 4, 0, 5};
    const std::array<int, 4> a = {0, 4, 0, 5};
    Eigen::VectorXi e(4);
    e << 0, 4, 0, 5;
    Eigen::RowVectorXi row(4);
    row << 0, 4, 0, 5;
    const auto ref = sr::to_index_value(v);
    BOOST_TEST((sr::to_index_value(std::span<const int>(v)) == ref));
    BOOST_TEST((sr::to_index_value(a) == ref));
    BOOST_TEST((sr::to_index_value(e) == ref));
    BOOST_TEST((sr::to_index_value(row) == ref));
    BOOST_TEST(sr::dimension(e) == 4u);
    std::vector<int> storage(3);
    BOOST_CHECK_THROW(sr::convert_into(std::span<int>(storage), ref), sr::error); // wrong size
    std::vector<int> right(4);
    std::span<int> out(right);
    sr::convert_into(out, ref);
    BOOST_TEST(right == v);
    Eigen::Map<Eigen::VectorXi> map(right.data(), 4);
    sr::convert_into(map, sr::index_value_vector<int>(4));
    BOOST_TEST(right == std::vector<int>(4, 0));
}

BOOST_AUTO_TEST_CASE(eigen_sparse_zero_copy_and_absent_entries)
{
    Eigen::SparseVector<double> e(6);
    e.insert(1) = 2.0;
    e.insert(4) = -3.0;
    const auto iv = sr::to_index_value(e);
    BOOST_TEST(iv.nnz() == 2u);
    BOOST_TEST(iv.indices()[1] == 4u);
    Eigen::SparseVector<double> back;
    sr::convert_into(back, iv);
    BOOST_TEST(back.size() == 6);
    BOOST_TEST(back.nonZeros() == 2);
    BOOST_TEST(back.coeff(4) == -3.0);
    // Absent entries are the op's identity: under max they contribute nothing.
    Eigen::SparseVector<double> f(6);
    f.insert(4) = -5.0;
    const auto m = sr::combine(e, f, sr::max{});
    BOOST_TEST(m.coeff(4) == -3.0);
    BOOST_TEST(m.coeff(1) == 2.0);
    BOOST_TEST(m.nonZeros() == 2);
    // A corrupted Eigen vector (indices out of order) is reported, not trusted.
    Eigen::SparseVector<double> bad(6);
    bad.resizeNonZeros(2);
    bad.innerIndexPtr()[0] = 3;
    bad.innerIndexPtr()[1] = 1;
    bad.valuePtr()[0] = bad.valuePtr()[1] = 1.0;
    BOOST_CHECK_THROW(sr::to_dense(bad), sr::error);
    // A dimension that does not fit Eigen's int StorageIndex is refused.
    sr::index_value_vector<double, std::uint64_t> huge(std::size_t{1} << 32);
    Eigen::SparseVector<double> small;
    BOOST_CHECK_THROW(sr::convert_into(small, huge), sr::error);
}

BOOST_AUTO_TEST_SUITE_END()
