// The guide's "Plans", "Fixed-pattern plans" and "The report": a plan reused
// over time steps, a 1-D assembly of a vector and of a stiffness matrix that
// send values only, and what a call's report says under each policy.

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <vector>

#include <Eigen/SparseCore>

#include "guide.hpp"

namespace sr = sparse_reduce;

namespace guide {

bool plans(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    const std::size_t n = 1 << 16;
    bool ok = true;
    //! [plan]
    // Made once, collectively: the root, the dimension and the policy are fixed.
    auto plan = sr::make_plan(world, /*root=*/0, n);
    Eigen::SparseVector<double> force(static_cast<Eigen::Index>(n)), total;
    for (int step = 0; step < 100; ++step) {
        force.setZero();
        force.insertBack(static_cast<Eigen::Index>(step * 97 + me)) = 1.0;
        plan.reduce(force, total, std::plus<>{}); // steady sizes: no allocation after the first call
        if (me == 0) ok &= total.nonZeros() == ranks; // this step's sum, on rank 0
    }
    //! [plan]
    //! [start]
    // Start the sum of this step's forces; compute the next step's meanwhile.
    Eigen::SparseVector<double> sum, next(static_cast<Eigen::Index>(n));
    sr::reduce_request request = plan.start(force, sum, std::plus<>{});
    for (int piece = 0; piece < 16; ++piece) {
        next.insertBack(static_cast<Eigen::Index>(piece * 1000 + me)) = 1.0; // a piece of the work
        request.test();                                                    // moves the reduce on
    }
    sr::report r = request.wait(); // complete: the sum is on rank 0
    //! [start]
    if (me == 0) ok &= sum.nonZeros() == ranks && r.seconds >= r.wait_seconds && next.nonZeros() == 16;
    //! [start_allreduce]
    // Every rank needs the sum: start an allreduce, compute, then wait.
    Eigen::SparseVector<double> everywhere;
    sr::reduce_request all = sr::iallreduce(world, force, everywhere, std::plus<>{});
    for (int piece = 0; piece < 16; ++piece) all.test(); // (a piece of the work between tests)
    all.wait(); // the sum, on every rank
    //! [start_allreduce]
    ok &= everywhere.nonZeros() == ranks;
    return ok;
}

bool pattern_plans(const boost::mpi::communicator& world)
{
    const auto me = static_cast<std::size_t>(world.rank()), ranks = static_cast<std::size_t>(world.size());
    const std::size_t n = 1000;
    //! [pattern_plan]
    // A 1-D mesh of n nodes: this rank holds elements me, me + ranks, ...;
    // element e adds to nodes e and e + 1, so shared nodes repeat in the list.
    std::vector<std::size_t> nodes;
    for (std::size_t e = me; e + 1 < n; e += ranks) {
        nodes.push_back(e);
        nodes.push_back(e + 1);
    }
    // Made once, collectively: rank r gets the sums of its block of nodes.
    auto plan = sr::make_pattern_plan<double>(world, n, nodes);
    std::vector<double> contributions(nodes.size()), sums; // sums[k]: node plan.support()[k]
    for (int step = 1; step <= 10; ++step) {
        std::fill(contributions.begin(), contributions.end(), 0.5 * step); // each element's share
        plan.reduce(contributions, sums, std::plus<>{}); // values only: no index travels
    }
    // after step 10: 5 at the two end nodes, 10 at every other node
    //! [pattern_plan]
    const auto r = plan.ranges();
    bool ok = sums.size() == r[me + 1] - r[me] && plan.support().size() == sums.size();
    for (std::size_t k = 0; ok && k < sums.size(); ++k) {
        const std::size_t node = plan.support()[k];
        ok = node == r[me] + k && sums[k] == (node == 0 || node == n - 1 ? 5.0 : 10.0);
    }
    return ok;
}

bool matrix_assembly(const boost::mpi::communicator& world)
{
    const auto me = static_cast<std::size_t>(world.rank()), ranks = static_cast<std::size_t>(world.size());
    const std::size_t n = 101;
    //! [matrix_assembly]
    // The stiffness matrix of linear elements on a 1-D mesh of n nodes: this
    // rank holds elements me, me + ranks, ..., each adding its 2 x 2 matrix.
    std::vector<int> i, j;
    std::vector<double> k;
    for (std::size_t e = me; e + 1 < n; e += ranks)
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) {
                i.push_back(static_cast<int>(e) + a);
                j.push_back(static_cast<int>(e) + b);
                k.push_back(a == b ? 1.0 : -1.0);
            }
    // Made once, collectively, from the COO lists (as MatSetPreallocationCOO):
    // rank r gets a block of rows of the n x n matrix.
    auto plan = sr::make_pattern_plan<double>(world, n, n, i, j);
    Eigen::SparseMatrix<double, Eigen::RowMajor> K; // every step: values only
    plan.reduce(k, K, std::plus<>{});
    // this rank's rows of K: 2 on the diagonal (1 at the two ends), -1 beside it
    //! [matrix_assembly]
    const auto rows = plan.ranges();
    bool ok = K.rows() == static_cast<Eigen::Index>(n) && K.cols() == static_cast<Eigen::Index>(n);
    std::size_t held = 0;
    for (std::size_t r = 0; r < n; ++r) {
        const bool mine = r * n >= rows[me] && r * n < rows[me + 1];
        const auto row = static_cast<Eigen::Index>(r);
        const double diag = r == 0 || r == n - 1 ? 1.0 : 2.0;
        if (mine) {
            ok = ok && K.coeff(row, row) == diag && (r == 0 || K.coeff(row, row - 1) == -1.0) &&
                 (r == n - 1 || K.coeff(row, row + 1) == -1.0);
            held += r == 0 || r == n - 1 ? 2 : 3;
        }
    }
    return ok && static_cast<std::size_t>(K.nonZeros()) == held;
}

