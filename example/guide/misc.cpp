// The guide's "Tuning for a cluster", "Floating point and the order of
// the fold" and "Errors".

#include <sparse_reduce/sparse_reduce.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "guide.hpp"

namespace sr = sparse_reduce;

namespace guide {

bool tuning(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    // Stands in for sparse_reduce_tune's output where there is none (the built-in
    // defaults, in its format); a tuning.txt the tuner wrote is read, not replaced.
    if (me == 0 && !std::ifstream("tuning.txt")) std::ofstream("tuning.txt") << sr::to_string(sr::tuning{});
    world.barrier();
    std::vector<float> mine(4096, 0.0f), out;
    mine[static_cast<std::size_t>(me)] = 1.0f;
    //! [tuning]
    // The file sparse_reduce_tune wrote; every rank must read the same thresholds.
    const sr::policy::automatic tuned{.tuning_file = "tuning.txt"};
    auto plan = sr::make_plan(world, 0, mine.size(), tuned);
    const sr::report r = plan.reduce(mine, out, std::plus<>{});
    // r.tuning is "tuning.txt": the tuning this call's choice came from
    //! [tuning]
    const bool named = r.tuning.find("tuning.txt") != std::string::npos;
    return named && (me != 0 || (out.size() == 4096 && out[static_cast<std::size_t>(ranks - 1)] == 1.0f));
}

bool floating_point(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    std::vector<double> x(8);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 * (me + 1) * static_cast<double>(i + 1);
    //! [floating point]
    // The same policy, ranks and data give the same bits on every run:
    std::vector<double> a, b;
    sr::reduce(world, x, a, std::plus<>{}, 0, sr::policy::binomial{});
    sr::reduce(world, x, b, std::plus<>{}, 0, sr::policy::binomial{});
    // on rank 0, a == b bit for bit; a serial loop or MPI_Reduce may bracket
    // the sum differently and differ from a in the last bits.
    //! [floating point]
    if (me != 0) return true;
    bool ok = a == b;
    for (std::size_t i = 0; i < x.size(); ++i) {
        double serial = 0;
        for (int r = 0; r < ranks; ++r) serial += 0.1 * (r + 1) * static_cast<double>(i + 1);
        ok &= std::abs(a[i] - serial) <= 4 * ranks * std::abs(serial) * 1.2e-16; // a few ulps
    }
    return ok;
}

bool errors(const boost::mpi::communicator& world)
{
    const int me = world.rank();
    bool ok = true;
    Eigen::SparseVector<double> out;
    {
        Eigen::SparseVector<double> v(100);
        bool caught = false;
        //! [invalid root]
        try {
            sr::reduce(world, v, out, std::plus<>{}, /*root=*/world.size()); // no such rank
        } catch (const sr::error& e) {
            // every rank: "sparse_reduce: invalid root 2 for a communicator of size 2"
            std::cerr << e.what() << '\n';
            //! [invalid root]
            caught = std::string(e.what()).find("invalid root") != std::string::npos;
            //! [invalid root]
        }
        //! [invalid root]
        ok &= caught;
    }
    {
        auto plan = sr::make_plan(world, 0, 100);
        std::string one_shot, planned, all;
        //! [bad input]
        // Rank 1 passes a vector of the wrong dimension.
        Eigen::SparseVector<double> v(me == 1 ? 50 : 100);
        try {
            sr::reduce(world, v, out, std::plus<>{}, 0); // one-shot: every rank throws, before anything is sent
        } catch (const sr::error& e) {
            // "sparse_reduce: dimension mismatch: rank 1 has dimension 50; the root (rank 0) has 100"
            std::cerr << e.what() << '\n';
            //! [bad input]
            one_shot = e.what();
            //! [bad input]
        }
        try {
            plan.reduce(v, out, std::plus<>{}); // a plan of dimension 100: rank 1 and the root throw
        } catch (const sr::error& e) {
            // rank 1 and the root: "sparse_reduce: reduce failed on rank 1: dimension mismatch: rank 1 has
            // dimension 50, the plan has 100"; the other ranks return normally
            std::cerr << e.what() << '\n';
            //! [bad input]
            planned = e.what();
            //! [bad input]
        }
        //! [bad input]
        const bool two = world.size() >= 2;
        ok &= two == (one_shot.find("dimension mismatch: rank 1 has dimension 50") != std::string::npos);
        const bool should_throw = two && (me == 0 || me == 1);
        ok &= should_throw == !planned.empty() && (planned.empty() || planned.find("rank 1") != std::string::npos);
        // allreduce: every rank throws, naming rank 1
        try {
            sr::allreduce(world, v, out, std::plus<>{});
        } catch (const sr::error& e) {
            all = e.what();
        }
        ok &= two == (all.find("rank 1 has dimension 50") != std::string::npos);
    }
    return ok;
}

} // namespace guide
