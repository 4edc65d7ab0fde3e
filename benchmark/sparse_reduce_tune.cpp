// sparse_reduce_tune: measures this machine's α, β, γ and finds Sreduce's
// thresholds, then writes the tuning file policy::automatic reads.
//
//   mpiexec -n P sparse_reduce_tune [--out FILE] [--quick] [--max-ranks P]
//                                   [--max-memory-mb M] [--repeats N]
//                                   [--burst-bytes B] [--help]
//
//   α, β          ping-pong between ranks 0 and 1 (8 B and 4 MiB messages)
//                 while the other ranks wait
//   γ_dense, γ    fitted to real runs of the executor on all P ranks, split
//                 into network, dense and sparse parts by the simulator: run
//                 the tuner on as many ranks per core as the application
//                 (2 ranks on 2 cores compute at a core's speed, 8 at a
//                 quarter of it); rank 0 simulates those reductions too
//                 (its peak then: about 100 MB on 2 ranks, 250 MB on 8)
//   burst_bytes   a link's token bucket where the links are shaped by one
//                 (--burst-bytes, e.g. what scripts/netbench.sh sets; 0 by
//                 default): not measured, since a ping-pong cannot tell it
//                 from the network's own speed
//   Each of the four is measured N times (5, 3 with --quick); the file gets
//   the medians, stderr the min / median / max, and a warning when the
//   machine looks busy: a 1-minute load average above the core count, or a
//   parameter whose max/min exceeds 1.5 (then tune again when it is idle).
//   thresholds    by simulation on rank 0 with the measured α, β, γ, for P
//                 beyond the run (the other ranks sleep meanwhile), every
//                 fixed tree on each cell:
//                 T_c^u  smallest C (bytes) where another tree beats the
//                        binomial tree by 10% on dense data at P = 64, after
//                        paying for automatic's allreduce (below T_c^u
//                        automatic skips it); C = 2^7 .. 2^19 doubles
//                        (2^16 with --quick)
//                 T_p^u, T_p^z  smallest P where the binomial tree is more
//                        than 10% slower than the best on sparse data
//                        (C = 2^20, 2^18 with --quick; density 0.001),
//                        uniform and zipf; P = 8, 16, .. up to --max-ranks
//                        (4096, 256 with --quick) or the memory bound
//                 T_s    1 - the largest density at which the binomial tree
//                        is within 10% of the best (P = 64, C as for T_p,
//                        densities 0.0001 .. 0.1)
//                 T_s^c  the size (C * 8 bytes) just past the largest C
//                        where sparse data (density 0.001, P = 64) stays
//                        within 10% on the binomial tree: twice that C;
//                        C = 2^14 .. 2^23 (2^19 with --quick)
//                 A threshold not found within its sweep is written as the
//                 value just past it (twice the last P or C; T_s: 1 - the
//                 last density), with a comment line saying so, in the file
//                 and on stdout. For T_p that keeps automatic's rule (the
//                 binomial tree for sparse data) up to that P; from there on
//                 automatic chooses by its cost model, which includes the
//                 binomial tree.
//   memory bound  a simulation of P ranks holds every simulated rank's
//                 buffers in one process: at C = 2^20 and density 0.001 about
//                 0.9 MB per rank on uniform data and 1.2 MB on zipf (P = 512:
//                 0.45 and 0.6 GB; 1024: 0.9 and 1.25 GB; 2048: 2 and 2.6 GB).
//                 Every sweep (over P, C or the density) samples each step's
//                 peak resident memory and stops before a step it predicts
//                 above --max-memory-mb (800 by default, so that rank 0 stays
//                 under 1 GB: the T_p sweeps then end at P = 512), saying so
//                 on stderr. The prediction: above the memory at the sweep's
//                 start, a step grows as the last one did, by at least its
//                 parameter's factor (2 for P and C) and at most its square.
//                 The first step of a sweep always runs.
// Progress goes to stderr (a line per simulated step), the results to stdout
// and the file.

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/simulate.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "calibrate.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;
namespace bench = sparse_reduce::bench;

