// An MPI error on the library's private communicator ends the job with MPI's
// message (issue 14 row 4), whatever error handler the user's communicator
// has: boost::mpi::environment sets MPI_ERRORS_RETURN, which the duplicate
// would inherit, and an unchecked return code would let the collective go on
// with a message missing. Run at 2 ranks; the CTest passes when the
// output holds Open MPI's fatal-handler message for the send to a rank that
// does not exist. Without the handler the send returns its code and this
// program says so and exits 0, which the test's regular expression rejects.

#include <sparse_reduce/collective/reduce.hpp>

#include <boost/mpi/environment.hpp>

#include <cstdio>
#include <functional>
#include <vector>

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::vector<double> in(8, 1.0), out;
    sparse_reduce::reduce(world, in, out, std::plus<>{}, 0); // the private communicator now exists
    std::printf("reduce: %zu elements, first %g\n", out.size(), out.empty() ? 0.0 : out[0]);
    std::fflush(stdout);
    const MPI_Comm pc = sparse_reduce::detail::private_comm(MPI_Comm(world));
    const int rc = MPI_Send(in.data(), 1, MPI_DOUBLE, world.size() + 3, 0, pc); // no such rank
    std::printf("MPI_Send to a missing rank returned %d to the caller: the error went unnoticed\n", rc);
    return 0;
}
