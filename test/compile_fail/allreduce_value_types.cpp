// Must NOT compile: in holds double, out float. The CTest entry
// compile_fail.allreduce_value_types passes only when the compiler prints
// the message about the two value types.

#include <sparse_reduce/collective/allreduce.hpp>

#include <functional>
#include <vector>

int main()
{
    const boost::mpi::communicator world;
    std::vector<double> in(4, 1.0);
    std::vector<float> out;
    sparse_reduce::allreduce(world, in, out, std::plus<>{});
}