namespace {

constexpr int default_max_ranks = 4096, quick_max_ranks = 256;
constexpr int default_max_memory_mb = 800;
constexpr int default_repeats = 5, quick_repeats = 3;

void print_help(const char* argv0)
{
    std::printf(
        "usage: mpiexec -n P %s [--out FILE] [--quick] [--max-ranks P]\n"
        "           [--max-memory-mb M] [--repeats N] [--burst-bytes B] [--help]\n"
        "\n"
        "Measures this machine's cost model and finds the thresholds of automatic's\n"
        "selection (Sreduce's rules), then writes the tuning file policy::automatic\n"
        "reads ($SPARSE_REDUCE_TUNING or automatic{.tuning_file}). Needs at least 2\n"
        "ranks; ranks 0 and 1 on two nodes (Open MPI: --map-by node) measure the\n"
        "network between nodes.\n"
        "\n"
        "What it measures:\n"
        "  alpha, beta         ping-pong between ranks 0 and 1 (8 B and 4 MiB)\n"
        "  gamma, gamma_dense  fitted to real reductions on all P ranks (C = 2^20,\n"
        "                      densities 0.001 .. 1): run on as many ranks per core\n"
        "                      as the application\n"
        "  Each is measured N times (--repeats); the file gets the medians, stderr\n"
        "  the spread and a warning when the machine looks busy.\n"
        "  The thresholds, by simulating every fixed tree with those parameters:\n"
        "  T_c^u   smallest C where another tree beats binomial by 10%% on dense data\n"
        "          at P = 64 (C = 2^7 .. 2^19)\n"
        "  T_p^u, T_p^z  smallest P where binomial is more than 10%% slower than the\n"
        "          best tree on sparse data (C = 2^20, density 0.001; uniform, zipf);\n"
        "          P = 8, 16, .. up to --max-ranks or the memory budget\n"
        "  T_s     1 - the largest density where binomial stays within 10%% (P = 64)\n"
        "  T_s^c   twice the largest C where sparse data stays within 10%% on\n"
        "          binomial (P = 64, C = 2^14 .. 2^23)\n"
        "  A threshold not found within its sweep is written as the value just past\n"
        "  it, with a comment line saying so (in the file and on stdout); for T_p,\n"
        "  automatic keeps binomial for sparse data below it and chooses by its cost\n"
        "  model from there on.\n"
        "\n"
        "Options (defaults in brackets):\n"
        "  --out FILE          the tuning file to write [sparse_reduce_tuning.txt]\n"
        "  --quick             a test run: --repeats %d, --max-ranks %d, C = 2^18\n"
        "                      for T_p and T_s, smaller C sweeps [off]\n"
        "  --max-ranks P       the largest P the T_p sweeps simulate, at least 8\n"
        "                      [%d; %d with --quick]\n"
        "  --max-memory-mb M   rank 0's budget for the simulations: a sweep stops\n"
        "                      before a step it predicts above M MB of resident\n"
        "                      memory, and says so [%d]\n"
        "  --repeats N         measurements of alpha, beta, gamma, gamma_dense\n"
        "                      [%d; %d with --quick]\n"
        "  --burst-bytes B     a link's token bucket in whole bytes, written as\n"
        "                      burst_bytes (where links are shaped, e.g. by\n"
        "                      scripts/netbench.sh); not measured [0]\n"
        "  -h, --help          this text\n"
        "\n"
        "Time and memory: on 2 ranks of a 2-core machine the default run takes\n"
        "about a minute (the measurements 20-30 s) and rank 0 peaks at about\n"
        "0.6 GB; --quick takes about 20 s and 0.2 GB. A simulated rank costs about\n"
        "1 MB, so the T_p sweeps end at P = 512 on the default budget; P = 1024\n"
        "needs about 1.3 GB, 2048 about 2.6 GB, 4096 about 5 GB (raise\n"
        "--max-memory-mb, and allow a few minutes). The other ranks need little\n"
        "memory; while gamma is fitted rank 0 simulates their reductions too\n"
        "(about 100 MB on 2 ranks, 250 MB on 8).\n"
        "Progress goes to stderr, the file's text to stdout.\n",
        argv0, quick_repeats, quick_max_ranks, default_max_ranks, quick_max_ranks, default_max_memory_mb,
        default_repeats, quick_repeats);
}

double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// ---- memory ---------------------------------------------------------------

// This process's resident memory in MB (Linux: /proc/self/statm); -1 where unknown.
double resident_mb()
{
    std::ifstream f("/proc/self/statm");
    double size = 0, resident = -1;
    f >> size >> resident;
    if (!f || resident < 0) return -1;
    static const double page_mb = static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
    return resident * page_mb;
}

// This process's peak resident memory so far in MB (getrusage; Linux counts kB).
double peak_resident_mb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) / 1024;
}

