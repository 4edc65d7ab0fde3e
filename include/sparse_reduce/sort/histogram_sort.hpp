#pragma once
/// @file
/// histogram_sort, the distributed histogram sort, with its options and timings.
/// Include `<sparse_reduce/sparse_reduce.hpp>`.
///
/// histogram_sort(comm, data [, comp, options]): sorts a vector distributed
/// over the ranks of comm. Afterwards every rank's data is sorted by comp and
/// rank r's items all precede rank r + 1's; rank r holds the items of its
/// bins (within ±tolerance of N / P when bins_per_rank is 1).
///
/// The phases (Sayer 2021), each timed:
///
///      rebalance       N / P items per rank (neighbour exchanges)
///      local_sort      std::sort of each rank's items
///      find_splitters  iterative histogramming to bins_per_rank * P bins
///      move_data       alltoall of counts, then point-to-point transfers
///      merge           the P received sorted runs merged pairwise (log P passes)
///
/// Collective. Keys are trivially copyable and travel as raw bytes.
///
/// A comparator or interpolation that throws (anything) on some ranks, in
/// any phase, makes every rank throw sparse_reduce::error with the lowest
/// failing rank's text: the local sort's failure goes into find_splitters'
/// first agreement, find_splitters and move_data agree on theirs, and the
/// merge's is agreed on at the end (one small allreduce). data is then
/// unspecified (a permutation of some ranks' items, none lost on a rank
/// that did not fail before move_data).

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../mpi/communicator.hpp"
#include "../mpi/first_failure.hpp"
#include "find_splitters.hpp"
#include "move_data.hpp"
#include "rebalance.hpp"
#include "sort_key.hpp"

namespace sparse_reduce {

/// histogram_sort's parameters.
struct histogram_sort_options {
    double tolerance = 0.01;  ///< Allowed deviation of a bin from N / bins, as a fraction.
    int bins_per_rank = 1;    ///< More bins than ranks: each rank owns a group (bins_per_rank * P at most INT_MAX).
    splitter_options search{}; ///< The splitter search's limits.
    /// A barrier before each phase, so that a phase's time is its own and not
    /// the wait for the slowest rank's previous phase (for benchmarks).
    bool synchronize_phases = false;
};

/// Seconds per phase on this rank (MPI_Wtime), and what the search did.
struct sort_timings {
    double rebalance = 0, local_sort = 0, find_splitters = 0, move_data = 0, merge = 0, total = 0;
    int iterations = 0;
    bool converged = true;
    std::uint64_t total_items = 0;
};

namespace detail {

// Merges sorted runs [runs[i], runs[i + 1]) of v pairwise, keeping run order
// among equal items, through one scratch buffer.
template <class K, class Compare>
void merge_runs(std::vector<K>& v, std::vector<std::size_t> runs, const Compare& comp)
{
    std::vector<K> scratch(v.size());
    while (runs.size() > 2) {
        std::vector<std::size_t> next{0};
        for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
            const auto a = v.begin() + static_cast<std::ptrdiff_t>(runs[r]);
            const auto m = v.begin() + static_cast<std::ptrdiff_t>(runs[r + 1]);
            if (r + 2 < runs.size()) {
                const auto b = v.begin() + static_cast<std::ptrdiff_t>(runs[r + 2]);
                std::merge(a, m, m, b, scratch.begin() + static_cast<std::ptrdiff_t>(runs[r]), comp);
                next.push_back(runs[r + 2]);
            } else { // odd run out: carried over
                std::copy(a, m, scratch.begin() + static_cast<std::ptrdiff_t>(runs[r]));
                next.push_back(runs[r + 1]);
            }
        }
        v.swap(scratch);
        runs = std::move(next);
    }
}

} // namespace detail

/// Sorts `data`, distributed over the ranks of comm, by comp: afterwards every
/// rank's data is sorted and rank r's items all precede rank r + 1's.
/// Collective.
/// @param comm    an intracommunicator
/// @param data    this rank's items (trivially copyable keys); replaced by its share
/// @param comp    a strict weak order
/// @param options tolerance, bins per rank, search limits
/// @param interp  interpolates between two keys (for the splitter search)
/// @return this rank's time per phase and what the search did
/// @throws sparse_reduce::error on every rank, with the lowest failing rank's
///         text, when comp or interp throws on some rank or arguments are invalid
template <sort_key K, key_order<K> Compare = std::less<>, key_interpolation<K> Interp = interpolate>
sort_timings histogram_sort(const boost::mpi::communicator& comm, std::vector<K>& data, const Compare& comp = {},
                            histogram_sort_options options = {}, const Interp& interp = {})
{
    detail::enter_collective(MPI_Comm(comm), "histogram_sort");
    if (options.bins_per_rank < 1) options.bins_per_rank = 0; // find_splitters then refuses it on every rank
    sort_timings t;
    const auto now = [&] {
        if (options.synchronize_phases) MPI_Barrier(MPI_Comm(comm));
        return MPI_Wtime();
    };
    const double t0 = now();
    const auto rb = rebalance(comm, data);
    t.total_items = rb.total;
    const double t1 = now();
    std::string failure;
    try {
        std::sort(data.begin(), data.end(), comp);
    } catch (...) {
        failure = detail::rank_failure_text(comm.rank());
    }
    const double t2 = now();
    // bins_per_rank * P past INT_MAX: find_splitters refuses it on every rank, naming the limit
    const long long bins = static_cast<long long>(options.bins_per_rank) * comm.size();
    const auto sp = detail::find_splitters_after(comm, std::span<const K>(data),
                                                 bins > INT_MAX ? detail::too_many_bins : static_cast<int>(bins),
                                                 options.tolerance, comp, interp, options.search, failure);
    t.iterations = sp.iterations;
    t.converged = sp.converged;
    const double t3 = now();
    const auto moved = move_data(comm, data, std::span<const splitter<K>>(sp.splitters), comp);
    const double t4 = now();
    try {
        detail::merge_runs(data, moved.runs, comp);
    } catch (...) {
        failure = detail::rank_failure_text(comm.rank());
    }
    detail::throw_if_any_failed(detail::private_comm(MPI_Comm(comm)), failure, "histogram_sort failed on");
    const double t5 = now();
    t.rebalance = t1 - t0;
    t.local_sort = t2 - t1;
    t.find_splitters = t3 - t2;
    t.move_data = t4 - t3;
    t.merge = t5 - t4;
    t.total = t5 - t0;
    return t;
}

} // namespace sparse_reduce
