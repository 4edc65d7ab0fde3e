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
#include "compiled_cases.hpp"

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

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(every_builtin, T, compiled_values)
{
    every_op_and_policy([](const auto& op, const auto& policy, const std::string& what) {
        every_representation<T>(op, policy, what);
    });
}
