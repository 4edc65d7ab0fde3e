// make_pattern_plan from an Eigen::SparseVector<double>'s indices and one
// plan.reduce of it (reduce_scatter over block ranges).
#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>

#include <functional>
#include <vector>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    Eigen::SparseVector<double> in(1 << 20);
    in.insertBack(world.rank()) = 1.0;
    auto plan = sr::make_pattern_plan<double>(world, 1 << 20, in);
    std::vector<double> out;
    plan.reduce(in, out, std::plus<>{});
    return out.size() > 1;
}
