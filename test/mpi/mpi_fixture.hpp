#pragma once
// Shared setup of the MPI Boost.Test executables (run under mpiexec by CTest,
// see sparse_reduce_add_mpi_test in cmake/SparseReduceTesting.cmake).
//
// In exactly ONE source file of each MPI test executable:
//
//     #define BOOST_TEST_MODULE wire_exchange
//     #include "mpi_fixture.hpp"
//
// Further source files of the same executable include "mpi_fixture.hpp"
// without defining BOOST_TEST_MODULE. BOOST_TEST_DYN_LINK comes from CMake.
//
// MPI is initialised by a Boost.Test global fixture, i.e. after static
// initialisation and test registration: do not call world() from namespace-
// scope initialisers or data-driven datasets, only from test bodies/fixtures.

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/mpi/operations.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace sparse_reduce_test {

// Owns MPI for the lifetime of the test run: MPI_Init (threading level
// single) when the test module starts, MPI_Finalize when it ends.
struct mpi_global {
    mpi_global()
        : environment(boost::mpi::threading::single, /*abort_on_exception=*/true)
    {
        instance = this;
    }
    ~mpi_global() { instance = nullptr; }

    mpi_global(const mpi_global&) = delete;
    mpi_global& operator=(const mpi_global&) = delete;

    inline static mpi_global* instance = nullptr;

    boost::mpi::environment environment; // declared first: outlives world
    boost::mpi::communicator world;      // MPI_COMM_WORLD
};

#ifdef BOOST_TEST_MODULE
BOOST_TEST_GLOBAL_FIXTURE(mpi_global);
#endif

// MPI_COMM_WORLD; valid while the test module runs.
inline boost::mpi::communicator& world()
{
    if (mpi_global::instance == nullptr) {
        std::fputs("sparse_reduce_test::world() called while MPI is not initialised "
                   "(outside a test body, or BOOST_TEST_MODULE not defined before "
                   "including mpi_fixture.hpp in the main test file)\n",
                   stderr);
        std::abort();
    }
    return mpi_global::instance->world;
}

// Collective: true on every rank iff local_ok is true on every rank. Lets all
// ranks agree on an outcome (e.g. BOOST_TEST(all_ok(ok))) so that no rank
// leaves a test early while the others wait in a collective.
inline bool all_ok(bool local_ok)
{
    const int mine = local_ok ? 1 : 0;
    return boost::mpi::all_reduce(world(), mine, boost::mpi::minimum<int>()) == 1;
}

// $SPARSE_REDUCE_TUNING set, for this scope, to a tuning file of a 1 Gbit/s
// network (bytes dear: cost_model::bitmap_pays), written for this process;
// the variable as it was and no file afterwards, however the scope ends.
class scoped_network_tuning {
public:
    scoped_network_tuning() : path_("/tmp/sparse_reduce_test_network_" + std::to_string(::getpid()) + ".tuning")
    {
        if (const char* v = std::getenv("SPARSE_REDUCE_TUNING")) before_ = v, had_ = true;
        std::FILE* f = std::fopen(path_.c_str(), "w");
        if (!f || std::fputs("alpha = 1.5e-04\nbeta = 8.4e-09\n", f) < 0 || std::fclose(f) != 0)
            throw std::runtime_error("cannot write " + path_);
        ::setenv("SPARSE_REDUCE_TUNING", path_.c_str(), 1);
    }
    ~scoped_network_tuning()
    {
        if (had_) ::setenv("SPARSE_REDUCE_TUNING", before_.c_str(), 1);
        else ::unsetenv("SPARSE_REDUCE_TUNING");
        std::remove(path_.c_str());
    }
    scoped_network_tuning(const scoped_network_tuning&) = delete;
    scoped_network_tuning& operator=(const scoped_network_tuning&) = delete;

private:
    std::string path_, before_;
    bool had_ = false;
};

// The roots a rooted collective is tested at: 0, the last rank and the
// middle one, each once.
inline std::vector<int> test_roots()
{
    const int p = world().size();
    std::vector<int> r{0};
    if (p > 1) r.push_back(p - 1);
    if (p > 2) r.push_back(p / 2);
    return r;
}

} // namespace sparse_reduce_test
