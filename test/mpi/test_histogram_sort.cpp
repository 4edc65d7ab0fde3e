// The distributed histogram sort and its phases at 1, 2, 3, 4, 5 and 8 ranks:
// rebalance's counts and order, find_splitters' bins (more bins than ranks,
// duplicate-heavy keys, exact tolerance 0), move_data, and histogram_sort on
// every input shape, with integer, floating and struct keys. The output is
// checked against the input gathered to rank 0 (same multiset), for global
// order across ranks, and for balance. Bad input throws on every rank.

#define BOOST_TEST_MODULE histogram_sort
#include "mpi_fixture.hpp"
#include "fault_injection.hpp"

#include <sparse_reduce/sort/histogram_sort.hpp>

#include <algorithm>
#include <cmath>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

// Allocation failure on one rank (failing_allocations).
#include "../support/failing_new.hpp"

namespace sr = sparse_reduce;
using namespace sparse_reduce_test;

namespace {

// A struct key ordered by major descending, then minor ascending.
struct point {
    std::int32_t major = 0;
    std::uint32_t minor = 0;
};
struct by_major_desc {
    bool operator()(const point& a, const point& b) const
    {
        return a.major != b.major ? a.major > b.major : a.minor < b.minor;
    }
};
// Its order as a 64-bit ordinal, interpolated there.
struct point_interpolation {
    static std::uint64_t ordinal(const point& p)
    {
        const auto hi = static_cast<std::uint64_t>(std::int64_t{INT32_MAX} - p.major); // descending major
        return hi << 32 | p.minor;
    }
    point operator()(const point& lo, const point& hi, double f) const
    {
        const std::uint64_t o = sr::interpolate{}(ordinal(lo), ordinal(hi), f);
        return {static_cast<std::int32_t>(std::int64_t{INT32_MAX} - static_cast<std::int64_t>(o >> 32)),
                static_cast<std::uint32_t>(o)};
    }
};

// Every rank's vector on rank 0 (raw bytes), in rank order.
template <class K>
std::vector<K> gather_all(const std::vector<K>& mine)
{
    auto& comm = world();
    const int bytes = static_cast<int>(mine.size() * sizeof(K));
    std::vector<int> sizes(static_cast<std::size_t>(comm.size())), offsets(sizes.size(), 0);
    MPI_Gather(&bytes, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_Comm(comm));
    int total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
        offsets[r] = total;
        total += sizes[r];
    }
    std::vector<K> all(comm.rank() == 0 ? static_cast<std::size_t>(total) / sizeof(K) : 0);
    MPI_Gatherv(mine.data(), bytes, MPI_BYTE, all.data(), sizes.data(), offsets.data(), MPI_BYTE, 0, MPI_Comm(comm));
    return all;
}

template <class K, class Compare>
bool same_bits_sorted(std::vector<K> a, std::vector<K> b, const Compare& comp)
{
    if (a.size() != b.size()) return false;
    // sort both fully by bytes as a tie-break so equal-by-comp keys line up
    auto full = [&](const K& x, const K& y) {
        if (comp(x, y)) return true;
        if (comp(y, x)) return false;
        return std::memcmp(&x, &y, sizeof(K)) < 0;
    };
    std::sort(a.begin(), a.end(), full);
    std::sort(b.begin(), b.end(), full);
    return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(K)) == 0;
}

