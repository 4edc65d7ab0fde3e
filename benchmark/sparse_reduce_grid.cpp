// sparse_reduce_grid: policy::automatic against every fixed tree, and the
// simulator against the executor.
//
//   mpiexec -n 2 sparse_reduce_grid validate [--tuning FILE] [--reps N]
//       P = 2 real runs of the executor (binomial tree, index/value in, dense
//       out) for C = 2^16 .. 2^22 and density 0.001 .. 1, each next to the
//       simulator's prediction for the same schedule and data with the
//       α, β, γ calibrated in the same run as the tuner does (or read from
//       --tuning FILE): the ratio must stay within ±30%.
//   mpiexec -n P sparse_reduce_grid real [--tuning FILE] [--reps N]
//       the grid C in {2^10, 2^14, 2^18, 2^21} x density {0.001, 0.01, 0.1, 1}
//       x D {uniform, zipf}, every fixed policy and automatic, real runs.
//   mpiexec -n 2 sparse_reduce_grid oneshot [--tuning FILE] [--reps N]
//       C in {2^10, 2^14, 2^18, 2^21} x density {0.001, 0.01, 0.1, 1},
//       uniform: the one-shot reduce of an Eigen::SparseVector<double>,
//       every tree under every wire format and automatic, timed in
//       interleaved rounds (a new random order each round).
//   sparse_reduce_grid simulate [--tuning FILE] [--ranks 64,1024,4096] [--min-dim C] [--max-dim C]
//       the same grid in the simulator, on an InfiniBand-class network
//       (1.5 us, 12 GB/s) and on 10 GbE (20 us, 1.2 GB/s) with this
//       machine's γ. Inputs: at most 4 GiB of them; beyond, rank r reads the
//       input of rank r mod M (M distinct inputs; said in the output).
// Output: a markdown table on stdout, progress on stderr.

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/simulate.hpp>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>

#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "calibrate.hpp"
#include "timing.hpp"
#include "workload.hpp"

namespace sr = sparse_reduce;
namespace bench = sparse_reduce::bench;

