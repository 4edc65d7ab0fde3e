// One allreduce of an Eigen::SparseVector<double>.
#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>

#include <functional>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    Eigen::SparseVector<double> in(1 << 20), out;
    in.insertBack(world.rank()) = 1.0;
    sr::allreduce(world, in, out, std::plus<>{});
    return out.nonZeros() != world.size();
}
