// An MPI error on the library's private communicator ends the job,
// whatever error handler the user's communicator has:
// boost::mpi::environment sets MPI_ERRORS_RETURN, which the duplicate would
// inherit, and an unchecked return code would let the collective go on with a
// message missing. Run at 2 ranks.
//
// Two checks, both on what this program prints, not on Open MPI's help text
// (under load orted's show_help can fail to deliver it: "ORTE_ERROR_LOG: Out of
// resource in show_help.c"):
//  - the private communicator's handler is MPI_ERRORS_ARE_FATAL (asked of MPI);
//  - a send to a rank that does not exist does not return to the caller.
// The CTest passes on the first line and fails on "went unnoticed".

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
    const MPI_Comm pc = sparse_reduce::detail::private_comm(MPI_Comm(world));
    MPI_Errhandler h{};
    MPI_Comm_get_errhandler(pc, &h);
    std::printf("rank %d: private communicator's handler is %s\n", world.rank(),
                h == MPI_ERRORS_ARE_FATAL ? "MPI_ERRORS_ARE_FATAL" : "not MPI_ERRORS_ARE_FATAL");
    std::fflush(stdout);
    world.barrier(); // both lines printed before the job ends
    const int rc = MPI_Send(in.data(), 1, MPI_DOUBLE, world.size() + 3, 0, pc); // no such rank
    std::printf("MPI_Send to a missing rank returned %d to the caller: the error went unnoticed\n", rc);
    return 0;
}
