// Peak memory of one collective call per algorithm:
//
//   mpiexec -n P peak_memory ALGORITHM [--log2 N] [--out vector|span|eigen]
//
// ALGORITHM: reduce (binomial to rank 0), reduce_two_tree, reduce_broadcast,
// recursive_doubling, split_allgather, grouped. Every rank holds a dense
// std::vector<double> of 2^N elements (default 26), every element non-zero,
// and the output is an empty std::vector the call fills (--out vector, the
// default), or a std::span over / an Eigen::VectorXd of 2^N elements made
// before the call (--out span|eigen; allreduce only). Printed per rank:
// the resident set after MPI_Init (before the input exists), the process's
// peak (getrusage ru_maxrss) after the one call, and the peak above the
// baseline in units of the input's size (the input itself counts 1, an
// output the call fills 1 more). One algorithm per process, so each peak is
// that call's (doc/benchmarks.md, "Other benchmarks", has the command).

#include <sparse_reduce/sparse_reduce.hpp>

#include <Eigen/Core>
#include <boost/mpi.hpp>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>
#include <functional>
#include <string>
#include <vector>

namespace sr = sparse_reduce;

namespace {

// Resident set in KiB, from /proc/self/status.
long resident_kib()
{
    std::ifstream f("/proc/self/status");
    std::string key;
    while (f >> key) {
        if (key == "VmRSS:") {
            long kib = 0;
            f >> kib;
            return kib;
        }
        f.ignore(1 << 12, '\n');
    }
    return 0;
}

long peak_kib()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss; // KiB on Linux
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    if (argc < 2) {
        if (world.rank() == 0)
            std::fprintf(stderr, "usage: peak_memory reduce|reduce_two_tree|reduce_broadcast|recursive_doubling|"
                                 "split_allgather|grouped [--log2 N]\n");
        return 2;
    }
    const std::string algorithm = argv[1];
    int log2 = 26;
    for (int i = 2; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--log2") log2 = std::atoi(argv[i + 1]);
    std::string out_kind = "vector";
    for (int i = 2; i + 1 < argc; ++i)
        if (std::string(argv[i]) == "--out") out_kind = argv[i + 1];
    const std::size_t n = std::size_t{1} << log2;

    const long base = resident_kib();
    std::vector<double> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = 1.0 + static_cast<double>((i + static_cast<std::size_t>(world.rank())) % 7);
    std::vector<double> out;
    std::vector<double> span_out(out_kind == "span" ? n : 0, 0.0); // made before the call: counts 1
    Eigen::VectorXd eigen_out = Eigen::VectorXd::Zero(out_kind == "eigen" ? static_cast<Eigen::Index>(n) : 0);
    const auto all = [&](const auto& p) {
        if (out_kind == "span") sr::allreduce(world, in, std::span<double>(span_out), std::plus<>{}, p);
        else if (out_kind == "eigen") sr::allreduce(world, in, eigen_out, std::plus<>{}, p);
        else sr::allreduce(world, in, out, std::plus<>{}, p);
    };
    world.barrier();
    if (algorithm == "reduce") sr::reduce(world, in, out, std::plus<>{}, 0, sr::policy::binomial{});
    else if (algorithm == "reduce_two_tree") sr::reduce(world, in, out, std::plus<>{}, 0, sr::policy::two_tree{});
    else if (algorithm == "reduce_broadcast")
        all(sr::policy::reduce_broadcast{.tree = sr::policy::binomial{}});
    else if (algorithm == "recursive_doubling") all(sr::policy::recursive_doubling{});
    else if (algorithm == "split_allgather") all(sr::policy::split_allgather{});
    else if (algorithm == "grouped") all(sr::policy::grouped{});
    else {
        if (world.rank() == 0) std::fprintf(stderr, "peak_memory: unknown algorithm '%s'\n", algorithm.c_str());
        return 2;
    }
    const long peak = peak_kib();
    const double input_kib = static_cast<double>(n * sizeof(double)) / 1024;
    for (int r = 0; r < world.size(); ++r) {
        if (r == world.rank())
            std::printf("%s out=%s P=%d n=2^%d rank %d: baseline %ld KiB, peak %ld KiB, peak - baseline = %.2f x input\n",
                        algorithm.c_str(), out_kind.c_str(), world.size(), log2, r, base, peak,
                        static_cast<double>(peak - base) / input_kib);
        std::fflush(stdout);
        world.barrier();
    }
    return 0;
}
