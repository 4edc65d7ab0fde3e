// The windowed root's sparse output (session 19, doc/benchmarks.md, "The
// windowed root writes sparse outputs in place"): a chain with the dense wire
// (so windows, also at P = 2) on 2^21 doubles, index_value_vector in and out
// against the dense drop-in, medians of `reps` calls, the slowest rank's.
//   g++ -std=c++20 -O3 -DNDEBUG -Iinclude -isystem /usr/lib/x86_64-linux-gnu/openmpi/include \
//       -isystem /usr/lib/x86_64-linux-gnu/openmpi/include/openmpi -isystem /usr/include/eigen3 \
//       doc/results/netbench/session19/windowed_probe.cpp -o probe -lboost_mpi -lboost_serialization -lmpi_cxx -lmpi
//   mpirun -n 2 ./probe both|sparse|dense DENSITY REPS [SEGMENT_BYTES]
// Under callgrind (valgrind --tool=callgrind ./probe sparse 1 3, and 1 call
// for the difference) it gives the instructions per element of each rank.
#include <sparse_reduce/sparse_reduce.hpp>
#include <boost/mpi.hpp>
#include <mpi.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
namespace sr = sparse_reduce;
int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::size_t n = std::size_t{1} << 21;
    double density = argc > 2 ? std::atof(argv[2]) : 1.0;
    int reps = argc > 3 ? std::atoi(argv[3]) : 9;
    const char* what = argc > 1 ? argv[1] : "both";
    std::mt19937_64 rng(world.rank() + 7);
    std::vector<double> dense(n, 0.0);
    sr::index_value_vector<double> sparse(n);
    std::vector<std::uint32_t> idx; std::vector<double> val;
    for (std::size_t i = 0; i < n; ++i)
        if (density >= 1.0 || std::uniform_real_distribution<>(0, 1)(rng) < density) {
            dense[i] = 1.0 + rng() % 7; idx.push_back(i); val.push_back(dense[i]);
        }
    sparse = sr::index_value_vector<double>(n, idx, val);
    sr::policy::chain pol; pol.wire = sr::wire::dense;
    if (argc > 4) pol.segment_bytes = std::stoull(argv[4]);
    auto plan = sr::make_plan(world, 0, n, pol);
    sr::index_value_vector<double> out;
    std::vector<double> dout(n);
    auto time = [&](auto&& f) {
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
            world.barrier();
            double s = MPI_Wtime(); f();
            t.push_back(boost::mpi::all_reduce(world, MPI_Wtime() - s, boost::mpi::maximum<double>()));
        }
        std::sort(t.begin(), t.end()); return t[t.size() / 2] * 1e3;
    };
    sr::report rep;
    double ts = 0, td = 0;
    if (!std::strcmp(what, "both") || !std::strcmp(what, "sparse")) ts = time([&] { rep = plan.reduce(sparse, out, std::plus<>{}); });
    if (world.rank() == 0 && ts) std::printf("sparse %.2f ms %s bytes %zu msgs %zu\n", ts, rep.algorithm.c_str(), rep.bytes_sent, rep.messages_sent);
    if (!std::strcmp(what, "both") || !std::strcmp(what, "dense")) td = time([&] { rep = plan.reduce(std::span<const double>(dense), std::span<double>(dout), std::plus<>{}); });
    if (world.rank() == 0 && td) std::printf("dense  %.2f ms %s bytes %zu msgs %zu\n", td, rep.algorithm.c_str(), rep.bytes_sent, rep.messages_sent);
}
