// Demo: every rank holds an Eigen::SparseVector<double> of dimension 2^20
// with about 0.1% nonzeros (an FEM-like assembly: each rank touches its own
// stretch of the index space plus a few shared entries). sparse_reduce::reduce
// sums them on rank 0; the demo checks the result against MPI_Reduce of the
// dense vectors and prints what each one moved.
//
//   mpiexec -n 4 ./demo

#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
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

    Eigen::SparseVector<double> sum;
    const sr::report rep = sr::reduce(world, mine, sum, std::plus<>{}, 0);

    // The same reduction the way MPI users do it today: dense buffers.
    std::vector<double> dense = sr::to_dense(mine), reference(me == 0 ? dimension : 0);
    MPI_Reduce(dense.data(), reference.data(), static_cast<int>(dimension), MPI_DOUBLE, MPI_SUM, 0, world);

    const auto sent = boost::mpi::all_reduce(world, rep.bytes_sent, std::plus<>{});
    const auto local_nnz = boost::mpi::all_reduce(world, static_cast<std::size_t>(mine.nonZeros()), std::plus<>{});
    if (me == 0) {
        const bool ok = sr::to_dense(sum) == reference;
        std::printf("SparseReduce %s demo on %d ranks, dimension %zu\n", sr::version_string, ranks, dimension);
        std::printf("  inputs: %zu nonzeros in all; result: %ld nonzeros, %s\n", local_nnz,
                    static_cast<long>(sum.nonZeros()), ok ? "equal to MPI_Reduce of the dense vectors" : "WRONG");
        std::printf("  algorithm: %s\n", rep.algorithm.c_str());
        std::printf("  bytes sent by all ranks: %zu; a dense reduce sends %zu (%.2f%%)\n", sent,
                    (static_cast<std::size_t>(ranks) - 1) * dimension * sizeof(double),
                    ranks > 1 ? 100.0 * static_cast<double>(sent) /
                                    static_cast<double>((static_cast<std::size_t>(ranks) - 1) * dimension * sizeof(double))
                              : 0.0);
        return ok ? 0 : 1;
    }
    return 0;
}
