// The compiled mode's front (<sparse_reduce/compiled.hpp>): this file
// includes no other header of the library, so every reduce below is a call
// into SparseReduce::compiled, declared by the front and compiled there
// (test_compiled_mode.cpp, with the full headers, covers the rest). Every
// (input, output) pair the front declares, every built-in value type and
// operation, under automatic, binomial (index/value wire, small segments)
// and two_tree, two roots; the root's result checked against a serial fold
// written out here. Runs at 1, 2, 3, 4, 5 and 8 ranks.

#define BOOST_TEST_MODULE compiled_front
#include "mpi_fixture.hpp"

#include "compiled_cases.hpp"

#include <Eigen/SparseCore>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#ifndef SPARSE_REDUCE_COMPILED
#error "test_compiled_front.cpp is built in the compiled mode (CMake: sparse_reduce_add_mpi_test COMPILED)"
#endif

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

constexpr std::size_t dim = 3000; // a few windows under the small segments below

// Rank r's element i: present for about `percent` % of the indices, else
// the identity (absent).
bool present(int rank, std::size_t i, int percent)
{
    return (i * 2654435761u + static_cast<std::size_t>(rank) * 40503u) % 100 < static_cast<std::size_t>(percent);
}
template <class T>
T value_at(int rank, std::size_t i)
{
    return static_cast<T>(1 + (i + static_cast<std::size_t>(rank) * 3) % 7);
}

template <class T, class Op>
std::vector<T> dense_input(int rank, int percent, const Op& op)
{
    std::vector<T> v(dim, sr::identity<T>(op));
    for (std::size_t i = 0; i < dim; ++i)
        if (present(rank, i, percent)) v[i] = value_at<T>(rank, i);
    return v;
}

// The serial fold of every rank's input, rank by rank.
template <class T, class Op>
std::vector<T> serial_fold(int ranks, int percent, const Op& op)
{
    std::vector<T> sum(dim, sr::identity<T>(op));
    for (int r = 0; r < ranks; ++r) {
        const std::vector<T> v = dense_input<T>(r, percent, op);
        for (std::size_t i = 0; i < dim; ++i) sum[i] = op(sum[i], v[i]);
    }
    return sum;
}

template <class T, class Op>
std::vector<T> dense_of(const Eigen::SparseVector<T>& v, const Op& op)
{
    std::vector<T> d(dim, sr::identity<T>(op));
    for (typename Eigen::SparseVector<T>::InnerIterator it(v); it; ++it) d[static_cast<std::size_t>(it.index())] = it.value();
    return d;
}
template <class T, class Op>
std::vector<T> dense_of(const sr::index_value_vector<T>& v, const Op& op)
{
    std::vector<T> d(dim, sr::identity<T>(op));
    for (std::size_t k = 0; k < v.indices().size(); ++k) d[v.indices()[k]] = v.values()[k];
    return d;
}

template <class T, class Op, class Policy>
void every_pair(const Op& op, const Policy& policy, int percent, const std::string& what)
{
    auto& w = world();
    const std::vector<T> mine = dense_input<T>(w.rank(), percent, op);
    const std::vector<T> expected = serial_fold<T>(w.size(), percent, op);

    Eigen::SparseVector<T> eigen_in(static_cast<Eigen::Index>(dim));
    std::vector<std::uint32_t> indices;
    std::vector<T> values;
    for (std::size_t i = 0; i < dim; ++i)
        if (present(w.rank(), i, percent)) {
            eigen_in.insertBack(static_cast<Eigen::Index>(i)) = mine[i];
            indices.push_back(static_cast<std::uint32_t>(i));
            values.push_back(mine[i]);
        }
    const sr::index_value_vector<T> iv_in(dim, indices, values);

    for (int root : {0, w.size() - 1}) {
        const bool at_root = w.rank() == root;
        Eigen::SparseVector<T> eigen_out;
        sr::reduce(w, eigen_in, eigen_out, op, root, policy);
        if (at_root) BOOST_TEST((dense_of(eigen_out, op) == expected), what << " Eigen, root " << root);

        sr::index_value_vector<T> iv_out;
        sr::reduce(w, iv_in, iv_out, op, root, policy);
        if (at_root) BOOST_TEST((dense_of(iv_out, op) == expected), what << " index_value_vector, root " << root);

        std::vector<T> vector_out(dim);
        sr::reduce(w, mine, vector_out, op, root, policy);
        if (at_root) BOOST_TEST((vector_out == expected), what << " std::vector, root " << root);

        std::vector<T> span_out(dim);
        sr::reduce(w, std::span<const T>(mine), std::span<T>(span_out), op, root, policy);
        if (at_root) BOOST_TEST((span_out == expected), what << " std::span, root " << root);
    }
}

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(every_builtin, T, compiled_values)
{
    every_op_and_policy([](const auto& op, const auto& policy, const std::string& what) {
        for (int percent : {1, 30, 100})
            every_pair<T>(op, policy, percent, what + " " + std::to_string(percent) + " %");
    });
}
