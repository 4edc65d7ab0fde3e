// Must NOT compile: a const std::vector cannot hold the result. The CTest
// entry compile_fail.reduce_const_output passes only when the compiler prints
// the message that says so. (A const std::span of non-const values is
// written through a copy: the argument_agreement test runs one.)

#include <sparse_reduce/collective/reduce.hpp>

#include <functional>
#include <vector>

int main()
{
    const boost::mpi::communicator world;
    const std::vector<double> in(4, 1.0), out(4);
    sparse_reduce::reduce(world, in, out, std::plus<>{}, 0);
}
