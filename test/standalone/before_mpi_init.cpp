// Collectives called before MPI_Init and after MPI_Finalize throw
// sparse_reduce::error naming the fix, instead of Open MPI aborting the
// process (issue 17). Run without mpiexec, as a singleton: exit 0 when every
// call threw the expected error and the call in between worked.

#include <sparse_reduce/collective/allreduce.hpp>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

// 1 when f throws sparse_reduce::error saying MPI is not initialised.
template <class F>
int refused(const char* what, F&& f)
{
    try {
        f();
    } catch (const sparse_reduce::error& e) {
        if (std::string(e.what()).find("MPI is not initialised") != std::string::npos) return 0;
        std::printf("%s: unexpected error: %s\n", what, e.what());
        return 1;
    }
    std::printf("%s: no error\n", what);
    return 1;
}

int all_refused(const boost::mpi::communicator& world, const char* when)
{
    std::vector<double> in(4, 1.0), out;
    sparse_reduce::index_value_vector<double> part;
    int bad = 0;
    std::printf("%s\n", when);
    bad += refused("reduce", [&] { sparse_reduce::reduce(world, in, out, std::plus<>{}, 0); });
    bad += refused("make_plan", [&] { (void)sparse_reduce::make_plan(world, 0, in.size()); });
    bad += refused("allreduce", [&] { sparse_reduce::allreduce(world, in, out, std::plus<>{}); });
    bad += refused("make_allreduce_plan", [&] { (void)sparse_reduce::make_allreduce_plan(world, in.size()); });
    bad += refused("reduce_scatter", [&] { sparse_reduce::reduce_scatter(world, in, part, std::plus<>{}); });
    return bad;
}

} // namespace

int main(int argc, char** argv)
{
    // Attached, not owned: constructing it makes no MPI call.
    const boost::mpi::communicator world(MPI_COMM_WORLD, boost::mpi::comm_attach);
    int bad = all_refused(world, "before MPI_Init");

    MPI_Init(&argc, &argv);
    MPI_Comm dup = MPI_COMM_NULL; // a communicator of the user's, never freed
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    const boost::mpi::communicator mine(dup, boost::mpi::comm_attach);
    for (const auto* c : {&world, &mine}) {
        std::vector<double> in(4, 1.0), out;
        sparse_reduce::reduce(*c, in, out, std::plus<>{}, 0); // a singleton: out == in
        if (out != in) {
            std::printf("reduce between MPI_Init and MPI_Finalize gave a wrong result\n");
            ++bad;
        }
    }
    MPI_Finalize();

    // Each communicator's state was cached by the calls above; MPI_Finalize
    // deletes the attributes holding it, which drops the cache.
    bad += all_refused(world, "after MPI_Finalize, MPI_COMM_WORLD");
    bad += all_refused(mine, "after MPI_Finalize, a duplicate of it");
    std::printf(bad ? "FAILED\n" : "ok\n");
    return bad ? 1 : 0;
}