namespace {

const std::size_t grid_dims[] = {std::size_t{1} << 10, std::size_t{1} << 14, std::size_t{1} << 18, std::size_t{1} << 21};
const double grid_densities[] = {0.001, 0.01, 0.1, 1.0};

std::string short_choice(const std::string& algorithm)
{
    // "two_tree(wire=adaptive, segment=131072) [automatic: ...]" -> "two_tree/128K"
    const auto paren = algorithm.find('(');
    std::string name = algorithm.substr(0, paren);
    if (const auto colon = name.find(": "); colon != std::string::npos) name = name.substr(colon + 2);
    if (const auto space = name.find(' '); space != std::string::npos) name = name.substr(0, space);
    const auto seg = algorithm.find("segment=");
    if (seg != std::string::npos) name += "/" + std::to_string(std::stoul(algorithm.substr(seg + 8)) / 1024) + "K";
    return name;
}

struct row {
    std::string cell;
    double best = std::numeric_limits<double>::infinity();
    std::string best_name;
    double automatic = 0;
    std::string choice;
};

void print_rows(const std::vector<row>& rows, const char* title)
{
    std::printf("\n### %s\n\n| cell | best fixed | time | automatic picks | time | ratio | within 10%% |\n|---|---|---|---|---|---|---|\n",
                title);
    int bad = 0;
    for (const auto& r : rows) {
        const double ratio = r.automatic / r.best;
        bad += ratio > 1.10;
        std::printf("| %s | %s | %.1f us | %s | %.1f us | %.2f | %s |\n", r.cell.c_str(), r.best_name.c_str(), r.best * 1e6,
                    r.choice.c_str(), r.automatic * 1e6, ratio, ratio <= 1.10 ? "yes" : "**no**");
    }
    std::printf("\n%d of %zu cells within 10%%.\n", static_cast<int>(rows.size()) - bad, rows.size());
    std::fflush(stdout);
}

std::string cell_name(std::size_t c, double d, bench::placement pl)
{
    std::ostringstream os;
    os << "C=2^" << __builtin_ctzll(c) << " d=" << d << " " << bench::to_string(pl);
    return os.str();
}

// ---- real runs ----

void real_grid(const boost::mpi::communicator& world, const sr::tuning& tune, int reps)
{
    std::vector<row> rows;
    const int p = world.size(), me = world.rank();
    for (auto pl : {bench::placement::uniform, bench::placement::zipf})
        for (std::size_t c : grid_dims)
            for (double d : grid_densities) {
                if (pl == bench::placement::zipf && d >= 1) continue; // the same cell as uniform
                const auto in = bench::sparse_input(c, d, pl, me, p);
                std::vector<double> out;
                row r;
                r.cell = cell_name(c, d, pl);
                // Every fixed policy and automatic, one call each in turn per
                // repetition, so the machine's drift hits them alike.
                std::vector<std::function<sr::report()>> calls;
                auto plans = std::apply(
                    [&](const auto&... fixed) {
                        return std::make_tuple(sr::make_plan(world, 0, c, bench::fixed_policy(fixed))...,
                                               sr::make_plan(world, 0, c, sr::policy::automatic{.tuned = tune}));
                    },
                    sr::detail::tree_table);
                std::apply([&](auto&... plan) { (calls.push_back([&] { return plan.reduce(in, out, std::plus<>{}); }), ...); },
                           plans);
                std::vector<std::vector<double>> times(calls.size());
                for (int rep = -2; rep < reps; ++rep)
                    for (std::size_t i = 0; i < calls.size(); ++i) {
                        const double t = bench::time_collective(world, 0, 1, [&] { calls[i](); }).median;
                        if (rep >= 0) times[i].push_back(t);
                    }
                for (std::size_t i = 0; i + 1 < calls.size(); ++i) {
                    const double t = bench::summarize(times[i]).median;
                    if (t < r.best) {
                        r.best = t;
                        r.best_name = sr::to_string(bench::fixed_algorithms[i]);
                    }
                }
                r.choice = short_choice(calls.back()().algorithm);
                r.automatic = bench::summarize(times.back()).median;
                if (me == 0) std::fprintf(stderr, "%s: best %s %.1f us, automatic %s %.1f us\n", r.cell.c_str(),
                                          r.best_name.c_str(), r.best * 1e6, r.choice.c_str(), r.automatic * 1e6);
                rows.push_back(r);
            }
    if (me == 0) print_rows(rows, ("real runs, P = " + std::to_string(p)).c_str());
}

// ---- one-shot calls on Eigen vectors, as a new user writes them ----

// The fixed policies: every tree of the table under every wire format.
void oneshot_grid(const boost::mpi::communicator& world, const sr::tuning& tune, int reps)
{
    const int p = world.size(), me = world.rank();
    const sr::wire::format wires[] = {sr::wire::adaptive, sr::wire::dense, sr::wire::index_value, sr::wire::rle};
    std::vector<row> rows;
    for (std::size_t c : grid_dims)
        for (double d : grid_densities) {
            const auto iv = bench::sparse_input(c, d, bench::placement::uniform, me, p);
            Eigen::SparseVector<double> in(static_cast<Eigen::Index>(c));
            in.reserve(static_cast<Eigen::Index>(iv.nnz()));
            for (std::size_t k = 0; k < iv.nnz(); ++k)
                in.insertBack(static_cast<Eigen::Index>(iv.indices()[k])) = iv.values()[k];
            struct call {
                std::string name;
                std::function<sr::report()> run;
                Eigen::SparseVector<double> out; // a user's loop reuses it
            };
            std::vector<std::unique_ptr<call>> calls;
            auto add = [&](std::string name, auto pol) {
                auto x = std::make_unique<call>();
                x->name = std::move(name);
                x->run = [&world, &in, pol, out = &x->out] { return sr::reduce(world, in, *out, std::plus<>{}, 0, pol); };
                calls.push_back(std::move(x));
            };
            sr::detail::for_each_tree_row([&](const auto& tree_row) {
                for (auto w : wires) {
                    auto pol = bench::fixed_policy(tree_row);
                    pol.wire = w;
                    add(sr::to_string(tree_row.id) + std::string("/") + sr::wire::to_string(w), pol);
                }
            });
            add("automatic", sr::policy::automatic{.tuned = tune});
            std::vector<std::function<void()>> fs;
            for (const auto& x : calls) fs.push_back([x = x.get()] { x->run(); });
            // three untimed calls before each timed one: a call after one
            // that moved 16 MB reads its own data back into the cache first
            const auto ts = bench::time_interleaved(world, 2, reps, fs, 3);
            row r;
            r.cell = cell_name(c, d, bench::placement::uniform);
            for (std::size_t i = 0; i + 1 < calls.size(); ++i)
                if (ts[i].median < r.best) {
                    r.best = ts[i].median;
                    r.best_name = calls[i]->name;
                }
            r.automatic = ts.back().median;
            const std::string picked = calls.back()->run().algorithm;
            r.choice = short_choice(picked);
            if (const auto w = picked.find("wire="); w != std::string::npos)
                r.choice += "/" + picked.substr(w + 5, picked.find_first_of(",)", w) - w - 5);
            if (me == 0) std::fprintf(stderr, "%s: best %s %.1f us, automatic %s %.1f us\n", r.cell.c_str(),
                                      r.best_name.c_str(), r.best * 1e6, r.choice.c_str(), r.automatic * 1e6);
            rows.push_back(r);
        }
    if (me == 0) print_rows(rows, ("one-shot reduce of Eigen::SparseVector<double>, P = " + std::to_string(p)).c_str());
}

// ---- the simulator against the executor at P = 2 ----

void validate(const boost::mpi::communicator& world, sr::tuning tune, int reps, bool calibrate)
{
    if (world.size() != 2) {
        if (world.rank() == 0) std::fprintf(stderr, "validate runs on exactly 2 ranks\n");
        return;
    }
    if (calibrate) { // in this run, as the tuner does: the machine's speed drifts between runs
        std::tie(tune.machine.alpha, tune.machine.beta) = bench::measure_network(world, false);
        std::tie(tune.machine.gamma_dense, tune.machine.gamma) = bench::fit_gammas(world, tune.machine, 20);
        if (world.rank() == 0)
            std::printf("calibrated in this run: alpha %.3g s, beta %.3g s/B, gamma %.3g s, gamma_dense %.3g s\n",
                        tune.machine.alpha, tune.machine.beta, tune.machine.gamma, tune.machine.gamma_dense);
    }
    if (world.rank() == 0)
        std::printf("\n### simulator against executor, P = 2 (binomial tree, index/value in, dense out)\n\n"
                    "| C | density | measured | simulated | simulated / measured |\n|---|---|---|---|---|\n");
    int outside = 0, cells = 0;
    for (std::size_t c = std::size_t{1} << 16; c <= (std::size_t{1} << 22); c <<= 2)
        for (double d : {0.001, 0.01, 0.1, 1.0}) {
            const bench::p_case run(world, c, d, reps);
            if (world.rank() == 0) {
                const double measured = run.measured, simulated = run.simulated(tune.machine);
                const double ratio = simulated / measured;
                ++cells;
                outside += ratio < 0.7 || ratio > 1.3;
                std::printf("| 2^%d | %g | %.1f us | %.1f us | %.2f%s |\n", __builtin_ctzll(c), d, measured * 1e6,
                            simulated * 1e6, ratio, ratio < 0.7 || ratio > 1.3 ? " (outside ±30%)" : "");
                std::fflush(stdout);
            }
        }
    if (world.rank() == 0) std::printf("\n%d of %d cells within ±30%%.\n", cells - outside, cells);
}

// ---- the simulated grid ----

void simulated_grid(const sr::tuning& tune, const std::vector<int>& ranks, std::size_t min_dim, std::size_t max_dim)
{
    const std::pair<const char*, sr::cost_model> networks[] = {
        {"InfiniBand-class (1.5 us, 12 GB/s)", tune.machine.infiniband()},
        {"10 GbE (20 us, 1.2 GB/s)", tune.machine.ethernet_10g()}};
    const double budget = 4.0 * (1u << 30);
    for (int p : ranks)
        for (const auto& [net_name, model] : networks) {
            sr::tuning t = tune;
            t.machine = model;
            std::vector<row> rows;
            for (auto pl : {bench::placement::uniform, bench::placement::zipf})
                for (std::size_t c : grid_dims)
                    for (double d : grid_densities) {
                        if ((pl == bench::placement::zipf && d >= 1) || c < min_dim || c > max_dim) continue;
                        const double per_input = 12.0 * d * static_cast<double>(c) + 64;
                        const int distinct = static_cast<int>(std::min<double>(p, std::max(1.0, budget / per_input)));
                        const auto pool = bench::simulated_inputs(distinct, c, d, pl);
                        std::vector<const sr::index_value_vector<double>*> which; // ranks beyond M share
                        for (int r = 0; r < p; ++r) which.push_back(&pool[static_cast<std::size_t>(r % distinct)]);
                        const std::span<const sr::index_value_vector<double>* const> all(which);
                        row r;
                        r.cell = cell_name(c, d, pl) + (distinct < p ? " (" + std::to_string(distinct) + " distinct inputs)" : "");
                        for (auto a : bench::fixed_algorithms) {
                            std::vector<double> out;
                            const double time = bench::with_policy(
                                a, [&](auto pol) { return sr::simulate_reduce(all, out, std::plus<>{}, 0, pol, model).time; });
                            if (time < r.best) {
                                r.best = time;
                                r.best_name = sr::to_string(a);
                            }
                        }
                        std::vector<double> out;
                        const auto res = sr::simulate_reduce(all, out, std::plus<>{}, 0, sr::policy::automatic{.tuned = t}, model);
                        r.automatic = res.time;
                        r.choice = short_choice(res.algorithm);
                        std::fprintf(stderr, "P=%d %s %s: best %s %.1f us, automatic %s %.1f us\n", p, net_name,
                                     r.cell.c_str(), r.best_name.c_str(), r.best * 1e6, r.choice.c_str(), r.automatic * 1e6);
                        rows.push_back(r);
                    }
            print_rows(rows, ("simulated, P = " + std::to_string(p) + ", " + net_name).c_str());
        }
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    if (argc < 2) {
        if (world.rank() == 0)
            std::fprintf(stderr, "usage: %s validate|real|oneshot|simulate [--tuning FILE] [--reps N] [--ranks P,P,...] [--min-dim C] [--max-dim C]\n",
                         argv[0]);
        return 2;
    }
    const std::string mode = argv[1];
    std::string tuning_file;
    int reps = 20;
    std::vector<int> ranks{64, 1024, 4096};
    std::size_t min_dim = 0, max_dim = std::size_t{1} << 21;
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--tuning") && i + 1 < argc) tuning_file = argv[++i];
        else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--max-dim") && i + 1 < argc) max_dim = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--min-dim") && i + 1 < argc) min_dim = std::strtoull(argv[++i], nullptr, 10);
        else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) {
            ranks = bench::parse_numbers<int>(argv[++i]);
        }
    }
    try {
        const sr::tuning tune = sr::current_tuning(tuning_file);
        if (world.rank() == 0) std::printf("tuning: %s\n", tune.source.c_str());
        if (mode == "validate") validate(world, tune, reps, tuning_file.empty());
        else if (mode == "real") real_grid(world, tune, reps);
        else if (mode == "oneshot") oneshot_grid(world, tune, reps);
        else if (mode == "simulate") {
            if (world.rank() == 0) simulated_grid(tune, ranks, min_dim, max_dim);
        } else {
            if (world.rank() == 0) std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
            return 2;
        }
    } catch (const sr::error& e) {
        std::fprintf(stderr, "sparse_reduce_grid: %s\n", e.what());
        return 1;
    }
    return 0;
}
