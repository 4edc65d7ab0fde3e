// Runs the guide's sections: mpiexec -n 2 guide_examples [section ...]
// (no section: all). Prints "<section>: OK" per section on rank 0 and exits
// non-zero when any rank saw a wrong result.

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/environment.hpp>

#include <cstdio>
#include <cstring>
#include <functional>

#include "guide.hpp"

namespace {

struct section {
    const char* name;
    bool (*run)(const boost::mpi::communicator&);
};

const section sections[] = {
    {"outputs", guide::outputs},       {"custom_ops", guide::custom_ops},
    {"plans", guide::plans},           {"pattern_plans", guide::pattern_plans},
    {"matrix_assembly", guide::matrix_assembly}, {"report", guide::report},
    {"allreduce", guide::allreduce},   {"reduce_scatter", guide::reduce_scatter},
    {"sort", guide::sort},             {"tuning", guide::tuning}, {"floating_point", guide::floating_point},
    {"errors", guide::errors},
};

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    bool all_ok = true;
    for (const section& s : sections) {
        bool wanted = argc == 1;
        for (int i = 1; i < argc; ++i) wanted |= !std::strcmp(argv[i], s.name);
        if (!wanted) continue;
        const bool ok = boost::mpi::all_reduce(world, s.run(world), std::logical_and<>{});
        if (world.rank() == 0) std::printf("%s: %s\n", s.name, ok ? "OK" : "WRONG");
        all_ok &= ok;
    }
    return all_ok ? 0 : 1;
}
