// A plan made once and one reduce through it, on Eigen::SparseVector<double>.
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
    auto plan = sr::make_plan(world, 0, 1 << 20);
    plan.reduce(in, out, std::plus<>{});
    return world.rank() == 0 && out.nonZeros() != world.size();
}
