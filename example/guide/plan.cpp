// The guide's "Plans", "Fixed-pattern plans" and "The report": a plan reused
// over time steps, a 1-D assembly that sends values only, and what a call's
// report says under each policy.

#include <sparse_reduce/sparse_reduce.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <vector>

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
    return ok;
}

} // namespace guide
