// The compiled mode (doc/getting-started.md, "The compiled mode"): this
// executable links SparseReduce::compiled, so every reduce below runs the
// library's instantiations rather than ones compiled here. Every built-in
// value type and operation, in a representation for each reader the library
// holds (Eigen::SparseVector: 32-bit indices; index_value_vector with 64-bit
// ones; dense buffers) and into a dense output from whole messages, under
// automatic and the windows of one tree and of two, two roots; checked
// against the serial fold. Runs at 1, 2, 3, 4, 5 and 8 ranks.

#define BOOST_TEST_MODULE compiled_mode
#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

#ifndef SPARSE_REDUCE_COMPILED
#error "test_compiled_mode.cpp is built in the compiled mode (CMake: sparse_reduce_add_mpi_test COMPILED)"
#endif

namespace {

constexpr std::size_t dim = 3000; // a few windows under the fixed policies' small segments

// The root's result, whatever representation: as a dense vector.
template <class T, class V, class Op>
std::vector<T> dense_of(const V& v, const Op& op)
{
    std::vector<T> d(dim, sr::identity<T>(op));
    sr::convert_into(std::span<T>(d), v, op);
    return d;
}

// reduce of every rank's rank_input, as In, into Out, under policy; the
// root's result compared with the serial fold.
template <class T, class In, class Out, class Op, class Policy>
void check(const Op& op, const Policy& policy, double density, const std::string& what)
{
    auto& w = world();
    const unsigned salt = 11;
    const std::vector<T> mine = rank_input<T>(w.rank(), dim, density, op, salt);
    In in;
    if constexpr (std::is_same_v<In, std::vector<T>>) in = mine;
    else sr::convert_into(in, std::span<const T>(mine), op);
    const std::vector<T> expected = rank_fold<T>(w.size(), dim, density, op, salt);
    for (int root : {0, w.size() - 1}) {
        Out out;
        if constexpr (std::is_same_v<Out, std::vector<T>>) out.assign(dim, T{});
        sr::reduce(w, in, out, op, root, policy);
        if (w.rank() != root) continue;
        const long diff = first_difference(dense_of<T>(out, op), expected);
        BOOST_TEST(diff == -1, what << " root " << root << ": first difference at " << diff);
    }
}

template <class T, class Op, class Policy>
void every_representation(const Op& op, const Policy& policy, const std::string& what)
{
    for (double density : {0.01, 0.3, 1.0}) {
        const std::string at = what + " density " + std::to_string(density);
        check<T, Eigen::SparseVector<T>, Eigen::SparseVector<T>>(op, policy, density, at + " Eigen");
        check<T, sr::index_value_vector<T, std::uint64_t>, sr::index_value_vector<T, std::uint64_t>>(
            op, policy, density, at + " index_value64");
        check<T, std::vector<T>, std::vector<T>>(op, policy, density, at + " dense");
        check<T, sr::index_value_vector<T>, std::vector<T>>(op, policy, density, at + " sparse into dense");
    }
}

// Whole messages where they may go (automatic), the windows over one tree
// and over two.
template <class T, class Op>
void every_policy(const Op& op, const std::string& what)
{
    every_representation<T>(op, sr::policy::automatic{}, what + " automatic");
    every_representation<T>(op, sr::policy::binomial{.wire = sr::wire::index_value, .segment_bytes = 4096},
                            what + " binomial");
    every_representation<T>(op, sr::policy::two_tree{.segment_bytes = 4096}, what + " two_tree");
}

template <class T>
void every_op(const std::string& what)
{
    every_policy<T>(std::plus<>{}, what + " plus");
    every_policy<T>(sr::min{}, what + " min");
    every_policy<T>(sr::max{}, what + " max");
}

} // namespace

BOOST_AUTO_TEST_CASE(float_values) { every_op<float>("float"); }
BOOST_AUTO_TEST_CASE(double_values) { every_op<double>("double"); }
BOOST_AUTO_TEST_CASE(int32_values) { every_op<std::int32_t>("int32"); }
BOOST_AUTO_TEST_CASE(int64_values) { every_op<std::int64_t>("int64"); }
BOOST_AUTO_TEST_CASE(uint64_values) { every_op<std::uint64_t>("uint64"); }