// Sorted, a permutation of the input, ordered across ranks, and balanced
// within the tolerance (agreed on by all ranks).
template <class K, class Compare = std::less<>, class Interp = sr::interpolate>
bool sorts_correctly(std::vector<K> data, const std::string& what, const Compare& comp = {}, const Interp& interp = {},
                     double tolerance = 0.01)
{
    auto& comm = world();
    const auto input = gather_all(data);
    sr::histogram_sort_options opt;
    opt.tolerance = tolerance;
    const auto t = sr::histogram_sort(comm, data, comp, opt, interp);
    bool ok = std::is_sorted(data.begin(), data.end(), comp);
    BOOST_TEST(ok, what << ": rank " << comm.rank() << " not sorted");
    BOOST_TEST(t.converged, what);
    const auto output = gather_all(data);
    // rank boundaries: every rank's last item precedes the next non-empty rank's first
    std::vector<std::uint64_t> counts;
    boost::mpi::gather(comm, static_cast<std::uint64_t>(data.size()), counts, 0);
    if (comm.rank() == 0) {
        const bool perm = same_bits_sorted(input, output, comp);
        BOOST_TEST(perm, what << ": output is not a permutation of the input");
        const bool global = std::is_sorted(output.begin(), output.end(), comp);
        BOOST_TEST(global, what << ": not sorted across ranks");
        const double avg = static_cast<double>(output.size()) / comm.size();
        bool balanced = true;
        for (auto c : counts) balanced = balanced && std::abs(static_cast<double>(c) - avg) <= tolerance * avg + 1;
        BOOST_TEST(balanced, what << ": a rank is off the average " << avg << " by more than " << tolerance);
        ok = ok && perm && global && balanced && t.converged;
    }
    return all_ok(ok && t.converged);
}

// operator< on ints that throws once on rank `victim`, at its call number
// `*left` there (counted down), else counts the calls in `*calls`.
struct less_throwing_on {
    int victim;
    std::shared_ptr<long> left, calls;
    bool operator()(int a, int b) const
    {
        if (world().rank() == victim) {
            ++*calls;
            if ((*left)-- == 0) throw std::runtime_error("comparator failed");
        }
        return a < b;
    }
};

std::mt19937_64 rng_for(unsigned salt) { return std::mt19937_64(salt * 1000003u + static_cast<unsigned>(world().rank())); }

} // namespace