// The peak resident memory of one step: the freed heap is returned to the
// system before it (glibc), and a thread samples the resident memory every
// 2 ms while it runs.
class step_memory {
public:
    bool measurable() const { return resident_mb() >= 0; }
    double now_mb() const { return resident_mb(); }
    void begin()
    {
#if defined(__GLIBC__)
        malloc_trim(0);
#endif
        peak_ = resident_mb();
        stop_ = false;
        sampler_ = std::thread([this] {
            while (!stop_.load(std::memory_order_relaxed)) {
                peak_ = std::max(peak_, resident_mb());
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            }
        });
    }
    double end()
    {
        stop_ = true;
        sampler_.join();
        return peak_ = std::max(peak_, resident_mb());
    }

private:
    std::thread sampler_;
    std::atomic<bool> stop_{false};
    double peak_ = -1; // written by the sampler until it is joined
};

// Stops a growing sweep before a step it predicts above the budget. Above
// the process's memory at the sweep's start, a step's peak grows at least
// as its parameter (P, C or the density: `scale` per step) and at most as
// its square; within those bounds it grows as over the last two steps.
class sweep_guard {
public:
    sweep_guard(step_memory& mem, double budget_mb) : mem_(mem), budget_(budget_mb)
    {
#if defined(__GLIBC__)
        malloc_trim(0);
#endif
        base_ = std::max(0.0, mem_.now_mb());
    }
    // The predicted peak (MB) of a step `scale` times the last one; -1 before any.
    double predict(double scale) const
    {
        if (last_ < 0) return -1;
        const double inc = std::max(last_ - base_, 1.0);
        double r = scale;
        if (prev_ - base_ >= 1) r = std::clamp(inc / (prev_ - base_), scale, scale * scale);
        return base_ + inc * r;
    }
    // Whether the next step (`scale` times the last, named `next`) fits; else `why` says why not.
    bool fits(double scale, const std::string& next, std::string& why) const
    {
        const std::string limit = ", above --max-memory-mb " + std::to_string(static_cast<long>(budget_));
        if (last_ > budget_) {
            why = "that step peaked at " + mb_text(last_) + limit;
            return false;
        }
        const double p = predict(scale);
        if (p > budget_) {
            why = next + " would take about " + mb_text(p) + limit;
            return false;
        }
        return true;
    }
    // Runs f() as a step and records its peak (MB); a step already run elsewhere records its known peak.
    template <class F>
    double step(F&& f)
    {
        mem_.begin();
        f();
        record(mem_.end());
        return last_;
    }
    void record(double peak_mb)
    {
        prev_ = last_;
        last_ = peak_mb;
    }
    static std::string mb_text(double mb)
    {
        char b[32];
        std::snprintf(b, sizeof b, "%.0f MB", mb);
        return b;
    }

private:
    step_memory& mem_;
    double budget_, base_ = 0, last_ = -1, prev_ = -1;
};

// ---- simulation -----------------------------------------------------------

struct cell_result {
    double binomial = 0, best_other = std::numeric_limits<double>::infinity();
    sr::algorithm other = sr::algorithm::binomial; // the best other tree
    double best() const { return std::min(binomial, best_other); }
    bool binomial_ok() const { return binomial <= 1.1 * best(); }
};

