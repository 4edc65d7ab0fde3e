// The comparison: boost::mpi::reduce of a std::vector<double> (element-wise
// sum), with the Eigen headers the library's programs include.
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <boost/mpi.hpp>

#include <cstddef>
#include <functional>
#include <vector>

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::vector<double> in(1 << 20, 0.0), out;
    in[static_cast<std::size_t>(world.rank())] = 1.0;
    boost::mpi::reduce(world, in, out, std::plus<double>{}, 0);
    return world.rank() == 0 && out[0] != 1.0;
}
