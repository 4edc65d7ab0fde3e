// What the tests of started calls (test_start.cpp, test_start_allreduce.cpp)
// share: their vectors (every rank's random input of a salt, the serial sum)
// and conversions between dense and Eigen sparse vectors.
#pragma once

#include "mpi_fixture.hpp"

#include "../support/reference.hpp"

#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace sparse_reduce_test {

inline bool close(const std::vector<double>& got, const std::vector<double>& want)
{
    if (got.size() != want.size()) return false;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (!(std::abs(got[i] - want[i]) <= 1e-12 * std::max(1.0, std::abs(want[i])))) return false;
    return true;
}

inline std::vector<double> dense_of(const Eigen::SparseVector<double>& v)
{
    std::vector<double> d(static_cast<std::size_t>(v.size()), 0.0);
    for (Eigen::SparseVector<double>::InnerIterator it(v); it; ++it) d[static_cast<std::size_t>(it.index())] = it.value();
    return d;
}

inline Eigen::SparseVector<double> sparse_of(const std::vector<double>& d)
{
    Eigen::SparseVector<double> v(static_cast<Eigen::Index>(d.size()));
    for (std::size_t i = 0; i < d.size(); ++i)
        if (d[i] != 0) v.insertBack(static_cast<Eigen::Index>(i)) = d[i];
    return v;
}

inline constexpr std::size_t start_dim = 3000;

// This rank's input of `salt`, and the serial sum of every rank's.
inline std::vector<double> input(unsigned salt, double density = 0.05)
{
    return rank_input<double>(world().rank(), start_dim, density, std::plus<>{}, salt);
}
inline std::vector<double> sum(unsigned salt, double density = 0.05)
{
    return rank_fold<double>(world().size(), start_dim, density, std::plus<>{}, salt);
}

// A started call moved on by test() until it completes, then waited for:
// its report, or its error.
inline sparse_reduce::report poll_then_wait(sparse_reduce::reduce_request req)
{
    while (!req.test()) {
    }
    BOOST_TEST(req.done());
    return req.wait();
}

// A plan's two started calls of dense_in: as a sparse input into a dense
// output (test() until it completes), and as a dense input into a sparse
// output; checked against `want` where the result lands (`lands`: the root
// of a reduce, every rank of an allreduce). The second call's report.
template <class Plan>
sparse_reduce::report check_started_pair(Plan& plan, const std::vector<double>& dense_in,
                                         const std::vector<double>& want, bool lands, const std::string& ctx)
{
    const auto sparse_in = sparse_of(dense_in); // (the call's until it completes)
    std::vector<double> out;
    const sparse_reduce::report r = poll_then_wait(plan.start(sparse_in, out, std::plus<>{}));
    if (lands) BOOST_TEST(close(out, want), ctx << ": sparse in, dense out");
    BOOST_TEST(r.seconds >= r.wait_seconds, ctx);

    Eigen::SparseVector<double> sparse_out;
    auto req2 = plan.start(dense_in, sparse_out, std::plus<>{});
    const sparse_reduce::report started = req2.wait();
    if (lands) BOOST_TEST(close(dense_of(sparse_out), want), ctx << ": dense in, sparse out");
    return started;
}

} // namespace sparse_reduce_test