// Every fixed tree on one simulated cell. At density 1 every rank has the
// same support, so the ranks share one input object (the values do not
// change the modelled time).
cell_result simulate_cell(int p, std::size_t c, double density, bench::placement pl, const sr::cost_model& m)
{
    std::vector<sr::index_value_vector<double>> in;
    if (density >= 1 && pl == bench::placement::uniform) in.push_back(bench::sparse_input(c, density, pl, 0, p));
    else in = bench::simulated_inputs(p, c, density, pl);
    std::vector<const sr::index_value_vector<double>*> ptrs;
    for (int r = 0; r < p; ++r) ptrs.push_back(&in[in.size() == 1 ? 0 : static_cast<std::size_t>(r)]);
    cell_result r;
    for (auto a : bench::fixed_algorithms) {
        std::vector<double> out;
        const double t = bench::with_policy(a, [&](auto pol) {
            return sr::simulate_reduce(std::span<const sr::index_value_vector<double>* const>(ptrs), out,
                                       std::plus<>{}, 0, pol, m)
                .time;
        });
        if (a == sr::algorithm::binomial) r.binomial = t;
        else if (t < r.best_other) {
            r.best_other = t;
            r.other = a;
        }
    }
    return r;
}

// ---- measurement ----------------------------------------------------------

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

// ---- arguments ------------------------------------------------------------

// Digits only, at most `max` ("abc", "-1", "inf", "1e3" are usage errors).
bool whole_number(const char* s, unsigned long long max, unsigned long long& v)
{
    char* end = nullptr;
    errno = 0;
    const unsigned long long x = std::strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || x > max) return false;
    v = x;
    return true;
}

struct options {
    std::string out_path = "sparse_reduce_tuning.txt";
    bool quick = false, help = false;
    int max_ranks = 0, repeats = 0, max_memory_mb = default_max_memory_mb;
    double burst_bytes = 0;
};

// The options, or an error message.
std::string parse_options(int argc, char** argv, options& o)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        unsigned long long v = 0;
        auto number = [&](unsigned long long lo, unsigned long long hi) {
            return has_value && whole_number(argv[i + 1], hi, v) && v >= lo;
        };
        if (a == "-h" || a == "--help") o.help = true;
        else if (a == "--quick") o.quick = true;
        else if (a == "--out" && has_value) o.out_path = argv[++i];
        else if (a == "--max-ranks" && number(8, 1 << 24)) o.max_ranks = static_cast<int>(v), ++i;
        else if (a == "--max-memory-mb" && number(1, INT_MAX)) o.max_memory_mb = static_cast<int>(v), ++i;
        else if (a == "--repeats" && number(1, 10000)) o.repeats = static_cast<int>(v), ++i;
        else if (a == "--burst-bytes" && number(0, std::numeric_limits<unsigned long long>::max()))
            o.burst_bytes = static_cast<double>(v), ++i;
        else if (const char* takes = a == "--out"           ? "a file name"
                                     : a == "--max-ranks"     ? "a whole number from 8 to 16777216"
                                     : a == "--max-memory-mb" ? "a whole number of at least 1"
                                     : a == "--repeats"       ? "a whole number from 1 to 10000"
                                     : a == "--burst-bytes"   ? "a whole number of bytes"
                                                              : nullptr)
            return has_value ? a + " takes " + takes + ", not '" + argv[i + 1] + "'" : a + " needs a value";
        else return "unknown argument '" + a + "'";
    }
    return {};
}

// ---- thresholds -----------------------------------------------------------

std::string number_text(double x)
{
    std::ostringstream os;
    os.precision(6);
    os << x;
    return os.str();
}