BOOST_AUTO_TEST_CASE(rebalance_counts_and_order)
{
    auto& comm = world();
    const int p = comm.size(), me = comm.rank();
    // sizes per rank for several shapes; items are their global sequence numbers
    auto shapes = std::vector<std::vector<std::size_t>>{};
    std::vector<std::size_t> s(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = r == 0 ? 1000 : 0; // all on rank 0
    shapes.push_back(s);
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = r == p - 1 ? 997 : 0; // all on the last rank
    shapes.push_back(s);
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = static_cast<std::size_t>((r * 7919) % 301); // ragged
    shapes.push_back(s);
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = r % 2 ? 0 : 50u + static_cast<std::size_t>(r); // gaps
    shapes.push_back(s);
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = 0; // empty
    shapes.push_back(s);
    for (int r = 0; r < p; ++r) s[static_cast<std::size_t>(r)] = r == p / 2 ? 3 : 0; // fewer items than ranks
    shapes.push_back(s);
    for (const auto& sizes : shapes) {
        std::uint64_t before = 0, total = 0;
        for (int r = 0; r < p; ++r) {
            if (r < me) before += sizes[static_cast<std::size_t>(r)];
            total += sizes[static_cast<std::size_t>(r)];
        }
        std::vector<std::uint64_t> data(sizes[static_cast<std::size_t>(me)]);
        for (std::size_t k = 0; k < data.size(); ++k) data[k] = before + k;
        const auto res = sr::rebalance(comm, data);
        const std::uint64_t first = me * (total / p) + std::min<std::uint64_t>(me, total % p);
        const std::uint64_t want = total / p + (static_cast<std::uint64_t>(me) < total % p ? 1 : 0);
        bool ok = data.size() == want && res.total == total && res.first == first;
        for (std::size_t k = 0; ok && k < data.size(); ++k) ok = data[k] == first + k;
        BOOST_TEST(ok, "rank " << me << " has " << data.size() << " items, wants " << want);
        BOOST_TEST(all_ok(ok));
    }
}

BOOST_AUTO_TEST_CASE(integer_keys_every_shape)
{
    auto& comm = world();
    const int p = comm.size(), me = comm.rank();
    auto rng = rng_for(1);
    const std::size_t n = 3000;
    std::vector<std::uint64_t> v(n);
    for (auto& x : v) x = rng();
    BOOST_TEST(sorts_correctly(v, "uniform uint64"));
    for (auto& x : v) x = 42;
    BOOST_TEST(sorts_correctly(v, "all keys equal"));
    BOOST_TEST(sorts_correctly(v, "all keys equal, tolerance 0", std::less<>{}, sr::interpolate{}, 0.0));
    for (auto& x : v) x = rng() % 3;
    BOOST_TEST(sorts_correctly(v, "three distinct values"));
    for (auto& x : v) x = rng() % 2 ? 0 : ~std::uint64_t{0};
    BOOST_TEST(sorts_correctly(v, "two extreme values"));
    for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<std::uint64_t>(me) * n + k;
    BOOST_TEST(sorts_correctly(v, "already sorted"));
    for (std::size_t k = 0; k < n; ++k) v[k] = static_cast<std::uint64_t>(p - me) * n - k;
    BOOST_TEST(sorts_correctly(v, "reverse sorted"));
    std::vector<std::uint64_t> one(me == 0 ? n * static_cast<std::size_t>(p) : 0);
    for (auto& x : one) x = rng() >> 40;
    BOOST_TEST(sorts_correctly(one, "one rank holds everything"));
    std::vector<std::uint64_t> gaps(me % 2 ? 0 : n);
    for (auto& x : gaps) x = rng() % 1000;
    BOOST_TEST(sorts_correctly(gaps, "every other rank empty"));
    BOOST_TEST(sorts_correctly(std::vector<std::uint64_t>{}, "no items at all"));
    std::vector<std::uint64_t> few(me == p - 1 ? 2 : 0, 7);
    BOOST_TEST(sorts_correctly(few, "fewer items than ranks"));
    std::vector<std::int32_t> s(n);
    for (auto& x : s) x = static_cast<std::int32_t>(rng());
    BOOST_TEST(sorts_correctly(s, "int32 with negatives"));
    std::vector<std::int32_t> zipfish(n);
    for (auto& x : zipfish) x = static_cast<std::int32_t>(1000.0 / (1 + static_cast<double>(rng() % 1000))); // heavy ties
    BOOST_TEST(sorts_correctly(zipfish, "skewed with heavy ties"));
}

BOOST_AUTO_TEST_CASE(floating_keys)
{
    auto rng = rng_for(2);
    std::vector<double> v(2500);
    std::normal_distribution<double> g(0, 1e6);
    for (auto& x : v) x = g(rng);
    BOOST_TEST(sorts_correctly(v, "normal doubles"));
    std::lognormal_distribution<double> ln(0, 8); // spans many magnitudes
    for (auto& x : v) x = ln(rng) * (rng() % 2 ? 1 : -1);
    BOOST_TEST(sorts_correctly(v, "lognormal doubles, both signs"));
    std::vector<float> f(2500);
    for (auto& x : f) x = static_cast<float>(rng() % 5) - 2.0f;
    BOOST_TEST(sorts_correctly(f, "floats with five values"));
    for (auto& x : f) x = (rng() % 2 ? 1.0f : -1.0f) * std::numeric_limits<float>::max();
    BOOST_TEST(sorts_correctly(f, "floats at both ends of the range"));
}

BOOST_AUTO_TEST_CASE(struct_key_with_custom_comparator)
{
    auto rng = rng_for(3);
    std::vector<point> v(2000);
    for (auto& x : v) x = {static_cast<std::int32_t>(rng() % 7) - 3, static_cast<std::uint32_t>(rng())};
    BOOST_TEST(sorts_correctly(v, "struct keys", by_major_desc{}, point_interpolation{}));
    for (auto& x : v) x = {5, static_cast<std::uint32_t>(rng() % 2)};
    BOOST_TEST(sorts_correctly(v, "struct keys, two values", by_major_desc{}, point_interpolation{}));
}

BOOST_AUTO_TEST_CASE(more_bins_than_ranks_and_move_data)
{
    auto& comm = world();
    const int p = comm.size();
    auto rng = rng_for(4);
    for (int bins : {3 * p + 1, 2 * p, std::max(1, p - 1), 1}) {
        std::vector<std::uint32_t> v(1500);
        for (auto& x : v) x = static_cast<std::uint32_t>(rng() % 200); // many ties per bin boundary
        std::sort(v.begin(), v.end());
        const auto sp = sr::find_splitters(comm, v, bins, 0.02);
        std::uint64_t sum = 0;
        bool ok = sp.converged && sp.bin_counts.size() == static_cast<std::size_t>(bins);
        const double avg = static_cast<double>(sp.total) / bins;
        for (auto c : sp.bin_counts) {
            sum += c;
            ok = ok && std::abs(static_cast<double>(c) - avg) <= 0.02 * avg + 1;
        }
        ok = ok && sum == sp.total;
        BOOST_TEST(ok, "bins " << bins);
        // each rank receives exactly its bins
        sr::move_data(comm, v, sp.splitters);
        std::uint64_t mine = 0;
        for (int b = 0; b < bins; ++b)
            if (static_cast<long>(b) * p / bins == comm.rank()) mine += sp.bin_counts[static_cast<std::size_t>(b)];
        BOOST_TEST(v.size() == mine, "bins " << bins);
        BOOST_TEST(all_ok(ok && v.size() == mine));
    }
}

BOOST_AUTO_TEST_CASE(interpolation_contract)
{
    const sr::interpolate f;
    BOOST_TEST(f(std::uint8_t{3}, std::uint8_t{4}, 0.5) == 3);
    BOOST_TEST(f(std::uint8_t{3}, std::uint8_t{5}, 0.0) == 4); // strictly inside when there is room
    BOOST_TEST(f(std::int64_t{-5}, std::int64_t{5}, 1.0) == 4);
    BOOST_TEST(f(INT64_MIN, INT64_MAX, 0.5) > INT64_MIN);
    const double d = f(1.0, std::nextafter(1.0, 2.0), 0.5);
    BOOST_TEST(d == 1.0);
    const double m = f(1e-300, 1e300, sr::bisect); // bisects the bit image: about 1
    BOOST_TEST((m > 1e-10 && m < 1e10));
    BOOST_TEST(f(1e-300, 1e300, 0.5) > 1e299); // a plain fraction stays linear
    const std::uint64_t g = f(std::uint64_t{0}, std::uint64_t{1} << 62, sr::bisect); // heavy tail: geometric
    BOOST_TEST((g > (1u << 30) && g < (std::uint64_t{1} << 32)));
    BOOST_TEST(f(std::uint64_t{100}, std::uint64_t{300}, sr::bisect) == 200u);
    const double big = f(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), 0.9);
    BOOST_TEST(std::isfinite(big));
}

