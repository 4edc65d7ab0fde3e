// One automatic reduce of dense buffers (the drop-in: std::span in and out).
#include <sparse_reduce/sparse_reduce.hpp>

#include <boost/mpi.hpp>

#include <functional>
#include <span>
#include <vector>

namespace sr = sparse_reduce;

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::vector<double> in(1 << 20, 0.0), out(in.size());
    in[static_cast<std::size_t>(world.rank())] = 1.0;
    sr::reduce(world, std::span<const double>(in), std::span<double>(out), std::plus<>{}, 0);
    return world.rank() == 0 && out[0] != 1.0;
}
