#pragma once
// The agreement that ends a collective in which some ranks may have failed:
// one allreduce (min) of the lowest failing rank, then that rank's message
// broadcast, so every rank can throw the same error; or, where every rank
// sends every other its data anyway, a status word beside it (status_words).

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "bytes.hpp"

namespace sparse_reduce::detail {

struct failed_rank {
    int rank;
    std::string text; // that rank's own message
};

// The failing rank's message, on every rank (collective; text is read on
// `first` only).
inline std::string broadcast_failure_text(MPI_Comm comm, int me, int first, const std::string& text)
{
    std::string message = me == first ? text : std::string();
    int len = static_cast<int>(message.size());
    MPI_Bcast(&len, 1, MPI_INT, first, comm);
    message.resize(static_cast<std::size_t>(len));
    MPI_Bcast(message.data(), len, MPI_CHAR, first, comm);
    return message;
}

// The lowest failing rank agreed on by a status word from every rank to
// every other (post_words), posted with a call's data and completed with
// it: one latency inside the exchange, where an allreduce, even
// nonblocking, takes log P rounds that progress only inside MPI calls (on 4
// hosts at 1 Gbit/s 0.3 to 0.45 ms of a 1.2 ms reduce_scatter at 0.1 %).
// P - 1 messages each way: for collectives whose data goes to every rank
// anyway. Sized (resize) where a failure is still agreed on: post
// allocates nothing; the words must outlive the requests.
struct status_words {
    static constexpr std::uint64_t no_failure = ~std::uint64_t{0};
    std::vector<std::uint64_t> in, out;
    void resize(std::size_t P)
    {
        in.assign(P, no_failure);
        out.assign(P, no_failure);
    }
    // failed: whether this rank failed (rank: its rank); reqs: room for 2 P
    void post(MPI_Comm comm, int rank, bool failed, int tag, std::vector<MPI_Request>& reqs)
    {
        out.assign(out.size(), failed ? static_cast<std::uint64_t>(rank) : no_failure);
        post_words(comm, out, in, tag, reqs);
    }
    // The lowest rank that failed, INT_MAX if none (once post's requests completed).
    int first_failed() const
    {
        const std::uint64_t first = *std::min_element(in.begin(), in.end());
        return first == no_failure ? INT_MAX : static_cast<int>(first);
    }
};

// candidate: the lowest failing rank this rank knows of (itself, or one it
// heard of), INT_MAX for none; text: this rank's message if it failed.
inline std::optional<failed_rank> first_failure(MPI_Comm comm, int me, int candidate, const std::string& text)
{
    int first = INT_MAX;
    MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX) return std::nullopt;
    return failed_rank{first, broadcast_failure_text(comm, me, first, text)};
}

// This rank's failure text for the exception being handled (any type).
inline std::string rank_failure_text(int me)
{
    return concat("rank ", me, ": ", unprefixed(current_exception_text()));
}

// Ends a step in which some ranks may have failed (local_failure non-empty,
// from rank_failure_text): when any did, every rank throws
// sparse_reduce::error "<who> rank r: ...", r the lowest failing rank
// (who e.g. "histogram_sort failed on").
inline void throw_if_any_failed(MPI_Comm comm, const std::string& local_failure, const char* who)
{
    int me = 0;
    MPI_Comm_rank(comm, &me);
    if (const auto first = first_failure(comm, me, local_failure.empty() ? INT_MAX : me, local_failure))
        fail(std::string(who) + " " + first->text);
}

} // namespace sparse_reduce::detail
