#pragma once
// The ranks' agreement on a collective's dimension and index ranges
// (reduce_scatter, reduce_scatter_balanced, the pattern plans): the ranges'
// check and hash, one allreduce of the arguments (agree_or_throw), or the
// same agreement read from reduce_scatter's headers (scatter/headers.hpp).
// Every rank reads the same verdict and throws alike, naming the rank at
// fault.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../detail/fnv1a.hpp"
#include "../error.hpp"
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
        fail(std::string(who), " failed on rank ", first, ": ",
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

} // namespace sparse_reduce::detail
