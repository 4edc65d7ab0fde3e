#pragma once
// The exchange of a pattern plan (collective/pattern_plan.hpp), built once
// from every rank's pattern and free of the value type.
//
// Rank r owns [ranges[r], ranges[r + 1]). At plan time each rank sends every
// owner the global indices of its pattern entries in the owner's range; the
// owner merges what it gets into its support (sorted, distinct) and keeps,
// for every entry it will receive, the entry's slot in the support:
//
//     pattern r0: 3 9 4      owner of [0, 8): support 1 3 4
//     pattern r1: 4 1 12     runs: r0 -> 3 4 (slots 1 2), r1 -> 4 1 (slots 2 0)
//
// A call then sends values only, in the same order, and the owner folds run
// by run, in rank order, at those slots: no index is sent or compared.
// Every count and slot here is the same for every value type.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../mpi/tags.hpp"

namespace sparse_reduce::detail {

// What a pattern plan knows of the exchange, rank-local.
struct pattern_layout {
    int rank = 0, ranks = 1;
    std::size_t dimension = 0;
    std::uint64_t rows = 0, cols = 0; // a matrix plan's shape (pattern/matrix.hpp); 0 for a vector's
    std::vector<std::size_t> ranges;    // P + 1 boundaries of the owners' ranges
    std::vector<std::uint64_t> pattern; // this rank's pattern, as given
    bool grouped = true;                // pattern entries already grouped by owner, in owner order
    std::vector<std::uint32_t> order;   // else: the entries by owner, stably (a call gathers by it)
    std::vector<std::size_t> send_cut;  // P + 1: owner d's entries are order[send_cut[d] .. send_cut[d + 1])
    std::vector<std::size_t> recv_cut;  // P + 1: rank s's run is slot[recv_cut[s] .. recv_cut[s + 1])
    std::vector<std::uint32_t> slot;    // per received entry (own run included), its slot in the support
    std::vector<std::size_t> owned;     // the support: sorted distinct global indices of this rank's range
    // allreduce: every owner's support, concatenated in rank order (the union, sorted)
    bool to_all = false;
    bool writes = true; // false on a reduce's other ranks: their output is left alone
    // every rank sends values to every other: a blocking call's agreement
    // travels beside them as status words (mpi/first_failure.hpp), else as an
    // MPI_Iallreduce
    bool agree_by_words = false;
    std::vector<std::size_t> all;
    std::vector<std::size_t> all_cut; // P + 1: owner s's part of `all`

    std::size_t pattern_size() const { return pattern.size(); }
    std::size_t sends(int d) const { return send_cut[d + 1] - send_cut[d]; }
    std::size_t receives(int s) const { return recv_cut[s + 1] - recv_cut[s]; }
    // The entry of the pattern that is the k-th one sent to its owner.
    std::size_t entry(std::size_t k) const { return grouped ? k : order[k]; }
    // The output: the union for an allreduce, else the owned support.
    const std::vector<std::size_t>& support() const { return to_all ? all : owned; }
};

// The owner of each pattern entry (ranges[d] <= index < ranges[d + 1]), as
// send_cut and, for a pattern not grouped by owner, order. Empty, or why
// the pattern is invalid.
inline std::string group_by_owner(pattern_layout& l)
{
    const auto P = static_cast<std::size_t>(l.ranks);
    const std::size_t n = l.pattern.size();
    if (n >= std::numeric_limits<std::uint32_t>::max())
        return "a pattern of " + std::to_string(n) + " entries on one rank (at most 2^32 - 2)";
    std::vector<std::uint32_t> owner(n);
    std::vector<std::size_t> count(P, 0);
    for (std::size_t k = 0; k < n; ++k) {
        const std::uint64_t i = l.pattern[k];
        if (i >= l.dimension)
            return "pattern entry " + std::to_string(k) + " is index " + std::to_string(i) + ", outside the dimension " +
                   std::to_string(l.dimension);
        const auto d = std::upper_bound(l.ranges.begin() + 1, l.ranges.end(), static_cast<std::size_t>(i)) - l.ranges.begin() - 1;
        owner[k] = static_cast<std::uint32_t>(d);
        if (k > 0 && owner[k] < owner[k - 1]) l.grouped = false;
        ++count[static_cast<std::size_t>(d)];
    }
    l.send_cut.assign(P + 1, 0);
    for (std::size_t d = 0; d < P; ++d) l.send_cut[d + 1] = l.send_cut[d] + count[d];
    if (!l.grouped) {
        l.order.resize(n);
        std::vector<std::size_t> at(l.send_cut.begin(), l.send_cut.end() - 1);
        for (std::size_t k = 0; k < n; ++k) l.order[at[owner[k]]++] = static_cast<std::uint32_t>(k);
    }
    return {};
}

// The support of this rank's range from every rank's run of global indices
// (rank order), and each entry's slot in it.
inline std::string merge_runs(pattern_layout& l, const std::vector<std::uint64_t>& runs)
{
    std::vector<std::uint64_t> sorted(runs);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    if (sorted.size() >= std::numeric_limits<std::uint32_t>::max())
        return "more than 2^32 - 2 distinct pattern indices in rank " + std::to_string(l.rank) + "'s range";
    l.owned.assign(sorted.begin(), sorted.end());
    l.slot.resize(runs.size());
    for (std::size_t k = 0; k < runs.size(); ++k)
        l.slot[k] = static_cast<std::uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), runs[k]) - sorted.begin());
    return {};
}

