// One reduce of an Eigen::SparseVector<double> with a tree chosen at run
// time (policy::any; here by the number of arguments).
#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <boost/mpi.hpp>

#include <functional>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    Eigen::SparseVector<double> in(1 << 20), out;
    in.insertBack(world.rank()) = 1.0;
    const sr::policy::any tree = argc > 1 ? sr::policy::any(sr::policy::two_tree{}) : sr::policy::binomial{};
    sr::reduce(world, in, out, std::plus<>{}, 0, tree);
    return world.rank() == 0 && out.nonZeros() != world.size();
}
