// The guide's first program (doc/getting-started.md, "The first reduce"):
// every rank holds an Eigen::SparseVector, rank 0 receives their sum.
// It checks the sum and exits non-zero when it is wrong.
//
//   mpiexec -n 2 guide_first_reduce

//! [program]
#include <sparse_reduce/sparse_reduce.hpp> // everything; or collective/reduce.hpp + repr/eigen.hpp

#include <boost/mpi.hpp>

#include <cstdio>
#include <functional>
#include <iostream>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv); // MPI must be running before any call
    boost::mpi::communicator world;
    const int me = world.rank(), ranks = world.size();

    // A vector of a million elements; this rank touches two of them.
    Eigen::SparseVector<double> mine(1'000'000), sum;
    mine.insertBack(me) = 1.0;        // its own entry
    mine.insertBack(500'000) = 0.5;   // one entry every rank shares

    sr::report r = sr::reduce(world, mine, sum, std::plus<>{}, /*root=*/0);

    if (me == 0) {
        // ranks own entries of 1.0, and 0.5 * ranks at 500000: ranks + 1 entries
        const bool ok = sum.size() == 1'000'000 && sum.nonZeros() == ranks + 1 &&
                        sum.coeff(0) == 1.0 && sum.coeff(500'000) == 0.5 * ranks;
        std::cout << "sum has " << sum.nonZeros() << " entries; " << r << '\n';
        std::printf("first reduce: %s\n", ok ? "OK" : "WRONG");
        return ok ? 0 : 1;
    }
    return 0;
}
//! [program]