// Each step of the build allocates before its collective and the ranks
// agree on that (throw_if_any_failed), so a rank out of memory fails every
// rank and none waits.
inline constexpr const char* pattern_build_failed = "making the pattern plan failed on";

template <class F>
void agreed_step(MPI_Comm pc, int me, F&& f)
{
    std::string failure;
    try {
        f();
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
    throw_if_any_failed(pc, failure, pattern_build_failed);
}

// Sends every owner this rank's global indices in its range and returns the
// runs of its own range (own run copied), in rank order. Collective, after
// the ranks agreed on the arguments.
inline std::vector<std::uint64_t> exchange_runs(MPI_Comm pc, pattern_layout& l)
{
    const auto P = static_cast<std::size_t>(l.ranks), me = static_cast<std::size_t>(l.rank);
    std::vector<std::uint64_t> send, counts, recv_counts, runs;
    std::vector<MPI_Request> reqs;
    agreed_step(pc, l.rank, [&] {
        send.resize(l.pattern.size());
        for (std::size_t k = 0; k < send.size(); ++k) send[k] = l.pattern[l.entry(k)];
        counts.resize(P);
        recv_counts.resize(P);
        for (std::size_t d = 0; d < P; ++d) counts[d] = l.sends(static_cast<int>(d));
        l.recv_cut.assign(P + 1, 0);
    });
    MPI_Alltoall(counts.data(), 1, MPI_UINT64_T, recv_counts.data(), 1, MPI_UINT64_T, pc);
    for (std::size_t s = 0; s < P; ++s) l.recv_cut[s + 1] = l.recv_cut[s] + static_cast<std::size_t>(recv_counts[s]);
    agreed_step(pc, l.rank, [&] {
        runs.resize(l.recv_cut[P]);
        std::size_t posts = 0;
        for (std::size_t r = 0; r < P; ++r)
            if (r != me) posts += pieces_of(8 * counts[r]) + pieces_of(8 * recv_counts[r]);
        reqs.reserve(posts);
    });
    for (std::size_t s = 0; s < P; ++s)
        if (s != me && recv_counts[s])
            irecv_bytes(runs.data() + l.recv_cut[s], 8 * recv_counts[s], static_cast<int>(s), pattern_index_tag, pc, reqs);
    for (std::size_t d = 0; d < P; ++d)
        if (d != me && counts[d])
            isend_bytes(send.data() + l.send_cut[d], 8 * counts[d], static_cast<int>(d), pattern_index_tag, pc, reqs);
    std::copy(send.begin() + static_cast<std::ptrdiff_t>(l.send_cut[me]),
              send.begin() + static_cast<std::ptrdiff_t>(l.send_cut[me + 1]),
              runs.begin() + static_cast<std::ptrdiff_t>(l.recv_cut[me]));
    wait_all(reqs);
    return runs;
}

// An allreduce's union: every owner's support gathered on every rank.
inline void gather_union(MPI_Comm pc, pattern_layout& l)
{
    const auto P = static_cast<std::size_t>(l.ranks);
    std::uint64_t mine = l.owned.size();
    std::vector<std::uint64_t> sizes, all;
    std::vector<int> bytes, at;
    agreed_step(pc, l.rank, [&] {
        sizes.resize(P);
        bytes.resize(P);
        at.resize(P);
        l.all_cut.assign(P + 1, 0);
    });
    MPI_Allgather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, pc);
    for (std::size_t s = 0; s < P; ++s) l.all_cut[s + 1] = l.all_cut[s] + static_cast<std::size_t>(sizes[s]);
    if (l.all_cut[P] > static_cast<std::size_t>(INT_MAX) / 8) // the same on every rank
        fail("pattern plan: the union of the patterns has ", l.all_cut[P],
             " indices, more than an allreduce's gather takes (2^28 - 1)");
    for (std::size_t s = 0; s < P; ++s) {
        bytes[s] = static_cast<int>(sizes[s] * 8);
        at[s] = static_cast<int>(l.all_cut[s] * 8);
    }
    agreed_step(pc, l.rank, [&] {
        all.resize(l.all_cut[P]);
        std::copy(l.owned.begin(), l.owned.end(), all.begin() + static_cast<std::ptrdiff_t>(l.all_cut[l.rank]));
        l.all.resize(all.size());
    });
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all.data(), bytes.data(), at.data(), MPI_BYTE, pc);
    std::copy(all.begin(), all.end(), l.all.begin());
}

} // namespace sparse_reduce::detail