BOOST_AUTO_TEST_CASE(bad_input_throws_everywhere)
{
    auto& comm = world();
    const int me = comm.rank(), p = comm.size();
    std::vector<int> v{3, 2, 1};
    if (me != p - 1) std::sort(v.begin(), v.end()); // unsorted on the last rank only
    BOOST_CHECK_THROW(sr::find_splitters(comm, v, p, 0.01), sr::error);
    BOOST_CHECK_THROW(sr::move_data(comm, v, std::vector<sr::splitter<int>>(static_cast<std::size_t>(p - 1))), sr::error);
    std::sort(v.begin(), v.end());
    if (p > 1) BOOST_CHECK_THROW(sr::find_splitters(comm, v, me == 0 ? p + 1 : p, 0.01), sr::error); // bins disagree
    BOOST_CHECK_THROW(sr::find_splitters(comm, v, 0, 0.01), sr::error);
    BOOST_CHECK_THROW(sr::find_splitters(comm, v, p, me == 0 ? -1.0 : 0.01), sr::error);
    if (p > 1) { // bins_per_rank × P past INT_MAX: on every rank an error naming the limit, not a wrapped count
        for (int per_rank : {INT_MAX / p + 1, 1 << 30}) {
            if (static_cast<long long>(per_rank) * p <= INT_MAX) continue;
            sr::histogram_sort_options o;
            o.bins_per_rank = per_rank;
            std::vector<int> w{me, me + p};
            try {
                sr::histogram_sort(comm, w, std::less<>{}, o);
                BOOST_ERROR("bins_per_rank " << per_rank << " at P = " << p << ": no error");
            } catch (const sr::error& e) {
                BOOST_TEST(std::string(e.what()).find("exceeds 2147483647 bins") != std::string::npos, e.what());
            }
        }
    }
    // nothing left in flight: a sort afterwards works
    BOOST_TEST(sorts_correctly(v, "after errors"));
}

