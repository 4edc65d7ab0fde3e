// sparse_reduce_tune: measures this machine's α, β, γ and finds Sreduce's
// thresholds, then writes the tuning file policy::automatic reads.
//
//   mpiexec -n P sparse_reduce_tune [--out FILE] [--quick] [--max-ranks P]
//                                   [--repeats N] [--burst-bytes B]
//
//   α, β          ping-pong between ranks 0 and 1 (8 B and 4 MiB messages)
//                 while the other ranks wait
//   γ_dense, γ    fitted to real runs of the executor on all P ranks, split
//                 into network, dense and sparse parts by the simulator: run
//                 the tuner on as many ranks per core as the application
//                 (2 ranks on 2 cores compute at a core's speed, 8 at a
//                 quarter of it)
//   burst_bytes   a link's token bucket where the links are shaped by one
//                 (--burst-bytes, e.g. what scripts/netbench.sh sets; 0 by
//                 default): not measured, since a ping-pong cannot tell it
//                 from the network's own speed
//   Each of the four is measured N times (5, 3 with --quick); the file gets
//   the medians, stderr the min / median / max, and a warning when the
//   machine looks busy: a 1-minute load average above the core count, or a
//   parameter whose max/min exceeds 1.5 (then tune again when it is idle).
//   thresholds    by simulation with the measured α, β, γ for P beyond the
//                 run (up to --max-ranks, 4096 by default, 256 with --quick):
//                 T_c^u  smallest C (bytes) where another tree beats the
//                        binomial tree by 10% on dense data at P = 64, after
//                        paying for automatic's allreduce (below T_c^u
//                        automatic skips it)
//                 T_p^u, T_p^z  smallest P where the binomial tree is more
//                        than 10% slower than the best on sparse data
//                        (C = 2^20, density 0.001), uniform and zipf
//                 T_s    1 - the largest density at which the binomial tree
//                        is within 10% of the best (P = 64, C = 2^20)
//                 T_s^c  largest C where sparse data (density 0.001, P = 64)
//                        stays within 10% on the binomial tree
// Progress goes to stderr, the results to stdout and the file.

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/exec/simulator.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "calibrate.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;
namespace bench = sparse_reduce::bench;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

struct cell_result {
    double binomial = 0, best_other = std::numeric_limits<double>::infinity();
    double best() const { return std::min(binomial, best_other); }
    bool binomial_ok() const { return binomial <= 1.1 * best(); }
};

// Every fixed tree on one simulated cell.
cell_result simulate_cell(int p, std::size_t c, double density, bench::placement pl, const sr::cost_model& m)
{
    const auto in = bench::simulated_inputs(p, c, density, pl);
    cell_result r;
    for (auto a : bench::fixed_algorithms) {
        std::vector<double> out;
        const double t = bench::with_policy(a, [&](auto pol) {
            return sr::simulate_reduce(std::span<const sr::index_value_vector<double>>(in), out, std::plus<>{}, 0, pol, m).time;
        });
        if (a == sr::algorithm::binomial) r.binomial = t;
        else r.best_other = std::min(r.best_other, t);
    }
    return r;
}

// The machine parameters, measured `repeats` times: min / median / max each.
struct machine_spread {
    bench::stats alpha, beta, gamma, gamma_dense;
};

machine_spread measure_machine(const boost::mpi::communicator& world, bool quick, int repeats)
{
    std::vector<double> a, b, g, gd;
    for (int i = 0; i < repeats; ++i) {
        sr::cost_model m;
        std::tie(m.alpha, m.beta) = bench::measure_network(world, quick);
        std::tie(m.gamma_dense, m.gamma) = bench::fit_gammas(world, m, quick ? 5 : 20);
        a.push_back(m.alpha);
        b.push_back(m.beta);
        g.push_back(m.gamma);
        gd.push_back(m.gamma_dense);
    }
    return {bench::summarize(a), bench::summarize(b), bench::summarize(g), bench::summarize(gd)};
}

// The 1-minute load average (Linux), or a negative number where unknown.
double load_average()
{
    std::ifstream f("/proc/loadavg");
    double l = -1;
    f >> l;
    return f ? l : -1;
}

