#pragma once
// Calibration of the cost model on this machine, shared by the tuner and
// the simulator's validation: α and β by ping-pong, γ_dense and γ fitted to
// real runs of the executor.

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/simulate.hpp>

#include "timing.hpp"
#include "workload.hpp"

namespace sparse_reduce::bench {

namespace sr = sparse_reduce;

// Half the round trip of a `bytes` message between ranks 0 and 1 (median).
inline double ping_pong(MPI_Comm comm, int rank, std::size_t bytes, int reps)
{
    std::vector<char> buf(bytes);
    std::vector<double> t;
    for (int i = 0; i < reps + 3; ++i) {
        MPI_Barrier(comm);
        const double start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, comm);
            MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, comm, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, comm);
        }
        if (i >= 3) t.push_back((MPI_Wtime() - start) / 2);
    }
    double m = summarize(t).median;
    MPI_Bcast(&m, 1, MPI_DOUBLE, 0, comm);
    return m;
}

// One case both the fit and the validation use: the executor timed on every
// rank of `world` (binomial tree, index/value in, dense out) and, on rank 0,
// every rank's input for the simulator. The fit runs at the world's own P, so
// that γ is what a rank computes at while all P compute: where P ranks share
// fewer cores (the hosts of scripts/netbench.sh), a rank's share of a core.
struct p_case {
    std::vector<sr::index_value_vector<double>> inputs; // rank 0: every rank's; others: none
    double measured = 0;                                // seconds, median

    p_case(const boost::mpi::communicator& world, std::size_t c, double d, int reps)
    {
        const int p = world.size(), me = world.rank();
        const auto mine = sparse_input(c, d, placement::uniform, me, p);
        if (me == 0)
            for (int r = 0; r < p; ++r) inputs.push_back(r == 0 ? mine : sparse_input(c, d, placement::uniform, r, p));
        std::vector<double> out;
        auto plan = sr::make_plan(world, 0, c, sr::policy::binomial{});
        measured = time_collective(world, 3, reps, [&] { plan.reduce(mine, out, std::plus<>{}); }).median;
    }
    double simulated(const sr::cost_model& m) const // rank 0 only
    {
        std::vector<double> out;
        return sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(inputs), out, std::plus<>{}, 0,
                                   sr::policy::binomial{}, m)
            .time;
    }
};

// γ_dense and γ fitted to the executor itself: real reductions over densities
// 0.001 .. 1 at C = 2^20, each split by the simulator into its parts on the
// critical path,
//     T = T_network(α, β) + γ_dense * dense units + γ * sparse units,
// solved by least squares on relative error (on rank 0, then broadcast).
inline std::pair<double, double> fit_gammas(const boost::mpi::communicator& world, const sr::cost_model& net, int reps)
{
    const std::size_t c = std::size_t{1} << 20;
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
    for (double d : {0.001, 0.01, 0.1, 1.0}) {
        const p_case run(world, c, d, reps);
        if (world.rank() != 0) continue;
        auto part = [&](double alpha, double beta, double gd, double g) {
            sr::cost_model m = net;
            m.alpha = alpha;
            m.beta = beta;
            m.gamma_dense = gd;
            m.gamma = g;
            return run.simulated(m);
        };
        const double tn = part(net.alpha, net.beta, 0, 0), xd = part(0, 0, 1, 0), xs = part(0, 0, 0, 1);
        const double measured = run.measured;
        const double w = 1 / (measured * measured), y = std::max(0.0, measured - tn);
        a11 += w * xd * xd;
        a12 += w * xd * xs;
        a22 += w * xs * xs;
        b1 += w * xd * y;
        b2 += w * xs * y;
    }
    double both[2] = {0, 0};
    if (world.rank() == 0) {
        const double det = a11 * a22 - a12 * a12;
        double gd = (b1 * a22 - b2 * a12) / det, g = (a11 * b2 - a12 * b1) / det;
        if (gd <= 0 || g <= 0) { // one term explains everything: fit it alone
            gd = std::max(1e-12, b1 / a11);
            g = std::max(1e-12, b2 / a22);
        }
        both[0] = gd;
        both[1] = g;
    }
    MPI_Bcast(both, 2, MPI_DOUBLE, 0, world); // rank 0's view, the same on every rank
    return {both[0], both[1]};
}

// α: half the round trip of 8 bytes; β: the extra time per byte of 4 MiB.
// Between ranks 0 and 1 while the others wait in a barrier, as a hop of a
// tree sees it when the other ranks are waiting for their messages.
inline std::pair<double, double> measure_network(const boost::mpi::communicator& world, bool quick)
{
    const double small = ping_pong(world, world.rank(), 8, quick ? 200 : 1000);
    const std::size_t big_bytes = std::size_t{4} << 20;
    const double big = ping_pong(world, world.rank(), big_bytes, quick ? 10 : 40);
    return {small, std::max(1e-13, (big - small) / static_cast<double>(big_bytes))};
}

} // namespace sparse_reduce::bench
