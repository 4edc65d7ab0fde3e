#pragma once
// Do the ranks pass vectors of one dimension? One small allreduce (max of d
// and of its complement ~d) says whether they do, on every rank alike; only when they do not,
// an allgather finds which ranks are at fault, so that every rank can throw
// the same sentence naming them. Reduce measures against the root's
// dimension (the root's output is what the call writes); allreduce and
// reduce_scatter against the most common one.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <mpi.h>

#include "../error.hpp"

namespace sparse_reduce::detail {

// For the reference: the ranks whose dimension differs from the root's.
inline constexpr int most_common_dimension = -1;

// The sentence naming the ranks whose dimension differs from the reference
// (a root, or most_common_dimension). Collective (an allgather): call it on
// every rank once all know the dimensions differ.
inline std::string dimension_mismatch_text(MPI_Comm comm, std::size_t dimension, int reference)
{
    int ranks = 1;
    MPI_Comm_size(comm, &ranks);
    const unsigned long long mine = dimension;
    std::vector<unsigned long long> all(static_cast<std::size_t>(ranks));
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all.data(), 1, MPI_UNSIGNED_LONG_LONG, comm);

    unsigned long long expected = 0;
    std::string whose;
    if (reference >= 0) {
        expected = all[static_cast<std::size_t>(reference)];
        whose = concat("the root (rank ", reference, ") has ");
    } else { // the most common dimension; a tie goes to the lowest rank's
        std::vector<unsigned long long> sorted = all;
        std::sort(sorted.begin(), sorted.end());
        std::size_t best = 0;
        for (std::size_t r = 0; r < all.size(); ++r) {
            const auto n = static_cast<std::size_t>(std::upper_bound(sorted.begin(), sorted.end(), all[r]) -
                                                    std::lower_bound(sorted.begin(), sorted.end(), all[r]));
            if (n > best) best = n, expected = all[r];
        }
        whose = "the other ranks have ";
    }
    constexpr int named = 8; // a long list says how many more
    std::string text = "dimension mismatch: ";
    int at_fault = 0;
    for (int r = 0; r < ranks; ++r) {
        if (all[static_cast<std::size_t>(r)] == expected) continue;
        if (at_fault++ < named) text += concat("rank ", r, " has dimension ", all[static_cast<std::size_t>(r)], "; ");
    }
    if (at_fault > named) text += concat("and ", at_fault - named, " more ranks; ");
    return concat(text, whose, expected);
}

// The largest dimension a collective takes for values of value_bytes bytes:
// a dense vector of it holds at most 2^63 bytes, so every size computed
// from it (dimension * value_bytes plus a header, windows rounded up) fits
// std::size_t. 2^60 for double. Checked once the ranks agree on the
// dimension, so that every rank throws; until then a rank past it reads
// nothing of its input.
constexpr std::size_t max_dimension(std::size_t value_bytes)
{
    return (std::size_t{1} << 63) / value_bytes;
}

// What is wrong with the dimension, or "".
inline std::string dimension_limit_violation(std::size_t dimension, std::size_t value_bytes)
{
    if (dimension <= max_dimension(value_bytes)) return {};
    return concat("dimension ", dimension, " is past the limit for values of ", value_bytes, " bytes, ",
                  max_dimension(value_bytes), " (a dense vector of it would hold over 2^63 bytes)");
}

inline void check_dimension_limit(std::size_t dimension, std::size_t value_bytes)
{
    if (auto why = dimension_limit_violation(dimension, value_bytes); !why.empty()) fail(why);
}

// What the ranks' vote on the dimension says besides: whether every rank
// passed full = true, and the highest rank whose setup failed (-1: none).
struct dimension_vote {
    bool all_full;
    int failed_setup;
};

// Throws sparse_reduce::error on every rank, naming the ranks at fault, when
// the ranks' dimensions differ; collective (one allreduce of 32 bytes),
// which also carries whether every rank passed full = true (a one-shot
// reduce asks whether every input holds every element) and whether some
// rank could not set its call up (failed: this rank, where it could not;
// else -1; the caller throws on every rank then).
inline dimension_vote vote_on_dimension(MPI_Comm comm, std::size_t dimension, int reference, bool full, int failed)
{
    const unsigned long long mine[4] = {dimension, ~static_cast<unsigned long long>(dimension), full ? 0ull : 1ull,
                                        static_cast<unsigned long long>(failed + 1)};
    unsigned long long all[4];
    MPI_Allreduce(mine, all, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm);
    if (all[0] != ~all[1]) fail(dimension_mismatch_text(comm, dimension, reference));
    return {all[2] == 0, static_cast<int>(all[3]) - 1};
}

inline bool agree_on_dimension(MPI_Comm comm, std::size_t dimension, int reference, bool full = false)
{
    return vote_on_dimension(comm, dimension, reference, full, -1).all_full;
}

} // namespace sparse_reduce::detail
