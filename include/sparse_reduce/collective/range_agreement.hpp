#pragma once
// The ranks' agreement on a collective's dimension and index ranges
// (reduce_scatter, reduce_scatter_balanced, the pattern plans): the ranges'
// check and hash, one allreduce of the arguments (agree_or_throw), or the
// same agreement inside an exchange of counts (agree_and_count). Every rank
// reads the same verdict and throws alike, naming the rank at fault.

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../detail/fnv1a.hpp"
#include "../error.hpp"
#include "../exec/comm_state.hpp"
#include "../mpi/dimension_agreement.hpp"
#include "../mpi/first_failure.hpp"

namespace sparse_reduce::detail {

// Empty when the ranges are P + 1 non-decreasing boundaries from 0 to D, else why not.
inline std::string check_ranges(std::span<const std::size_t> r, std::size_t dimension, int ranks)
{
    if (r.size() != static_cast<std::size_t>(ranks) + 1)
        return "reduce_scatter: " + std::to_string(r.size()) + " range boundaries for " + std::to_string(ranks) +
               " ranks (need P + 1)";
    if (r.front() != 0 || r.back() != dimension)
        return "reduce_scatter: ranges must start at 0 and end at the dimension " + std::to_string(dimension);
    for (std::size_t k = 1; k < r.size(); ++k)
        if (r[k] < r[k - 1]) return "reduce_scatter: range boundaries decrease at " + std::to_string(k);
    return {};
}

inline std::uint64_t hash_ranges(std::span<const std::size_t> r)
{
    fnv1a h; // over the boundaries
    for (const auto x : r) h.mix_value(static_cast<std::uint64_t>(x));
    return h.hash;
}

// What every rank reads from an agreement, thrown on every rank alike:
// the lowest failing rank's text (first >= 0), else ranks of other
// dimensions (named), else other ranges.
inline void throw_verdict(MPI_Comm comm, int first, bool dimensions_differ, bool ranges_differ, std::size_t dimension,
                          const std::string& local_failure, const char* who)
{
    int me = 0;
    MPI_Comm_rank(comm, &me);
    if (first >= 0)
        fail(std::string(who) + " failed on rank " + std::to_string(first) + ": " +
             broadcast_failure_text(comm, me, first, unprefixed(local_failure)));
    if (dimensions_differ) fail(std::string(who) + ": " + dimension_mismatch_text(comm, dimension, most_common_dimension));
    if (ranges_differ) fail(std::string(who) + ": ranks pass different index ranges");
}

// The agreement every collective here starts with: one allreduce (max) of
// the dimension, the ranges' hash (both also complemented, so min = max can
// be checked) and the lowest failing rank, whose text every rank then
// throws. Throws on every rank on a failure.
inline void agree_or_throw(MPI_Comm comm, std::size_t dimension, std::uint64_t ranges_hash, const std::string& local_failure,
                           const char* who)
{
    int me = 0, ranks = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &ranks);
    const unsigned long long mine[5] = {dimension, ~static_cast<unsigned long long>(dimension), ranges_hash, ~ranges_hash,
                                        local_failure.empty() ? 0ull : static_cast<unsigned long long>(ranks - me)};
    unsigned long long all[5];
    MPI_Allreduce(mine, all, 5, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    throw_verdict(comm, all[4] ? ranks - static_cast<int>(all[4]) : -1, all[0] != ~all[1], all[2] != ~all[3], dimension,
                  local_failure, who);
}

// agree_and_count's words to and from each rank: a count, the dimension,
// the ranges' hash and the failed flag.
inline constexpr std::size_t counted_words_per_rank = 4;

// Those words, both ways, kept on the communicator (a memo of comm_state)
// from its first reduce_scatter, which agrees in one more allreduce that
// every rank made them: a rank that could not still takes part, and every
// rank throws (the next call tries again).
struct counted_words {
    std::vector<std::uint64_t> words;
    bool agreed = false; // the same on every rank: set only after the allreduce
};

inline std::span<std::uint64_t> agreed_counted_words(comm_state& st, MPI_Comm comm)
{
    int me = 0, ranks = 1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &ranks);
    counted_words* m = nullptr;
    std::string failure;
    try {
        m = &st.memo<counted_words>();
        if (m->agreed) return m->words;
        m->words.assign(2 * counted_words_per_rank * static_cast<std::size_t>(ranks), 0);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return rank_failure_text(me); });
    }
    throw_if_any_failed(comm, failure, "reduce_scatter failed on");
    m->agreed = true;
    return m->words;
}

// The agreement and the exchange of counts in one MPI_Alltoall: every rank
// sends every other the count of entries it sends it, its dimension, its
// ranges' hash and whether it failed (words: agreed_counted_words), so
// every rank reads the same verdict: the lowest failing rank's text, ranks
// of other dimensions (named) or other ranges, thrown on every rank, else
// the counts received into recv. send: the counts this rank sends, P of
// them (empty where it failed before it counted: it sends zeros).
inline void agree_and_count(MPI_Comm comm, std::span<std::uint64_t> words, std::size_t dimension,
                            std::uint64_t ranges_hash, const std::string& local_failure,
                            std::span<const std::uint64_t> send, std::span<std::uint64_t> recv, const char* who)
{
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    const auto P = static_cast<std::size_t>(ranks);
    constexpr std::size_t W = counted_words_per_rank;
    assert(words.size() == 2 * W * P); // agreed_counted_words sizes them for this communicator
    std::uint64_t* out = words.data();
    const std::uint64_t* in = words.data() + W * P;
    for (std::size_t d = 0; d < P; ++d) {
        out[W * d] = local_failure.empty() ? send[d] : 0;
        out[W * d + 1] = dimension;
        out[W * d + 2] = ranges_hash;
        out[W * d + 3] = local_failure.empty() ? 0 : 1;
    }
    MPI_Alltoall(out, static_cast<int>(W), MPI_UINT64_T, words.data() + W * P, static_cast<int>(W), MPI_UINT64_T,
                 comm);
    int first = -1;
    bool dimensions_differ = false, ranges_differ = false;
    for (std::size_t s = 0; s < P; ++s) {
        if (in[W * s + 3] && first < 0) first = static_cast<int>(s);
        dimensions_differ = dimensions_differ || in[W * s + 1] != in[1];
        ranges_differ = ranges_differ || in[W * s + 2] != in[2];
    }
    throw_verdict(comm, first, dimensions_differ, ranges_differ, dimension, local_failure, who);
    for (std::size_t s = 0; s < P; ++s) recv[s] = in[W * s];
}

} // namespace sparse_reduce::detail
