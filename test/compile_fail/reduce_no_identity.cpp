// Must NOT compile: a plain lambda has no identity element. The
// CTest entry compile_fail.reduce_no_identity passes only when the compiler
// prints the message that names make_op.

#include <sparse_reduce/collective/reduce.hpp>

#include <vector>

int main()
{
    const boost::mpi::communicator world;
    std::vector<double> in(4, 1.0), out;
    sparse_reduce::reduce(world, in, out, [](double a, double b) { return a + b; }, 0);
}