// Prints the spread of each parameter; returns whether the machine looked busy.
bool report_spread(const machine_spread& s, double load_before, double load_after)
{
    constexpr double max_spread = 1.5;
    bool busy = false;
    const std::pair<const char*, const bench::stats*> rows[] = {
        {"alpha", &s.alpha}, {"beta", &s.beta}, {"gamma", &s.gamma}, {"gamma_dense", &s.gamma_dense}};
    std::fprintf(stderr, "           %-12s %11s %11s %11s %8s\n", "parameter", "min", "median", "max", "max/min");
    for (const auto& [name, st] : rows) {
        const double ratio = st->max / st->min;
        std::fprintf(stderr, "           %-12s %11.3g %11.3g %11.3g %8.2f%s\n", name, st->min, st->median, st->max, ratio,
                     ratio > max_spread ? "  <- spread above 1.5" : "");
        busy |= ratio > max_spread;
    }
    const double cores = std::thread::hardware_concurrency();
    const double load = std::max(load_before, load_after);
    if (cores > 0 && load > cores) {
        std::fprintf(stderr, "warning: the 1-minute load average is %.2f on %.0f cores: the machine is busy\n", load, cores);
        busy = true;
    }
    if (busy)
        std::fprintf(stderr, "warning: the measurements are not steady; the medians are written, but tune again on an "
                             "idle machine for figures you can trust\n");
    return busy;
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    std::string out_path = "sparse_reduce_tuning.txt";
    bool quick = false;
    int max_ranks = 0, repeats = 0;
    double burst_bytes = 0;
    // digits only: a bucket is whole bytes, and "abc" or "inf" would make a file automatic cannot read
    const auto whole_bytes = [](const char* s, double& v) {
        char* end = nullptr;
        errno = 0;
        const unsigned long long b = std::strtoull(s, &end, 10);
        if (*s < '0' || *s > '9' || *end || errno) return false;
        v = static_cast<double>(b);
        return true;
    };
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_path = argv[++i];
        else if (!std::strcmp(argv[i], "--quick")) quick = true;
        else if (!std::strcmp(argv[i], "--max-ranks") && i + 1 < argc) max_ranks = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc && std::atoi(argv[i + 1]) > 0) repeats = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--burst-bytes") && i + 1 < argc && whole_bytes(argv[i + 1], burst_bytes))
            ++i;
        else {
            if (world.rank() == 0)
                std::fprintf(stderr, "usage: mpiexec -n P %s [--out FILE] [--quick] [--max-ranks P] [--repeats N] "
                                     "[--burst-bytes B]\n",
                             argv[0]);
            return 2;
        }
    }
    if (world.size() < 2) {
        if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_tune: needs at least 2 ranks (mpiexec -n 2)\n");
        return 2;
    }
    if (!max_ranks) max_ranks = quick ? 256 : 4096;
    if (!repeats) repeats = quick ? 3 : 5;
    const auto start = std::chrono::steady_clock::now();
    const bool talk = world.rank() == 0;
    auto progress = [&](const char* what) {
        if (talk) std::fprintf(stderr, "[%6.1f s] %s\n", seconds_since(start), what);
    };

    sr::tuning t;
    t.source = "sparse_reduce_tune on " + std::to_string(world.size()) + " ranks" + (quick ? ", quick" : "");
    progress(("alpha, beta by ping-pong, gamma_dense, gamma fitted to P = " + std::to_string(world.size()) +
              " runs of the executor, " +
              std::to_string(repeats) + " times")
                 .c_str());
    const double load_before = load_average();
    const machine_spread spread = measure_machine(world, quick, repeats);
    t.machine.alpha = spread.alpha.median;
    t.machine.beta = spread.beta.median;
    t.machine.gamma = spread.gamma.median;
    t.machine.gamma_dense = spread.gamma_dense.median;
    t.machine.burst_bytes = burst_bytes;
    if (talk) {
        std::fprintf(stderr, "           alpha %.3g s, beta %.3g s/B (%.2f GB/s), gamma %.3g s/entry, gamma_dense %.3g s/element (medians)\n",
                     t.machine.alpha, t.machine.beta, 1e-9 / t.machine.beta, t.machine.gamma, t.machine.gamma_dense);
        report_spread(spread, load_before, load_average());
    }

    // Thresholds by simulation on rank 0 (the others wait at the broadcast).
    double th[5] = {t.limits.small_bytes, t.limits.sparse_bytes, t.limits.sparsity,
                    static_cast<double>(t.limits.ranks_uniform), static_cast<double>(t.limits.ranks_zipf)};
    if (world.rank() == 0) {
        const sr::cost_model& m = t.machine;
        const int p_mid = std::min(64, max_ranks);
        progress("T_c^u: dense vectors of growing size at P = 64");
        th[0] = 0;
        for (std::size_t c = 128; c <= (quick ? (std::size_t{1} << 16) : (std::size_t{1} << 19)); c *= 2) {
            // another tree must win by 10% plus the allreduce automatic pays to know S and D
            const auto r = simulate_cell(p_mid, c, 1.0, bench::placement::uniform, m);
            if (r.best_other + sr::detail::stats_allreduce_time(p_mid, m) < r.binomial / 1.1) {
                th[0] = static_cast<double>(c * sizeof(double));
                break;
            }
        }
        if (th[0] == 0) th[0] = static_cast<double>((quick ? (std::size_t{1} << 17) : (std::size_t{1} << 20)) * sizeof(double));
        const std::size_t c_sparse = quick ? (std::size_t{1} << 18) : (std::size_t{1} << 20);
        for (int z = 0; z < 2; ++z) {
            progress(z ? "T_p^z: zipf sparse vectors on growing P" : "T_p^u: uniform sparse vectors on growing P");
            double found = 2.0 * max_ranks;
            for (int p = 8; p <= max_ranks; p *= 2)
                if (!simulate_cell(p, c_sparse, 0.001, z ? bench::placement::zipf : bench::placement::uniform, m).binomial_ok()) {
                    found = p;
                    break;
                }
            th[3 + z] = found;
        }
        if (th[4] < th[3]) th[4] = th[3]; // zipf unions grow slower: never a lower bound than uniform
        progress("T_s: growing density at P = 64");
        th[2] = 0.9999;
        for (double d : {0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1}) {
            if (!simulate_cell(p_mid, c_sparse, d, bench::placement::uniform, m).binomial_ok()) break;
            th[2] = 1 - d;
        }
        progress("T_s^c: sparse vectors of growing size at P = 64");
        th[1] = 0;
        for (std::size_t c = std::size_t{1} << 14; c <= (quick ? (std::size_t{1} << 19) : (std::size_t{1} << 23)); c *= 2) {
            if (!simulate_cell(p_mid, c, 0.001, bench::placement::uniform, m).binomial_ok()) break;
            th[1] = static_cast<double>(2 * c * sizeof(double));
        }
    }
    MPI_Bcast(th, 5, MPI_DOUBLE, 0, world);
    t.limits.small_bytes = th[0];
    t.limits.sparse_bytes = th[1];
    t.limits.sparsity = th[2];
    t.limits.ranks_uniform = static_cast<int>(th[3]);
    t.limits.ranks_zipf = static_cast<int>(th[4]);

    if (world.rank() == 0) {
        const std::string text = sr::to_string(t);
        std::ofstream f(out_path);
        f << text;
        if (!f) {
            std::fprintf(stderr, "sparse_reduce_tune: cannot write %s\n", out_path.c_str());
            return 1;
        }
        f.close();
        // what automatic will read back
        std::ifstream back(out_path);
        const auto read = sr::parse_tuning(back, out_path);
        std::printf("%s", text.c_str());
        std::fprintf(stderr, "[%6.1f s] wrote %s (T_c^u %.0f B, T_s^c %.0f B, T_s %.4f, T_p^u %d, T_p^z %d)\n",
                     seconds_since(start), out_path.c_str(), read.limits.small_bytes, read.limits.sparse_bytes,
                     read.limits.sparsity, read.limits.ranks_uniform, read.limits.ranks_zipf);
    }
    return 0;
}
