// The histogram sort's phases, and reduce_scatter_balanced's balance.
//
//   mpiexec -n P sort_bench [--keys N] [--reps R] [--dist uniform|zipf|few] [--header]
//       one markdown row: per-phase times of histogram_sort (median over R
//       repetitions of the slowest rank's time) for N uint64 keys in total,
//       dealt unevenly (rank r gets a share proportional to r + 1), and the
//       baseline: gather everything to rank 0 (MPI_Gatherv) and std::sort.
//   mpiexec -n P sort_bench --balance [--dim D] [--density d] [--header]
//       one markdown row per zipf exponent (1.0, 1.25, 1.5): the largest
//       rank's share of the result over the average, with block ranges
//       (reduce_scatter) and with reduce_scatter_balanced, and their times.
// The exit status is 1 when a sort is wrong or a balanced share exceeds 1.1x.
// Rows say "oversubscribed" when P exceeds the cores.

#include <sparse_reduce/collective/reduce_scatter.hpp>
#include <sparse_reduce/sort/reduce_scatter_balanced.hpp>
#include <sparse_reduce/sort/histogram_sort.hpp>

#include <boost/mpi.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;

namespace {

struct args {
    std::uint64_t keys = std::uint64_t{8} << 20;
    int reps = 5;
    std::string dist = "uniform";
    bool balance = false, header = false;
    std::size_t dim = std::size_t{1} << 22;
    double density = 0.01;
};

args parse(int argc, char** argv)
{
    args a;
    for (int i = 1; i < argc; ++i) {
        const std::string s = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "sort_bench: %s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (s == "--keys") a.keys = std::strtoull(next().c_str(), nullptr, 10);
        else if (s == "--reps") a.reps = std::max(1, std::atoi(next().c_str()));
        else if (s == "--dist") a.dist = next();
        else if (s == "--balance") a.balance = true;
        else if (s == "--header") a.header = true;
        else if (s == "--dim") a.dim = std::strtoull(next().c_str(), nullptr, 10);
        else if (s == "--density") a.density = std::atof(next().c_str());
        else {
            std::fprintf(stderr, "sort_bench: unknown argument %s\n", s.c_str());
            std::exit(2);
        }
    }
    return a;
}

std::vector<std::uint64_t> make_keys(const args& a, int me, int p, unsigned rep)
{
    const auto w = [&](int r) { return a.keys * static_cast<std::uint64_t>(r + 1) * 2 / (static_cast<std::uint64_t>(p) * (p + 1)); };
    std::uint64_t n = w(me);
    if (me == p - 1) {
        std::uint64_t given = 0;
        for (int r = 0; r < p; ++r) given += w(r);
        n += a.keys - given;
    }
    std::mt19937_64 rng(1000 * rep + static_cast<unsigned>(me));
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<std::uint64_t> v(n);
    for (auto& k : v) {
        if (a.dist == "zipf") k = static_cast<std::uint64_t>(std::pow(1 - u(rng), -2.0));
        else if (a.dist == "few") k = rng() % 16;
        else k = rng();
    }
    return v;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double slowest(const boost::mpi::communicator& c, double t)
{
    return boost::mpi::all_reduce(c, t, boost::mpi::maximum<double>());
}

const char* note(int p)
{
    return static_cast<unsigned>(p) > std::max(1u, std::thread::hardware_concurrency()) ? "oversubscribed" : "real";
}

void sort_row(const boost::mpi::communicator& world, const args& a)
{
    const int p = world.size(), me = world.rank();
    std::vector<double> rb, ls, fs, md, mg, tot, gs;
    int iterations = 0;
    bool ok = true;
    for (int rep = 0; rep < a.reps; ++rep) {
        auto keys = make_keys(a, me, p, static_cast<unsigned>(rep));
        world.barrier();
        const auto t = sr::histogram_sort(world, keys, std::less<>{}, {.synchronize_phases = true});
        rb.push_back(slowest(world, t.rebalance));
        ls.push_back(slowest(world, t.local_sort));
        fs.push_back(slowest(world, t.find_splitters));
        md.push_back(slowest(world, t.move_data));
        mg.push_back(slowest(world, t.merge));
        tot.push_back(slowest(world, t.total));
        iterations = std::max(iterations, t.iterations);
        ok = ok && t.converged && std::is_sorted(keys.begin(), keys.end());

        // baseline: everything to rank 0, std::sort there
        keys = make_keys(a, me, p, static_cast<unsigned>(rep));
        world.barrier();
        const double start = MPI_Wtime();
        const int bytes = static_cast<int>(keys.size() * sizeof(std::uint64_t));
        std::vector<int> sizes(static_cast<std::size_t>(p)), offsets(static_cast<std::size_t>(p), 0);
        MPI_Gather(&bytes, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, world);
        std::vector<std::uint64_t> all;
        if (me == 0) {
            long long total = 0;
            for (int r = 0; r < p; ++r) {
                offsets[static_cast<std::size_t>(r)] = static_cast<int>(total);
                total += sizes[static_cast<std::size_t>(r)];
            }
            all.resize(static_cast<std::size_t>(total) / sizeof(std::uint64_t));
        }
        MPI_Gatherv(keys.data(), bytes, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, world);
        std::sort(all.begin(), all.end());
        gs.push_back(slowest(world, MPI_Wtime() - start));
    }
    const bool all_ok = boost::mpi::all_reduce(world, ok, std::logical_and<>());
    if (me == 0) {
        if (a.header) {
            std::printf("| P | keys | dist | rebalance | local sort | find splitters | move data | merge | total | rounds | gather + std::sort | run |\n");
            std::printf("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        }
        std::printf("| %d | %llu | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %d | %.3f | %s%s |\n", p,
                    static_cast<unsigned long long>(a.keys), a.dist.c_str(), median(rb), median(ls), median(fs),
                    median(md), median(mg), median(tot), iterations, median(gs), note(p), all_ok ? "" : " CHECK FAILED");
    }
    if (!all_ok) std::exit(1);
}

void balance_rows(const boost::mpi::communicator& world, const args& a)
{
    const int p = world.size(), me = world.rank();
    if (me == 0 && a.header) {
        std::printf("| P | zipf s | dimension | entries per rank | union | largest share, block | largest share, balanced | block time | balanced time | run |\n");
        std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    }
    for (double s : {1.0, 1.25, 1.5}) {
        const sr::zipf_profile zipf(a.dim, s);
        const auto in = sr::bench::sparse_input(a.dim, a.density, sr::bench::placement::zipf, me, p, 7, &zipf);
        sr::index_value_vector<double> block, bal;
        std::vector<double> tb, tf;
        for (int rep = 0; rep < a.reps; ++rep) {
            world.barrier();
            double t0 = MPI_Wtime();
            sr::reduce_scatter(world, in, block, std::plus<>{});
            tb.push_back(slowest(world, MPI_Wtime() - t0));
            world.barrier();
            t0 = MPI_Wtime();
            sr::reduce_scatter_balanced(world, in, bal, std::plus<>{});
            tf.push_back(slowest(world, MPI_Wtime() - t0));
        }
        const auto bmax = boost::mpi::all_reduce(world, block.nnz(), boost::mpi::maximum<std::size_t>());
        const auto fmax = boost::mpi::all_reduce(world, bal.nnz(), boost::mpi::maximum<std::size_t>());
        const auto uni = boost::mpi::all_reduce(world, bal.nnz(), std::plus<>());
        const auto entries = boost::mpi::all_reduce(world, in.nnz(), std::plus<>());
        const double avg = static_cast<double>(uni) / p;
        const bool balanced = static_cast<double>(fmax) <= 1.1 * avg; // no rank above 1.1 x the mean
        if (me == 0)
            std::printf("| %d | %.2f | %zu | %.0f | %zu | %.2f | %.3f | %.4f | %.4f | %s%s |\n", p, s, a.dim,
                        static_cast<double>(entries) / p, uni, static_cast<double>(bmax) / avg,
                        static_cast<double>(fmax) / avg, median(tb), median(tf), note(p),
                        balanced ? "" : " ABOVE 1.1");
        if (!balanced) std::exit(1);
    }
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env;
    boost::mpi::communicator world;
    const args a = parse(argc, argv);
    if (a.balance) balance_rows(world, a);
    else sort_row(world, a);
    return 0;
}
