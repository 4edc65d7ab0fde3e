#pragma once
// The agreement that ends a collective in which some ranks may have failed:
// one allreduce (min) of the lowest failing rank, then that rank's message
// broadcast, so every rank can throw the same error.

#include <climits>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <mpi.h>

namespace sparse_reduce::detail {

struct failed_rank {
    int rank;
    std::string text; // that rank's own message
};

// candidate: the lowest failing rank this rank knows of (itself, or one it
// heard of), INT_MAX for none; text: this rank's message if it failed.
inline std::optional<failed_rank> first_failure(MPI_Comm comm, int me, int candidate, const std::string& text)
{
    int first = INT_MAX;
    MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) return std::nullopt;
    std::string message = me == first ? text : std::string();
    int len = static_cast<int>(message.size());
    MPI_Bcast(&len, 1, MPI_INT, first, comm);
    message.resize(static_cast<std::size_t>(len));
    MPI_Bcast(message.data(), len, MPI_CHAR, first, comm);
    return failed_rank{first, std::move(message)};
}

} // namespace sparse_reduce::detail
