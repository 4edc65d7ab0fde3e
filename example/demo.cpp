// Demo: every rank holds an Eigen::SparseVector<double> of dimension 2^20
// with about 0.1% nonzeros (an FEM-like assembly: each rank touches its own
// stretch of the index space plus a few shared entries). sparse_reduce::reduce
// sums them on rank 0 under every policy; the demo checks each result against
// MPI_Reduce of the dense vectors and prints, policy by policy, the time
// (median of 5 calls, the slowest rank's), the bytes and messages all ranks
// sent, report.algorithm and, below it, report.reason.
//
//   mpiexec -n 4 ./demo

#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>
#include <mpi.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <string>
#include <functional>
#include <random>
#include <vector>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    const std::size_t dimension = std::size_t{1} << 20;
    const int me = world.rank(), ranks = world.size();

    // This rank's contributions: entries in its own slice, and every 4096th
    // index, which all ranks share.
    std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 1);
    Eigen::SparseVector<double> mine(static_cast<Eigen::Index>(dimension));
    const std::size_t slice = dimension / static_cast<std::size_t>(ranks);
    for (std::size_t i = 0; i < dimension; i += 1 + rng() % 1500) {
        const bool own_slice = i / slice == static_cast<std::size_t>(me);
        if (own_slice || i % 4096 == 0) mine.insertBack(static_cast<Eigen::Index>(i)) = 1.0 + static_cast<double>(rng() % 8);
    }

    // The same reduction the way MPI users do it today: dense buffers.
    std::vector<double> dense = sr::to_dense(mine), reference(me == 0 ? dimension : 0);
    const auto local_nnz = boost::mpi::all_reduce(world, static_cast<std::size_t>(mine.nonZeros()), std::plus<>{});
    const std::size_t dense_bytes = (static_cast<std::size_t>(ranks) - 1) * dimension * sizeof(double);
    if (me == 0) {
        std::printf("SparseReduce %s demo on %d ranks, dimension %zu, %zu nonzeros in all inputs\n", sr::version_string,
                    ranks, dimension, local_nnz);
        std::printf("%-16s %10s %12s %9s  %s\n", "policy", "time", "bytes sent", "messages", "algorithm (report)");
    }
    // Median of 5 calls, each timed as its slowest rank.
    auto timed = [&](auto&& call) {
        std::vector<double> t;
        for (int rep = 0; rep < 5; ++rep) {
            world.barrier();
            const double start = MPI_Wtime();
            call();
            t.push_back(boost::mpi::all_reduce(world, MPI_Wtime() - start, boost::mpi::maximum<double>()));
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    };
    const double mpi_time = timed([&] {
        MPI_Reduce(dense.data(), reference.data(), static_cast<int>(dimension), MPI_DOUBLE, MPI_SUM, 0, world);
    });
    bool all_ok = true;
    auto row = [&](const char* name, auto policy) {
        Eigen::SparseVector<double> sum;
        sr::report rep;
        const double t = timed([&] { rep = sr::reduce(world, mine, sum, std::plus<>{}, 0, policy); });
        const auto sent = boost::mpi::all_reduce(world, rep.bytes_sent, std::plus<>{});
        const auto messages = boost::mpi::all_reduce(world, rep.messages_sent, std::plus<>{});
        if (me == 0) {
            const bool ok = sr::to_dense(sum) == reference;
            all_ok &= ok;
            std::printf("%-16s %8.3f ms %12zu %9zu  %s%s\n", name, 1e3 * t, sent, messages, rep.algorithm.c_str(),
                        ok ? "" : "  WRONG: differs from MPI_Reduce");
            if (!rep.reason.empty_text()) std::printf("%-16s %34s  why: %s\n", "", "", rep.reason.c_str());
        }
    };
    row("automatic", sr::policy::automatic{});
    row("binomial", sr::policy::binomial{});
    row("k_ary", sr::policy::k_ary{});
    row("binary", sr::policy::binary{});
    row("chain", sr::policy::chain{});
    row("optimal_binary", sr::policy::optimal_binary{});
    row("two_tree", sr::policy::two_tree{});
    if (me == 0) {
        std::printf("%-16s %8.3f ms %12zu %9d  dense MPI_Reduce, the reference (bytes, messages: one dense vector per rank but the root)\n", "MPI_Reduce", 1e3 * mpi_time,
                    dense_bytes, ranks - 1);
        std::printf("every policy's result %s MPI_Reduce of the dense vectors\n", all_ok ? "equals" : "DIFFERS FROM");
        return all_ok ? 0 : 1;
    }
    return 0;
}
