#pragma once
// The α-β-γ cost model and the model of merged sizes.
//
//   a message of B bytes costs      alpha + beta * B   (on the receiver's link;
//                                                        a rank receives one at a time)
//   combining E entries costs       gamma * E
//   a partial result of E entries   min(E * (index + value bytes), C * value bytes)
//   travels as                      + header bytes      (the adaptive wire picks the smaller)
//
// Merged sizes: the expected number of non-identity entries of the union of
// vectors with n_1, ..., n_k entries in dimension C.
//   uniform   supports placed independently and uniformly at random:
//             C * (1 - prod (1 - n_i / C))
//   disjoint  no two supports overlap: min(C, sum n_i), the upper bound
// The defaults below are placeholders of the right order for shared memory;
// the tuner of the cost-model issue measures them on the machine.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>

namespace sparse_reduce {

enum class merge_model { uniform, disjoint };

struct cost_model {
    double alpha = 2e-6;         // seconds per message
    double beta = 1.0 / 5e9;     // seconds per byte
    double gamma = 1e-9;         // seconds per combined entry
    double value_bytes = 8;      // sizeof(T)
    double index_bytes = 4;      // wire offsets of a sparse block
    double header_bytes = 48;    // message header and one block header
    merge_model merge = merge_model::uniform;

    double message_bytes(double entries, double dimension) const
    {
        return header_bytes + std::min(entries * (index_bytes + value_bytes), dimension * value_bytes);
    }
    double message_time(double entries, double dimension) const
    {
        return alpha + beta * message_bytes(entries, dimension);
    }
};

// Expected entries of the union of supports with the given sizes.
inline double merged_entries(std::span<const double> nnz, double dimension, merge_model m)
{
    if (dimension <= 0) return 0;
    if (m == merge_model::disjoint) {
        double s = 0;
        for (double n : nnz) s += n;
        return std::min(s, dimension);
    }
    double log_empty = 0; // log of the probability that an index is in no support
    for (double n : nnz) {
        if (n >= dimension) return dimension;
        log_empty += std::log1p(-n / dimension);
    }
    return dimension * -std::expm1(log_empty);
}

// Makespan of receiving two messages on one link: they are taken in order of
// readiness (earliest release first is optimal for one machine).
inline double receive_two(double ready_a, double time_a, double ready_b, double time_b)
{
    if (ready_b < ready_a) {
        std::swap(ready_a, ready_b);
        std::swap(time_a, time_b);
    }
    return std::max(ready_a + time_a, ready_b) + time_b;
}

} // namespace sparse_reduce
