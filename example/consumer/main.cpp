// The smallest program built against SparseReduce, three ways (README.md,
// "Install"): find_package (example/consumer/CMakeLists.txt), FetchContent
// (example/consumer/fetchcontent/) and pkg-config (example/consumer/pkgconfig/).
// One reduce of Eigen sparse vectors, checked on the root against the sum
// written out by hand: the headers, Eigen, MPI and Boost.MPI are all found.
// <sparse_reduce/compiled.hpp> is the umbrella header in header-only use and
// the compiled mode's front where SparseReduce::compiled is linked: there it
// declares the call, which the library holds, and parses nothing else.
#include <sparse_reduce/compiled.hpp>

#include <Eigen/SparseCore>

#include <boost/mpi.hpp>

#include <functional>
#include <iostream>

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    const int size = world.size();

    // Every rank holds 1 at index 0 and rank + 1 at index 1000 * (rank + 1).
    Eigen::SparseVector<double> mine(1 << 20), sum;
    mine.insertBack(0) = 1.0;
    mine.insertBack(1000 * (world.rank() + 1)) = world.rank() + 1.0;

    const sparse_reduce::report r = sparse_reduce::reduce(world, mine, sum, std::plus<>{}, /*root=*/0);
    if (world.rank() != 0) return 0;

    bool ok = sum.size() == mine.size() && sum.nonZeros() == size + 1 && sum.coeff(0) == size;
    for (int rank = 0; rank < size; ++rank) ok = ok && sum.coeff(1000 * (rank + 1)) == rank + 1.0;
    std::cout << "SparseReduce " << SPARSE_REDUCE_VERSION_STRING << " consumer: " << size << " ranks, " << r << ": "
              << (ok ? "OK" : "WRONG SUM") << std::endl;
    return ok ? 0 : 1;
}
