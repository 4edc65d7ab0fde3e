// Must NOT compile: std::vector<bool> packs its bools into bits, so it has no
// array of values to send. The CTest entry compile_fail.reduce_vector_bool
// passes only when the compiler prints the message that names the
// containers to use instead.

#include <sparse_reduce/collective/reduce.hpp>

#include <vector>

int main()
{
    const boost::mpi::communicator world;
    std::vector<bool> in(4, true), out;
    sparse_reduce::reduce(world, in, out, sparse_reduce::max{}, 0);
}
