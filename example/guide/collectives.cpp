// The guide's "Allreduce, reduce_scatter and the sort": one short example each.

#include <sparse_reduce/sparse_reduce.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include <boost/mpi/collectives.hpp>

#include "guide.hpp"

namespace sr = sparse_reduce;

namespace guide {

bool allreduce(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    //! [allreduce]
    Eigen::SparseVector<double> mine(1000), sum;
    mine.insertBack(me) = 1.0;
    sr::report r = sr::allreduce(world, mine, sum, std::plus<>{}); // sum on every rank
    // or a fixed algorithm: sr::allreduce(world, mine, sum, std::plus<>{}, sr::policy::recursive_doubling{});
    //! [allreduce]
    bool ok = sum.nonZeros() == ranks && sum.coeff(ranks - 1) == 1.0 && !r.algorithm.empty_text();
    r = sr::allreduce(world, mine, sum, std::plus<>{}, sr::policy::recursive_doubling{});
    return ok && sum.nonZeros() == ranks && sum.coeff(0) == 1.0;
}

bool reduce_scatter(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    //! [reduce_scatter]
    // Every rank adds 1 at index 10 * me and at 999; rank r receives the sum over its block of indices.
    sr::index_value_vector<int> mine(1000), part;
    mine.push_back(static_cast<std::size_t>(10 * me), 1);
    mine.push_back(999, 1);
    const std::vector<std::size_t> ranges = sr::reduce_scatter(world, mine, part, std::plus<>{});
    // part has dimension 1000 and holds only the results in [ranges[me], ranges[me + 1])
    //! [reduce_scatter]
    bool ok = ranges.size() == static_cast<std::size_t>(ranks) + 1 && part.size() == 1000;
    for (std::size_t k = 0; k < part.nnz(); ++k) {
        const std::size_t i = part.indices()[k];
        ok &= i >= ranges[me] && i < ranges[me + 1];
        ok &= part.values()[k] == (i == 999 ? ranks : 1);
    }
    std::size_t expected = 0;
    for (int r = 0; r < ranks; ++r) expected += ranges[me] <= std::size_t(10 * r) && std::size_t(10 * r) < ranges[me + 1];
    expected += ranges[me] <= 999 && 999 < ranges[me + 1];
    return ok && part.nnz() == expected;
}

bool sort(const boost::mpi::communicator& world)
{
    const int me = world.rank(), ranks = world.size();
    std::mt19937_64 rng(static_cast<std::uint64_t>(me) + 1);
    //! [sort]
    std::vector<std::uint64_t> keys(10'000);
    for (auto& k : keys) k = rng() % 1'000'000;
    sr::sort_timings t = sr::histogram_sort(world, keys); // std::less<> by default
    // keys is sorted here, and every key on rank r precedes every key on rank r + 1
    //! [sort]
    bool ok = std::is_sorted(keys.begin(), keys.end()) && t.total_items == 10'000u * static_cast<std::uint64_t>(ranks);
    // my smallest key is not below the previous rank's largest
    const std::uint64_t lo = keys.empty() ? UINT64_MAX : keys.front(), hi = keys.empty() ? 0 : keys.back();
    std::vector<std::uint64_t> los, his;
    boost::mpi::all_gather(world, lo, los);
    boost::mpi::all_gather(world, hi, his);
    std::uint64_t running = 0;
    for (int r = 0; r < ranks; ++r) {
        if (los[r] == UINT64_MAX) continue; // an empty rank
        ok &= los[r] >= running;
        running = his[r];
    }
    return ok;
}

} // namespace guide
