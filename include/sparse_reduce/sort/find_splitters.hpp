#pragma once
// find_splitters(comm, sorted, bins, tolerance [, comp, interp]): bins - 1
// splitters that cut the distributed data into bins of N / bins items each,
// within ±tolerance of that average. Collective; each rank's data must be
// sorted by comp (checked: unsorted input throws sparse_reduce::error on
// every rank).
//
// Iterative histogramming (Sayer 2021, after Harsh, Kalé and Solomonik 2019):
// rank 0 holds, per splitter, a bracket of two probes whose global counts
// enclose the target. The first probes interpolate linearly between the
// global minimum and maximum; every later one interpolates proportionally inside its
// bracket. Rank 0 broadcasts the probes, every rank counts its items below
// each probe by binary search, and the counts are summed to rank 0 with this
// library's own reduce. A splitter is done when its count is within
// tolerance/2 of its target, so every bin is within ±tolerance.
//
// Ties. A probe is a pair (key, position): an item is below it when its key
// is smaller, or equal and its global position (its rank's offset from an
// exclusive scan, plus its local index) is smaller. That is a total order on
// the items, so a count can always be hit exactly: when all keys are equal,
// or a target falls inside a run of one key, the search continues on the
// positions within that key. Items of one key therefore may be split across
// bins, in global position order, and move_data cuts the data the same way.
//
// Failures. A comparator or interpolation that throws on some ranks (any
// type), in the sortedness check, the ends or the search, is caught there:
// the throwing rank flags it in the next agreement (the first allreduce,
// or the counts summed to rank 0, which then stops the search for all),
// and every rank throws sparse_reduce::error with the lowest failing
// rank's text (mpi/first_failure.hpp). histogram_sort passes a failure of
// its local sort in the same way.
//
// Termination. A step that did not halve its bracket's count range is
// followed by a bisection (the interpolation's bisect overload, see
// sort_key.hpp, else fraction 0.5; or half the positions), so a search needs
// at most about 2 (key bits + 64) iterations, whatever the data. After max_iterations
// (default 400) the closest probes so far are returned with converged =
// false; there is no other way out of the loop.

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <span>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../collective/reduce.hpp"
#include "../error.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "rebalance.hpp"
#include "sort_key.hpp"