// Tolerance 0 on many small random inputs (tiny key ranges, ragged sizes,
// empty ranks): every bin gets exactly its balanced count, ties split by
// position, and move_data delivers exactly those counts.
BOOST_AUTO_TEST_CASE(exact_bins_on_random_small_inputs)
{
    auto& comm = world();
    const int p = comm.size();
    bool ok = true;
    for (unsigned trial = 0; trial < 60; ++trial) {
        std::mt19937_64 rng(trial * 31 + static_cast<unsigned>(comm.rank()));
        const int bins = 1 + static_cast<int>(trial % 3) * p + static_cast<int>(trial % 2);
        std::vector<std::int16_t> v(rng() % 4 == 0 ? 0 : rng() % 40);
        const int range = 1 + static_cast<int>(trial % 5);
        for (auto& x : v) x = static_cast<std::int16_t>(static_cast<int>(rng() % static_cast<unsigned>(range)) - 1);
        std::sort(v.begin(), v.end());
        const auto sp = sr::find_splitters(comm, v, bins, 0.0);
        bool mine = sp.converged;
        for (int b = 0; b < bins; ++b) {
            const std::uint64_t want = sp.total / static_cast<std::uint64_t>(bins) +
                                       (static_cast<std::uint64_t>(b) < sp.total % static_cast<std::uint64_t>(bins) ? 1 : 0);
            mine = mine && sp.bin_counts[static_cast<std::size_t>(b)] == want;
        }
        std::uint64_t expect = 0;
        for (int b = 0; b < bins; ++b)
            if (static_cast<long>(b) * p / bins == comm.rank()) expect += sp.bin_counts[static_cast<std::size_t>(b)];
        const auto moved = sr::move_data(comm, v, sp.splitters);
        mine = mine && v.size() == expect && moved.runs.size() == static_cast<std::size_t>(p) + 1 && moved.runs.back() == v.size();
        for (std::size_t r = 0; mine && r + 1 < moved.runs.size(); ++r) // one sorted run per source rank
            mine = std::is_sorted(v.begin() + static_cast<std::ptrdiff_t>(moved.runs[r]),
                                  v.begin() + static_cast<std::ptrdiff_t>(moved.runs[r + 1]));
        BOOST_TEST(mine, "trial " << trial << " bins " << bins << " rank " << comm.rank() << ": " << v.size()
                                  << " items, expected " << expect);
        ok = ok && mine;
    }
    BOOST_TEST(all_ok(ok));
}

// With one round allowed the search stops early: converged is false, the
// closest splitters are used, and the sort is still correct (balance aside).
BOOST_AUTO_TEST_CASE(bounded_rounds_fall_back)
{
    auto& comm = world();
    auto rng = rng_for(5);
    std::vector<std::uint64_t> v(2000);
    for (auto& x : v) x = static_cast<std::uint64_t>(std::pow(1 + static_cast<double>(rng() % 1000000), 3)); // skewed
    const auto input = gather_all(v);
    sr::histogram_sort_options opt;
    opt.tolerance = 0.0;
    opt.search.max_iterations = 1;
    const auto t = sr::histogram_sort(comm, v, std::less<>{}, opt);
    BOOST_TEST(t.iterations <= 1);
    const auto output = gather_all(v);
    bool ok = std::is_sorted(v.begin(), v.end());
    if (comm.rank() == 0) ok = ok && std::is_sorted(output.begin(), output.end()) && same_bits_sorted(input, output, std::less<>{});
    BOOST_TEST(all_ok(ok));
    if (comm.size() > 1) BOOST_TEST(!t.converged); // one round cannot hit exact targets here
}

