// A few entries in a huge dimension: cost must follow the entries, not the
// dimension. Every policy, one-shot sparse_reduce::reduce, then every
// allreduce policy, of index_value_vector<double, std::uint64_t> with
// --entries entries per rank in a dimension of 2^--log2dim; prints the
// median time (slowest rank) and each rank's peak resident memory before
// and after (max over ranks); the root (allreduce: every rank) checks every
// result against the serial fold (exit status 1 if not).
//
//   mpiexec -n P huge_dim_bench [--log2dim 40] [--entries 5] [--reps 20]

#include <sparse_reduce/sparse_reduce.hpp>
#include <sparse_reduce/policy_any.hpp>

#include <boost/mpi.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <sys/resource.h>

#include "timing.hpp"

namespace sr = sparse_reduce;

namespace {

long peak_rss_kb()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

sr::index_value_vector<double, std::uint64_t> entries_of(int rank, std::uint64_t dim, int count)
{
    std::mt19937_64 rng(1234567u + static_cast<unsigned>(rank));
    std::vector<std::uint64_t> idx;
    while (idx.size() < static_cast<std::size_t>(count)) {
        idx.push_back(rng() % dim);
        std::sort(idx.begin(), idx.end());
        idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    }
    std::vector<double> val;
    for (std::size_t k = 0; k < idx.size(); ++k) val.push_back(rank + 1 + 0.25 * static_cast<double>(k));
    return sr::index_value_vector<double, std::uint64_t>(dim, std::move(idx), std::move(val));
}

} // namespace

int main(int argc, char** argv)
{
    boost::mpi::environment env(argc, argv);
    boost::mpi::communicator world;
    int log2dim = 40, count = 5, reps = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::stoi(argv[++i]) : 0; };
        if (a == "--log2dim") log2dim = next();
        else if (a == "--entries") count = next();
        else if (a == "--reps") reps = next();
        else {
            if (world.rank() == 0) std::fprintf(stderr, "huge_dim_bench: unknown argument '%s'\n", a.c_str());
            return 2;
        }
    }
    const std::uint64_t dim = std::uint64_t{1} << log2dim;
    const int root = world.size() - 1;
    const auto in = entries_of(world.rank(), dim, count);
    std::map<std::uint64_t, double> want;
    for (int r = 0; r < world.size(); ++r) {
        const auto e = entries_of(r, dim, count);
        for (std::size_t k = 0; k < e.indices().size(); ++k) want[e.indices()[k]] += e.values()[k];
    }
    const std::pair<const char*, sr::policy::any> policies[] = {
        {"automatic", sr::policy::automatic{}}, {"binomial", sr::policy::binomial{}}, {"k_ary", sr::policy::k_ary{}},
        {"binary", sr::policy::binary{}},       {"chain", sr::policy::chain{}},
        {"optimal_binary", sr::policy::optimal_binary{}}, {"two_tree", sr::policy::two_tree{}}};
    using any_allreduce = std::variant<sr::policy::automatic, sr::policy::reduce_broadcast<>,
                                       sr::policy::recursive_doubling, sr::policy::split_allgather, sr::policy::grouped>;
    const std::pair<const char*, any_allreduce> allreduce_policies[] = {
        {"automatic", sr::policy::automatic{}}, {"reduce_broadcast", sr::policy::reduce_broadcast<>{}},
        {"recursive_doubling", sr::policy::recursive_doubling{}}, {"split_allgather", sr::policy::split_allgather{}},
        {"grouped", sr::policy::grouped{}}};
    int failures = 0;
    // One row: `call` timed, its result `out` checked where `checked`.
    const auto row = [&](const char* name, sr::index_value_vector<double, std::uint64_t>& out, bool checked,
                         const auto& call) {
        const long before = peak_rss_kb();
        const auto t = sr::bench::time_collective(world, 1, reps, call);
        bool ok = true;
        if (checked) {
            ok = out.indices().size() == want.size();
            std::size_t k = 0;
            for (const auto& [i, v] : want) {
                if (!ok) break;
                ok = out.indices()[k] == i && out.values()[k] == v;
                ++k;
            }
        }
        const bool all = boost::mpi::all_reduce(world, ok, std::logical_and<>{});
        const long rb = boost::mpi::all_reduce(world, before, boost::mpi::maximum<long>{});
        const long ra = boost::mpi::all_reduce(world, peak_rss_kb(), boost::mpi::maximum<long>{});
        failures += !all;
        if (world.rank() == 0)
            std::printf("%-18s %10.1f %12.1f %14.1f %s\n", name, t.median * 1e6, rb / 1024.0, ra / 1024.0,
                        all ? "ok" : "MISMATCH");
    };
    const auto title = [&](const char* what) {
        if (world.rank() == 0)
            std::printf("%s: P=%d dim=2^%d entries/rank=%d reps=%d\n%-18s %10s %12s %14s %s\n", what, world.size(),
                        log2dim, count, reps, "policy", "median_us", "rss_before_MB", "rss_after_MB", "check");
    };
    title("reduce");
    for (const auto& [name, pol] : policies) {
        sr::index_value_vector<double, std::uint64_t> out;
        row(name, out, world.rank() == root, [&] { sr::reduce(world, in, out, std::plus<>{}, root, pol); });
    }
    title("allreduce");
    for (const auto& [name, pol] : allreduce_policies) {
        sr::index_value_vector<double, std::uint64_t> out;
        row(name, out, true, [&] { std::visit([&](const auto& p) { sr::allreduce(world, in, out, std::plus<>{}, p); }, pol); });
    }
    return failures ? 1 : 0;
}