namespace sparse_reduce {

/// Items below (key, position) go left of the splitter; see the header comment.
template <sort_key K>
struct splitter {
    K key{};
    std::uint64_t position = 0;
};

template <sort_key K>
struct splitters_result {
    std::vector<splitter<K>> splitters;     // bins - 1, in increasing order
    std::vector<std::uint64_t> bin_counts;  // bins: global items per bin
    std::uint64_t total = 0;                // N
    int iterations = 0;                     // histogramming rounds
    bool converged = true;                  // every bin within tolerance
};

struct splitter_options {
    int max_iterations = 400;
};

namespace detail {

// Items of sorted data (whose first item has global position `base`) below s.
template <class K, class Compare>
std::uint64_t count_below(std::span<const K> data, std::uint64_t base, const splitter<K>& s, const Compare& comp)
{
    const auto lo = static_cast<std::uint64_t>(std::lower_bound(data.begin(), data.end(), s.key, comp) - data.begin());
    if (s.position <= base + lo) return lo;
    const auto hi = static_cast<std::uint64_t>(std::upper_bound(data.begin(), data.end(), s.key, comp) - data.begin());
    return lo + std::min(s.position - base - lo, hi - lo);
}

// Rank 0's search state for one splitter.
template <class K>
struct bracket {
    splitter<K> lo, hi, best;
    std::uint64_t clo = 0, chi = 0, cbest = 0, target = 0;
    bool bisect = false, done = false;
};

template <class K, class Compare, class Interp>
splitter<K> next_probe(bracket<K>& b, std::uint64_t total, const Compare& comp, const Interp& interp)
{
    const double f = b.bisect ? 0.5
                              : static_cast<double>(b.target - b.clo) / static_cast<double>(b.chi - b.clo);
    auto in_positions = [&](const K& key, std::uint64_t plo, std::uint64_t phi) {
        const std::uint64_t width = phi - plo;
        auto step = static_cast<std::uint64_t>(std::llround(f * static_cast<double>(width)));
        step = std::clamp<std::uint64_t>(step, 1, width - 1);
        return splitter<K>{key, plo + step};
    };
    if (!comp(b.lo.key, b.hi.key)) { // one key: only positions are left to split
        if (b.hi.position - b.lo.position < 2) { b.done = true; return b.best; }
        return in_positions(b.lo.key, b.lo.position, b.hi.position);
    }
    // A key at fraction x of the way from `from` to `to`, in the
    // interpolation's own order.
    const auto at = [&](const K& from, const K& to, double x) {
        if constexpr (requires { interp(from, to, bisect); })
            if (b.bisect) return static_cast<K>(interp(from, to, bisect));
        return static_cast<K>(interp(from, to, x));
    };
    K k = at(b.lo.key, b.hi.key, f);
    if (comp(b.lo.key, k) && comp(k, b.hi.key)) return {k, 0};
    // The interpolation's order may run against comp (interpolate follows
    // operator<, and comp may be std::greater<>): from hi to lo, the same
    // share of the bracket is 1 - f.
    k = at(b.hi.key, b.lo.key, 1 - f);
    if (comp(b.lo.key, k) && comp(k, b.hi.key)) return {k, 0};
    // No key strictly between (the interpolation's contract): the target
    // lies among lo.key's items or hi.key's.
    if (b.lo.position < total) return {b.lo.key, total};
    b.lo = {b.hi.key, 0}; // (lo.key, N) counts the same as (hi.key, 0)
    if (b.hi.position < 2) { b.done = true; return b.best; }
    return in_positions(b.hi.key, 0, b.hi.position);
}

} // namespace detail

namespace detail {

// A rank's first and last item, if it has any.
template <class K>
struct key_ends {
    K lo{}, hi{};
    int has = 0;
};

// What a search needs beyond the result, made with it before the first
// agreement (make_search_memory), so that a rank that cannot allocate it
// fails on every rank and nothing allocates between collectives: rank 0's
// brackets, the probes, a round's counts, the final counts, every rank's ends.
template <class K>
struct search_memory {
    std::vector<bracket<K>> br;
    std::vector<splitter<K>> probes;
    std::vector<std::uint64_t> counts, final_counts;
    std::vector<key_ends<K>> all;
};

// The result's arrays and the search's memory for `bins` bins over `ranks`
// ranks (none for an invalid count: the agreement refuses it); a rank that
// cannot allocate them: `failure` set.
template <class K>
void make_search_memory(splitters_result<K>& res, search_memory<K>& mem, int bins, int ranks, int me,
                        std::string& failure)
{
    if (!failure.empty() || bins < 1) return;
    const auto nsplit = static_cast<std::size_t>(bins - 1);
    try {
        res.splitters.assign(nsplit, splitter<K>{});
        res.bin_counts.assign(static_cast<std::size_t>(bins), 0);
        mem.br.resize(nsplit);
        mem.probes.resize(nsplit);
        mem.counts.resize(nsplit + 1);
        mem.final_counts.resize(nsplit);
        mem.all.resize(static_cast<std::size_t>(ranks));
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
}

// The global minimum and maximum by comp: every rank's ends, gathered as
// bytes into `all` (one per rank). A comparator that throws: `failure` set,
// the ends left unusable.
template <class K, class Compare>
std::pair<K, K> global_ends(MPI_Comm pc, int me, std::span<const K> sorted, const Compare& comp, std::string& failure,
                            std::vector<key_ends<K>>& all)
{
    using ends = key_ends<K>;
    ends e;
    if (!sorted.empty()) e = {sorted.front(), sorted.back(), 1};
    MPI_Allgather(&e, sizeof(ends), MPI_BYTE, all.data(), sizeof(ends), MPI_BYTE, pc);
    K gmin{}, gmax{};
    bool first = true;
    if (failure.empty()) try {
            for (const auto& x : all)
                if (x.has) {
                    if (first || comp(x.lo, gmin)) gmin = x.lo;
                    if (first || comp(gmax, x.hi)) gmax = x.hi;
                    first = false;
                }
        } catch (...) {
            failure = rank_failure_text(me);
        }
    return {gmin, gmax};
}

// Rank 0: one round's summed counts into the brackets, and the next probes.
template <class K, class Compare, class Interp, class Close>
void update_brackets(std::vector<bracket<K>>& br, std::vector<splitter<K>>& probes, std::span<const std::uint64_t> summed,
                     std::uint64_t total, const Compare& comp, const Interp& interp, const Close& close)
{
    for (std::size_t i = 0; i < br.size(); ++i) {
        auto& b = br[i];
        if (b.done) continue;
        const std::uint64_t c = summed[i], t = b.target;
        if ((c > t ? c - t : t - c) < (b.cbest > t ? b.cbest - t : t - b.cbest)) {
            b.best = probes[i];
            b.cbest = c;
        }
        if (close(c, t)) {
            b.done = true;
            continue;
        }
        const std::uint64_t width = b.chi - b.clo;
        if (c < t) {
            b.lo = probes[i];
            b.clo = c;
        } else {
            b.hi = probes[i];
            b.chi = c;
        }
        b.bisect = 2 * (b.chi - b.clo) > width;
        probes[i] = next_probe(b, total, comp, interp);
    }
}

// A bins count that does not fit an int (histogram_sort's bins_per_rank × P).
inline constexpr int too_many_bins = -1;

// The first agreement: on the arguments, on sortedness and on failures so
// far (one allreduce), before anything else. Throws on every rank alike.
template <class K, class Compare>
void agree_on_arguments(MPI_Comm pc, int me, int ranks, std::span<const K> sorted, int bins, double tolerance,
                        const Compare& comp, const splitter_options& options, std::string& failure)
{
    bool local_sorted = true;
    if (failure.empty()) try {
            local_sorted = std::is_sorted(sorted.begin(), sorted.end(), comp);
        } catch (...) {
            failure = rank_failure_text(me);
        }
    const bool args_ok = bins >= 1 && tolerance >= 0 && std::isfinite(tolerance) && options.max_iterations >= 1;
    const long long mine[5] = {bins, -static_cast<long long>(bins), local_sorted ? 0 : ranks - me,
                               args_ok ? 0 : bins == too_many_bins ? 2 : 1, failure.empty() ? 0 : 1};
    long long agreed[5];
    MPI_Allreduce(mine, agreed, 5, MPI_LONG_LONG, MPI_MAX, pc);
    if (agreed[4]) throw_if_any_failed(pc, failure, "find_splitters failed on");
    if (agreed[3] == 2)
        fail("histogram_sort: bins_per_rank * ranks exceeds ", INT_MAX, " bins (on some rank)");
    if (agreed[3]) fail("find_splitters: bins must be >= 1, tolerance finite and >= 0 (on some rank)");
    if (agreed[0] != -agreed[1]) fail("find_splitters: ranks disagree on the number of bins");
    if (agreed[2]) fail("find_splitters: data not sorted on rank ", ranks - agreed[2]);
}

// Rank 0: the first brackets, [global min, global max], and their first
// probes. Splitter i aims at the balanced prefix of bin i + 1 (remainder
// round-robin). A comparator or interpolation that throws: `failure` set.
template <class K, class Compare, class Interp, class Close>
void initial_brackets(std::vector<bracket<K>>& br, std::vector<splitter<K>>& probes, const K& gmin, const K& gmax,
                      std::uint64_t total, int bins, int me, const Compare& comp, const Interp& interp,
                      const Close& close, std::string& failure)
{
    if (me == 0 && failure.empty()) try {
            for (std::size_t i = 0; i < br.size(); ++i) {
                auto& b = br[i];
                b.target = balanced_prefix(total, bins, static_cast<int>(i) + 1);
                b.lo = {gmin, 0};
                b.hi = {gmax, total};
                b.clo = 0;
                b.chi = total;
                b.best = b.target - b.clo <= b.chi - b.target ? b.lo : b.hi;
                b.cbest = b.target - b.clo <= b.chi - b.target ? b.clo : b.chi;
                b.done = close(b.cbest, b.target);
                probes[i] = b.done ? b.best : next_probe(b, total, comp, interp);
            }
        } catch (...) {
            failure = rank_failure_text(me);
        }
}

// The histogramming rounds. Rank 0 decides go (1: another round, 0: done,
// -1: some rank failed) and broadcasts it with the probes; every rank counts
// below them; the counts carry one more word, 1 from a rank that failed, so
// rank 0 stops the search and all ranks agree on the failure (a reduce that
// fails throws on rank 0 too, which then stops the search). Ends with
// every rank holding the final probes; returns the rounds run.
template <class K, class Compare, class Interp, class Close>
int search_splitters(const boost::mpi::communicator& comm, MPI_Comm pc, search_memory<K>& mem,
                     std::span<const K> sorted, std::uint64_t base, std::uint64_t total, const Compare& comp,
                     const Interp& interp, const Close& close, const splitter_options& options, std::string& failure)
{
    const int me = comm.rank();
    auto& br = mem.br;
    auto& probes = mem.probes;
    auto& counts = mem.counts;
    const std::size_t nsplit = probes.size();
    auto plan = make_plan(comm, 0, nsplit + 1, policy::binomial{}); // collective: fails on every rank alike
    std::vector<std::uint64_t> summed;
    int go = 1, iterations = 0;
    bool heard = false;
    for (int it = 0;; ++it) {
        if (me == 0) go = std::all_of(br.begin(), br.end(), [](const auto& b) { return b.done; }) ? 0 : 1;
        if (me == 0 && go && it == options.max_iterations) go = 0; // the fallback: closest probes so far
        if (me == 0 && !go)
            for (std::size_t i = 0; i < nsplit; ++i) probes[i] = br[i].best;
        if (me == 0 && (heard || !failure.empty())) go = -1;
        MPI_Bcast(&go, 1, MPI_INT, 0, pc);
        bcast_bytes(probes.data(), nsplit * sizeof(splitter<K>), 0, pc);
        if (go < 0) throw_if_any_failed(pc, failure, "find_splitters failed on");
        if (!go) break;
        iterations = it + 1;
        if (failure.empty()) try {
                for (std::size_t i = 0; i < nsplit; ++i) counts[i] = count_below(sorted, base, probes[i], comp);
            } catch (...) {
                failure = rank_failure_text(me);
            }
        counts[nsplit] = failure.empty() ? 0 : 1;
        try {
            plan.reduce(counts, summed, std::plus<>{});
        } catch (...) {
            if (failure.empty()) failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
        }
        if (me != 0 || !failure.empty()) continue;
        heard = summed[nsplit] != 0;
        if (!heard && failure.empty()) try {
                update_brackets(br, probes, std::span<const std::uint64_t>(summed).first(nsplit), total, comp, interp, close);
            } catch (...) {
                failure = rank_failure_text(me);
            }
    }
    return iterations;
}

// Rank 0's final counts, rounds and convergence, broadcast to all, and the
// bin counts from them. res.splitters and res.total are set already.
template <class K, class Close>
void finish_result(splitters_result<K>& res, search_memory<K>& mem, int me, MPI_Comm pc, const Close& close)
{
    const auto& br = mem.br;
    const std::size_t nsplit = br.size();
    auto& final_counts = mem.final_counts;
    int conv = 1;
    if (me == 0)
        for (std::size_t i = 0; i < nsplit; ++i) {
            final_counts[i] = br[i].cbest;
            if (!close(br[i].cbest, br[i].target)) conv = 0; // max_iterations hit, or an interpolation broke its contract
        }
    MPI_Bcast(final_counts.data(), static_cast<int>(nsplit), MPI_UINT64_T, 0, pc);
    MPI_Bcast(&res.iterations, 1, MPI_INT, 0, pc);
    MPI_Bcast(&conv, 1, MPI_INT, 0, pc);
    res.converged = conv != 0;
    std::uint64_t prev = 0; // res.bin_counts: made with the search's memory
    for (std::size_t i = 0; i < nsplit; ++i) {
        res.bin_counts[i] = final_counts[i] - std::min(prev, final_counts[i]);
        prev = std::max(prev, final_counts[i]);
    }
    res.bin_counts[nsplit] = res.total - prev;
}

// find_splitters, with this rank's failure so far (histogram_sort's local
// sort) taken into the first agreement.
template <class K, class Compare, class Interp>
splitters_result<K> find_splitters_after(const boost::mpi::communicator& comm, std::span<const K> sorted, int bins,
                                         double tolerance, const Compare& comp, const Interp& interp,
                                         splitter_options options, std::string failure)
{
    const MPI_Comm pc = private_comm(MPI_Comm(comm));
    const int me = comm.rank(), ranks = comm.size();
    splitters_result<K> res;
    search_memory<K> mem;
    make_search_memory(res, mem, bins, ranks, me, failure);
    agree_on_arguments(pc, me, ranks, sorted, bins, tolerance, comp, options, failure);
    const std::uint64_t n = sorted.size();
    std::uint64_t base = 0, total = 0;
    MPI_Exscan(&n, &base, 1, MPI_UINT64_T, MPI_SUM, pc);
    if (me == 0) base = 0;
    MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, pc);
    res.total = total;
    const auto nsplit = static_cast<std::size_t>(bins - 1);
    if (nsplit == 0 || total == 0) {
        res.bin_counts[0] = total; // no items, or one bin: nothing to search
        return res;
    }
    const auto [gmin, gmax] = global_ends(pc, me, sorted, comp, failure, mem.all);
    const double average = static_cast<double>(total) / bins;
    const auto slack = static_cast<std::uint64_t>(std::floor(tolerance * average / 2));
    auto close = [slack](std::uint64_t c, std::uint64_t t) { return (c > t ? c - t : t - c) <= slack; };
    initial_brackets(mem.br, mem.probes, gmin, gmax, total, bins, me, comp, interp, close, failure);
    res.iterations = search_splitters(comm, pc, mem, sorted, base, total, comp, interp, close, options, failure);
    // a failure the search ended before hearing of (in the ends, or the last round)
    throw_if_any_failed(pc, failure, "find_splitters failed on");
    std::copy(mem.probes.begin(), mem.probes.end(), res.splitters.begin());
    finish_result(res, mem, me, pc, close);
    return res;
}

} // namespace detail

/// bins - 1 splitters that cut the distributed sorted data into bins of
/// N / bins items each, within ±tolerance of that average, by iterative
/// histogramming. Collective; each rank's data must be sorted by comp (the
/// header comment has ties, failures and termination).
template <sort_key K, key_order<K> Compare = std::less<>, key_interpolation<K> Interp = interpolate>
splitters_result<K> find_splitters(const boost::mpi::communicator& comm, std::span<const K> sorted, int bins,
                                   double tolerance, const Compare& comp = {}, const Interp& interp = {},
                                   splitter_options options = {})
{
    detail::enter_collective(MPI_Comm(comm), "find_splitters");
    return detail::find_splitters_after(comm, sorted, bins, tolerance, comp, interp, options, {});
}

/// Convenience overload for containers.
template <sort_key K, key_order<K> Compare = std::less<>, key_interpolation<K> Interp = interpolate>
splitters_result<K> find_splitters(const boost::mpi::communicator& comm, const std::vector<K>& sorted, int bins,
                                   double tolerance, const Compare& comp = {}, const Interp& interp = {},
                                   splitter_options options = {})
{
    return find_splitters(comm, std::span<const K>(sorted), bins, tolerance, comp, interp, options);
}

} // namespace sparse_reduce
