// One automatic reduce of an Eigen::SparseVector<double>. With
// OWN_HEADERS defined: including only the collective's header and the Eigen
// adapter rather than the umbrella header; with COMPILED_FRONT (in the
// compiled mode): only the compiled mode's front.
#ifdef OWN_HEADERS
#include <sparse_reduce/collective/reduce.hpp>
#include <sparse_reduce/repr/eigen.hpp>
#elif defined(COMPILED_FRONT)
#include <sparse_reduce/compiled.hpp>

#include <Eigen/SparseCore>
#else
#include <sparse_reduce/sparse_reduce.hpp>
#endif

#include <boost/mpi.hpp>

#include <functional>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    Eigen::SparseVector<double> in(1 << 20), out;
    in.insertBack(world.rank()) = 1.0;
    sr::reduce(world, in, out, std::plus<>{}, 0);
    return world.rank() == 0 && out.nonZeros() != world.size();
}
