// Collectives called before MPI_Init and after MPI_Finalize throw
// sparse_reduce::error naming the fix, instead of Open MPI aborting the
// process. Run without mpiexec, as a singleton: exit 0 when every
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
    // Only the duplicate is used before MPI_Finalize, which leaves its
    // attributes alone: the last call's state stays remembered, and plans
    // keep the library's own duplicate of it.
    std::vector<double> in(4, 1.0), out;
    sparse_reduce::reduce(mine, in, out, std::plus<>{}, 0); // a singleton: out == in
    auto plan = sparse_reduce::make_plan(mine, 0, in.size());
    auto all_plan = sparse_reduce::make_allreduce_plan(mine, in.size());
    plan.reduce(in, out, std::plus<>{});
    std::vector<double> all_out;
    all_plan.allreduce(in, all_out, std::plus<>{});
    if (out != in || all_out != in) {
        std::printf("reduce or allreduce between MPI_Init and MPI_Finalize gave a wrong result\n");
        ++bad;
    }
    MPI_Finalize();

    std::printf("after MPI_Finalize, plans made before it\n");
    bad += refused("reduce_plan", [&] { plan.reduce(in, out, std::plus<>{}); });
    bad += refused("allreduce_plan", [&] { all_plan.allreduce(in, all_out, std::plus<>{}); });
    bad += all_refused(mine, "after MPI_Finalize, the duplicate used last");
    bad += all_refused(mine, "after MPI_Finalize, the duplicate again");
    bad += all_refused(world, "after MPI_Finalize, MPI_COMM_WORLD");
    std::printf(bad ? "FAILED\n" : "ok\n");
    return bad ? 1 : 0;
}