// A comparator that throws on one rank, in any phase of the sort
// (the local sort, find_splitters' check and searches, move_data's cut, the
// final merge), makes every rank throw sparse_reduce::error with its text,
// and a correct sort on the same communicator works afterwards.
BOOST_AUTO_TEST_CASE(a_comparator_that_throws_on_one_rank)
{
    auto& comm = world();
    const int victim = comm.size() > 1 ? 1 : 0;
    auto rng = rng_for(77);
    std::vector<int> data(1500 + 100 * static_cast<std::size_t>(comm.rank()));
    for (auto& x : data) x = static_cast<int>(rng() % 100000);
    // the victim's comparator calls in a whole sort
    auto none = std::make_shared<long>(-1), calls = std::make_shared<long>(0);
    auto dry = data;
    sr::histogram_sort(comm, dry, less_throwing_on{victim, none, calls});
    long total = *calls;
    boost::mpi::broadcast(comm, total, victim);
    BOOST_TEST_REQUIRE(total > 100);
    std::vector<long> at{0, 1, total - 1, total - 2, total - 50};
    for (long k = 1; k < 16; ++k) at.push_back(total * k / 16);
    for (const long after : at) {
        auto v = data;
        const std::string ctx = "histogram_sort: comparator throws on rank " + std::to_string(victim) + " at call " +
                                std::to_string(after) + " of " + std::to_string(total);
        BOOST_TEST_CONTEXT(ctx)
        {
            auto left = std::make_shared<long>(after), n = std::make_shared<long>(0);
            BOOST_TEST(inject_fault({.context = ctx, .needles = {"comparator failed"}, .agreed = true},
                                    [&] { sr::histogram_sort(comm, v, less_throwing_on{victim, left, n}); },
                                    [&] { return sorts_correctly(data, ctx + ", then a correct sort"); }));
        }
    }
}


// A rank that cannot allocate its receive buffer in rebalance or
// move_data makes every rank throw sparse_reduce::error naming it before any
// item moves (before the fix it threw std::bad_alloc alone and its peers
// waited for its messages forever), and a correct sort works afterwards.
BOOST_AUTO_TEST_CASE(an_allocation_that_fails_on_one_rank)
{
    auto& comm = world();
    if (comm.size() < 2) return; // at one rank nothing is received
    const int victim = comm.size() - 1;
    constexpr std::size_t limit = 4096; // bytes: every receive buffer below is larger, the bookkeeping smaller
    auto rng = rng_for(91);
    // phase(input) with allocations failing on the victim: every rank throws
    // "<phase> failed on rank <victim>", then a correct sort of input works
    const auto check = [&](const std::string& phase, const std::vector<int>& input, const auto& call) {
        auto v = input;
        const std::string ctx = phase + ": allocations fail on rank " + std::to_string(victim);
        BOOST_TEST(inject_fault({.context = ctx, .needles = {phase + " failed on rank " + std::to_string(victim)},
                                 .agreed = true},
                                [&] {
                                    failing_allocations guard(comm.rank() == victim ? limit : 0);
                                    call(v);
                                },
                                [&] { return sorts_correctly(input, ctx + ", then a correct sort"); }));
    };
    // rebalance: rank 0 holds everything, so every other rank receives 20000 / P ints
    std::vector<int> data(comm.rank() == 0 ? 20000 : 5);
    for (auto& x : data) x = static_cast<int>(rng() % 100000);
    check("rebalance", data, [&](std::vector<int>& v) { sr::rebalance(comm, v); });
    // move_data: balanced sorted data, the victim receives its bins' 3000 ints
    std::vector<int> sorted(3000);
    for (auto& x : sorted) x = static_cast<int>(rng() % 100000);
    std::sort(sorted.begin(), sorted.end());
    const auto sp = sr::find_splitters(comm, sorted, comm.size(), 0.05);
    check("move_data", sorted, [&](std::vector<int>& v) { sr::move_data(comm, v, sp.splitters); });
}