std::string pow2_text(std::size_t c)
{
    int k = 0;
    while ((std::size_t{1} << k) < c) ++k;
    return "2^" + std::to_string(k);
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    options o;
    if (const std::string err = parse_options(argc, argv, o); !err.empty()) {
        if (world.rank() == 0)
            std::fprintf(stderr,
                         "sparse_reduce_tune: %s\nusage: mpiexec -n P %s [--out FILE] [--quick] [--max-ranks P] "
                         "[--max-memory-mb M] [--repeats N] [--burst-bytes B] [--help]\n",
                         err.c_str(), argv[0]);
        return 2;
    }
    if (o.help) {
        if (world.rank() == 0) print_help(argv[0]);
        return 0;
    }
    if (world.size() < 2) {
        if (world.rank() == 0) std::fprintf(stderr, "sparse_reduce_tune: needs at least 2 ranks (mpiexec -n 2)\n");
        return 2;
    }
    const bool quick = o.quick;
    const int max_ranks = o.max_ranks ? o.max_ranks : quick ? quick_max_ranks : default_max_ranks;
    const int repeats = o.repeats ? o.repeats : quick ? quick_repeats : default_repeats;
    const auto start = std::chrono::steady_clock::now();
    const bool talk = world.rank() == 0;
    auto progress = [&](const std::string& what) {
        if (talk) std::fprintf(stderr, "[%6.1f s] %s\n", seconds_since(start), what.c_str());
    };

    sr::tuning t;
    t.source = "sparse_reduce_tune on " + std::to_string(world.size()) + " ranks" + (quick ? ", quick" : "");
    progress("alpha, beta by ping-pong, gamma_dense, gamma fitted to P = " + std::to_string(world.size()) +
             " runs of the executor, " + std::to_string(repeats) + " times");
    const double load_before = load_average();
    const machine_spread spread = measure_machine(world, quick, repeats);
    t.machine.alpha = spread.alpha.median;
    t.machine.beta = spread.beta.median;
    t.machine.gamma = spread.gamma.median;
    t.machine.gamma_dense = spread.gamma_dense.median;
    t.machine.burst_bytes = o.burst_bytes;
    if (talk) {
        std::fprintf(stderr, "           alpha %.3g s, beta %.3g s/B (%.2f GB/s), gamma %.3g s/entry, gamma_dense %.3g s/element (medians)\n",
                     t.machine.alpha, t.machine.beta, 1e-9 / t.machine.beta, t.machine.gamma, t.machine.gamma_dense);
        report_spread(spread, load_before, load_average());
        std::fprintf(stderr, "           rank 0's peak resident memory so far: %.0f MB\n", peak_resident_mb());
    }

    // Thresholds by simulation on rank 0 (the others sleep until its broadcast).
    // th: T_c^u, T_s^c, T_s, T_p^u, T_p^z; notes: their comment lines.
    double th[5] = {t.limits.small_bytes, t.limits.sparse_bytes, t.limits.sparsity,
                    static_cast<double>(t.limits.ranks_uniform), static_cast<double>(t.limits.ranks_zipf)};
    std::string notes[5];
    if (world.rank() == 0) {
        const sr::cost_model& m = t.machine;
        const double budget = o.max_memory_mb;
        step_memory mem;
        if (!mem.measurable())
            progress("note: this system does not show a process's resident memory (/proc/self/statm): the sweeps "
                     "are not bounded by --max-memory-mb");
        const int p_mid = std::min(64, max_ranks);
        const std::string at_p = "P = " + std::to_string(p_mid);
        char line[200];
        auto step_line = [&](const char* name, const std::string& at, const cell_result& r, double peak) {
            std::snprintf(line, sizeof line, "%-6s %-13s binomial %9.3g ms, best other (%s) %9.3g ms, peak %5.0f MB",
                          name, at.c_str(), 1e3 * r.binomial, sr::to_string(r.other), 1e3 * r.best_other, peak);
            progress(line);
        };
        auto stopped = [&](const char* name, const std::string& after, const std::string& why) {
            progress(std::string(name) + ": the sweep stops after " + after + ": " + why);
            return "; the sweep stopped there at --max-memory-mb " + std::to_string(o.max_memory_mb);
        };

        // A cell simulated once (T_s and T_s^c share one with T_p^u), its step line and peak.
        std::map<std::tuple<int, std::size_t, double, int>, std::pair<cell_result, double>> cells;
        auto run = [&](sweep_guard& guard, const char* name, const std::string& at, int p, std::size_t c, double d,
                       bench::placement pl) {
            const auto key = std::make_tuple(p, c, d, static_cast<int>(pl));
            if (const auto it = cells.find(key); it != cells.end()) {
                guard.record(it->second.second);
                step_line(name, at, it->second.first, it->second.second);
                return it->second.first;
            }
            cell_result r;
            const double peak = guard.step([&] { r = simulate_cell(p, c, d, pl, m); });
            cells[key] = {r, peak};
            step_line(name, at, r, peak);
            return r;
        };
        { // T_c^u
            progress("T_c^u: dense vectors of growing size at " + at_p + " (C = 2^7 .. " +
                     (quick ? "2^16" : "2^19") + ")");
            const std::size_t c_max = quick ? (std::size_t{1} << 16) : (std::size_t{1} << 19);
            sweep_guard guard(mem, budget);
            std::size_t last = 0;
            std::string why, cut;
            for (std::size_t c = 128; c <= c_max; c *= 2) {
                if (last && !guard.fits(2, "C = " + pow2_text(c), why)) {
                    cut = stopped("T_c^u", "C = " + pow2_text(last), why);
                    break;
                }
                const auto r = run(guard, "T_c^u", "C = " + pow2_text(c), p_mid, c, 1.0, bench::placement::uniform);
                last = c;
                // another tree must win by 10% plus the allreduce automatic pays to know S and D
                const double allreduce = sr::detail::stats_allreduce_time(p_mid, m);
                if (r.best_other + allreduce < r.binomial / 1.1) {
                    th[0] = static_cast<double>(c * sizeof(double));
                    notes[0] = "T_c^u: from " + number_text(th[0]) + " B (C = " + pow2_text(c) + ") " +
                               sr::to_string(r.other) + " beats binomial by 10% plus the allreduce at " + at_p;
                    break;
                }
            }
            if (notes[0].empty()) {
                th[0] = static_cast<double>(2 * last * sizeof(double));
                notes[0] = "T_c^u: not found up to C = " + pow2_text(last) + " doubles at " + at_p +
                           " (no other tree beats binomial by 10% plus the allreduce" + cut + "); written as " +
                           number_text(th[0]) + " B";
            }
        }
        const std::size_t c_sparse = quick ? (std::size_t{1} << 18) : (std::size_t{1} << 20);
        for (int z = 0; z < 2; ++z) { // T_p^u, T_p^z
            const char* name = z ? "T_p^z" : "T_p^u";
            progress(std::string(name) + ": " + (z ? "zipf" : "uniform") + " sparse vectors (C = " +
                     pow2_text(c_sparse) + ", density 0.001) on P = 8 .. " + std::to_string(max_ranks));
            sweep_guard guard(mem, budget);
            int last = 0;
            std::string why, cut;
            for (int p = 8; p <= max_ranks; p *= 2) {
                if (last && !guard.fits(2, "P = " + std::to_string(p), why)) {
                    cut = stopped(name, "P = " + std::to_string(last), why);
                    break;
                }
                const auto r = run(guard, name, "P = " + std::to_string(p), p, c_sparse, 0.001,
                                   z ? bench::placement::zipf : bench::placement::uniform);
                last = p;
                if (!r.binomial_ok()) {
                    th[3 + z] = p;
                    notes[3 + z] = std::string(name) + ": from P = " + std::to_string(p) +
                                   " binomial is more than 10% slower than " + sr::to_string(r.other);
                    break;
                }
            }
            if (notes[3 + z].empty()) {
                th[3 + z] = 2.0 * last;
                notes[3 + z] = std::string(name) + ": not found up to P = " + std::to_string(last) +
                               " (binomial stays within 10%" + cut + "); written as " + std::to_string(2 * last);
            }
        }
        if (th[4] < th[3]) { // zipf unions grow slower: never a lower bound than uniform
            th[4] = th[3];
            notes[4] += "; raised to T_p^u, " + number_text(th[3]);
        }
        { // T_s
            progress("T_s: growing density at " + at_p + " (C = " + pow2_text(c_sparse) + ", density 0.0001 .. 0.1)");
            const double densities[] = {0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1};
            sweep_guard guard(mem, budget);
            double last = 0;
            bool lost = false;
            std::string why, cut;
            th[2] = 0.9999;
            for (double d : densities) {
                if (last > 0 && !guard.fits(d / last, "density " + number_text(d), why)) {
                    cut = stopped("T_s", "density " + number_text(last), why);
                    break;
                }
                const auto r = run(guard, "T_s", "d = " + number_text(d), p_mid, c_sparse, d, bench::placement::uniform);
                last = d;
                if (!r.binomial_ok()) {
                    lost = true;
                    break;
                }
                th[2] = 1 - d;
            }
            if (!lost)
                notes[2] = "T_s: not found up to density " + number_text(last) + " (binomial stays within 10%" + cut +
                           "); written as " + number_text(th[2]);
            else if (last == densities[0])
                notes[2] = "T_s: binomial is more than 10% slower already at density " + number_text(last) +
                           "; written as " + number_text(th[2]);
            else
                notes[2] = "T_s: binomial is within 10% up to density " + number_text(1 - th[2]) + ", not at " +
                           number_text(last);
        }
        { // T_s^c
            const std::size_t c_max = quick ? (std::size_t{1} << 19) : (std::size_t{1} << 23);
            progress("T_s^c: sparse vectors of growing size at " + at_p + " (density 0.001, C = 2^14 .. " +
                     pow2_text(c_max) + ")");
            sweep_guard guard(mem, budget);
            std::size_t last = 0;
            bool lost = false;
            std::string why, cut;
            th[1] = 0;
            for (std::size_t c = std::size_t{1} << 14; c <= c_max; c *= 2) {
                if (last && !guard.fits(2, "C = " + pow2_text(c), why)) {
                    cut = stopped("T_s^c", "C = " + pow2_text(last), why);
                    break;
                }
                const auto r = run(guard, "T_s^c", "C = " + pow2_text(c), p_mid, c, 0.001, bench::placement::uniform);
                last = c;
                if (!r.binomial_ok()) {
                    lost = true;
                    break;
                }
                th[1] = static_cast<double>(2 * c * sizeof(double));
            }
            if (!lost)
                notes[1] = "T_s^c: not found up to C = " + pow2_text(last) + " (binomial stays within 10%" + cut +
                           "); written as " + number_text(th[1]) + " B";
            else if (last == (std::size_t{1} << 14))
                notes[1] = "T_s^c: binomial is more than 10% slower already at C = " + pow2_text(last) +
                           "; written as 0";
            else
                notes[1] = "T_s^c: binomial is within 10% up to C = " + pow2_text(last / 2) + ", not at " +
                           pow2_text(last);
        }
    }
    { // the other ranks sleep while rank 0 simulates, rather than spin in a broadcast on a core it needs
        MPI_Request req;
        MPI_Ibcast(th, 5, MPI_DOUBLE, 0, world, &req);
        for (int done = 0; MPI_Test(&req, &done, MPI_STATUS_IGNORE), !done;)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    t.limits.small_bytes = th[0];
    t.limits.sparse_bytes = th[1];
    t.limits.sparsity = th[2];
    t.limits.ranks_uniform = static_cast<int>(th[3]);
    t.limits.ranks_zipf = static_cast<int>(th[4]);

    if (world.rank() == 0) {
        // The file's text with each threshold's comment line after its key.
        const char* keys[5] = {"T_c_small_bytes", "T_c_sparse_bytes", "T_s", "T_p_uniform", "T_p_zipf"};
        std::istringstream lines(sr::to_string(t));
        std::string text, l;
        while (std::getline(lines, l)) {
            text += l + "\n";
            for (int k = 0; k < 5; ++k)
                if (!notes[k].empty() && l.rfind(std::string(keys[k]) + " =", 0) == 0) text += "# " + notes[k] + "\n";
        }
        std::ofstream f(o.out_path);
        f << text;
        f.close();
        if (!f) {
            std::fprintf(stderr, "sparse_reduce_tune: cannot write %s\n", o.out_path.c_str());
            return 1;
        }
        // what automatic will read back
        std::ifstream back(o.out_path);
        const auto read = sr::parse_tuning(back, o.out_path);
        std::printf("%s", text.c_str());
        std::fprintf(stderr,
                     "[%6.1f s] wrote %s (T_c^u %.0f B, T_s^c %.0f B, T_s %.4f, T_p^u %d, T_p^z %d); rank 0's peak "
                     "resident memory: %.0f MB\n",
                     seconds_since(start), o.out_path.c_str(), read.limits.small_bytes, read.limits.sparse_bytes,
                     read.limits.sparsity, read.limits.ranks_uniform, read.limits.ranks_zipf, peak_resident_mb());
    }
    return 0;
}
