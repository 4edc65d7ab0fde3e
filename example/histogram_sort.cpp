// Sorts a few million uint64 keys spread unevenly over the ranks with
// sparse_reduce::histogram_sort, checks the result, and prints each phase's
// time (the slowest rank's).
//
//   mpiexec -n 4 build/release/example/histogram_sort [total_keys] [uniform|zipf|few]
//
// Rank r starts with a share proportional to r + 1, so rebalance has work.

#include <sparse_reduce/sort/histogram_sort.hpp>

#include <boost/mpi.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    boost::mpi::environment env;
    boost::mpi::communicator world;
    const int p = world.size(), me = world.rank();
    const std::uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::uint64_t{4} << 20;
    const std::string dist = argc > 2 ? argv[2] : "uniform";

    // rank r's share: total * (r + 1) / (p (p + 1) / 2)
    const auto weight = [&](int r) { return total * static_cast<std::uint64_t>(r + 1) * 2 / (static_cast<std::uint64_t>(p) * (p + 1)); };
    std::uint64_t mine = weight(me);
    if (me == p - 1) {
        std::uint64_t given = 0;
        for (int r = 0; r < p; ++r) given += weight(r);
        mine += total - given;
    }
    std::mt19937_64 rng(12345 + static_cast<unsigned>(me));
    std::vector<std::uint64_t> keys(mine);
    std::uniform_real_distribution<double> u(0, 1);
    for (auto& k : keys) {
        if (dist == "zipf") k = static_cast<std::uint64_t>(std::pow(1 - u(rng), -1.0 / 0.5)); // heavy tail, many ties
        else if (dist == "few") k = rng() % 16;
        else k = rng();
    }
    // a checksum to compare after: sum and xor of the keys
    std::uint64_t sum = 0, x = 0;
    for (auto k : keys) sum += k, x ^= k;

    // barriers between phases: each phase's time is its own
    const auto t = sparse_reduce::histogram_sort(world, keys, std::less<>{}, {.synchronize_phases = true});

    std::uint64_t sum2 = 0, x2 = 0;
    for (auto k : keys) sum2 += k, x2 ^= k;
    bool ok = std::is_sorted(keys.begin(), keys.end());
    // global order: my first key is not below the previous rank's last (empty ranks pass theirs on)
    std::uint64_t last_before = 0;
    const std::uint64_t my_last = keys.empty() ? 0 : keys.back();
    std::vector<std::uint64_t> lasts;
    std::vector<int> nonempty;
    boost::mpi::all_gather(world, my_last, lasts);
    boost::mpi::all_gather(world, keys.empty() ? 0 : 1, nonempty);
    for (int r = 0; r < me; ++r)
        if (nonempty[static_cast<std::size_t>(r)]) last_before = std::max(last_before, lasts[static_cast<std::size_t>(r)]);
    if (!keys.empty()) ok = ok && keys.front() >= last_before;
    const std::uint64_t sums[2] = {sum, sum2};
    std::uint64_t sums_all[2];
    MPI_Allreduce(sums, sums_all, 2, MPI_UINT64_T, MPI_SUM, world);
    const std::uint64_t xs[2] = {x, x2};
    std::uint64_t xs_all[2];
    MPI_Allreduce(xs, xs_all, 2, MPI_UINT64_T, MPI_BXOR, world);
    ok = ok && sums_all[0] == sums_all[1] && xs_all[0] == xs_all[1];
    const bool all = boost::mpi::all_reduce(world, ok, std::logical_and<>());

    const double phases[6] = {t.rebalance, t.local_sort, t.find_splitters, t.move_data, t.merge, t.total};
    double slowest[6];
    MPI_Reduce(phases, slowest, 6, MPI_DOUBLE, MPI_MAX, 0, world);
    std::vector<std::size_t> counts;
    boost::mpi::gather(world, keys.size(), counts, 0);
    if (me == 0) {
        std::size_t lo = counts[0], hi = counts[0];
        for (auto c : counts) lo = std::min(lo, c), hi = std::max(hi, c);
        std::printf("histogram_sort: %llu %s keys on %d ranks, %d histogram rounds\n",
                    static_cast<unsigned long long>(total), dist.c_str(), p, t.iterations);
        std::printf("  rebalance       %8.4f s\n  local sort      %8.4f s\n  find splitters  %8.4f s\n"
                    "  move data       %8.4f s\n  merge           %8.4f s\n  total           %8.4f s\n",
                    slowest[0], slowest[1], slowest[2], slowest[3], slowest[4], slowest[5]);
        std::printf("  keys per rank: %zu .. %zu (average %.0f)\n", lo, hi, static_cast<double>(total) / p);
        std::printf("  %s\n", all ? "sorted across ranks, same keys as before: OK" : "CHECK FAILED");
    }
    return all ? 0 : 1;
}
