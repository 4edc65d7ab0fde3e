// Smallest program built against an installed SparseReduce: proves that the
// package config finds the headers and the MPI/Boost.MPI dependencies.
#include <sparse_reduce/version.hpp>

#include <boost/mpi.hpp>

#include <functional>
#include <iostream>

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;

    const int size = world.size();
    if (world.rank() == 0)
        std::cout << "SparseReduce " << SPARSE_REDUCE_VERSION_STRING << " consumer: " << size
                  << " ranks" << std::endl;

    const int sum = boost::mpi::all_reduce(world, world.rank(), std::plus<int>());
    const int expected = size * (size - 1) / 2;
    if (sum != expected) {
        std::cerr << "rank " << world.rank() << ": all_reduce of ranks gave " << sum
                  << ", expected " << expected << std::endl;
        return 1;
    }
    return 0;
}