bool report(const boost::mpi::communicator& world)
{
    const int me = world.rank();
    bool ok = true;
    std::vector<double> mine(1 << 14, 0.0), out;
    for (std::size_t i = static_cast<std::size_t>(me); i < mine.size(); i += 64) mine[i] = 1.0;
    //! [report]
    sr::report r = sr::reduce(world, mine, out, std::plus<>{}, 0);
    if (world.rank() == 0) {
        std::cout << r.algorithm << '\n'                   // what ran, and for automatic the rule
                  << r.reason << '\n'                      // why, in words
                  << r.tuning << '\n'                      // automatic's tuning: "built-in defaults" or a file
                  << r.bytes_sent << " B sent in " << r.messages_sent << " messages, "
                  << r.bytes_received << " B received, "   // by this rank
                  << r.seconds << " s\n"                   // the call's time on this rank
                  << r << '\n';                            // all of it on one line
    }
    //! [report]
    ok &= !r.tuning.empty_text(); // automatic names its tuning on every rank
    //! [report]
    // A fixed policy, with its wire format and segment size:
    r = sr::reduce(world, mine, out, std::plus<>{}, 0,
                   sr::policy::k_ary{.k = 2, .wire = sr::wire::index_value, .segment_bytes = 32 << 10});
    // r.tuning is empty: a fixed policy consults no tuning
    //! [report]
    ok &= r.tuning.empty_text(); // a fixed policy consults no tuning
    if (me == 0) {
        std::cout << r << '\n';
        ok &= r.algorithm.find("k_ary") != std::string::npos && r.messages_sent == 0;
    } else {
        ok &= r.messages_sent > 0 && r.bytes_sent > 0;
    }
    //! [any_policy]
    // Trees chosen at run time (from a command line, a configuration file):
    // this code and the reduce are compiled once for all of them.
    const std::vector<sr::policy::any> trees = {sr::policy::binomial{}, sr::policy::two_tree{.segment_bytes = 16 << 10},
                                                sr::policy::automatic{}};
    for (const sr::policy::any& tree : trees) {
        r = sr::reduce(world, mine, out, std::plus<>{}, 0, tree);
        if (me == 0) std::cout << r.algorithm << '\n';
        //! [any_policy]
        for (std::size_t i = 0; me == 0 && i < out.size(); ++i)
            ok &= out[i] == (static_cast<int>(i % 64) < world.size() ? 1.0 : 0.0);
        //! [any_policy]
    }
    //! [any_policy]
    return ok;
}

} // namespace guide
