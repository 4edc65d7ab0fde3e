#pragma once
// allreduce's cost model (detail; collective/allreduce.hpp, doc/allreduce.md):
// the α-β-γ estimate of recursive doubling, reduce_broadcast and
// split-allgather from the mean entry count. automatic's choice among them
// is algorithms.hpp's.

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "../../model/cost.hpp"
#include "../../model/merged_size.hpp"
#include "partial_codec.hpp"

namespace sparse_reduce::detail {

// ---- the model automatic chooses with (doc/allreduce.md) ----

struct allreduce_estimate {
    double recursive_doubling, reduce_broadcast, split_allgather;
};
// P ranks, `entries` per rank (mean), dimension C, values of v bytes;
// `dense_output`: recursive doubling builds its result in the caller's dense
// output, where a partial folds densely from the start if the input holds
// dense_partial_entries, and split-allgather sends full inputs raw.
inline allreduce_estimate estimate_allreduce(int ranks, double entries, double dimension, double v,
                                             double segment_bytes, const cost_model& m, bool dense_output = false)
{
    const auto merged = [&](double k) { return std::min(dimension, merged_entries(k, entries, dimension, m.merge)); };
    const auto bytes = [&](double e) { return std::min(e * (m.index_bytes + v), dimension * v) + m.header_bytes; };
    const auto sparse = [&](double e) { return e * (m.index_bytes + v) < dimension * v; };
    const auto step_as = [&](double k, bool merges) { // send a partial of k inputs, merge two (or fold densely)
        const double e = merged(k);
        return m.alpha + m.beta * bytes(e) + (merges ? m.gamma * 2 * e : m.gamma_dense * dimension);
    };
    const auto step = [&](double k) { return step_as(k, sparse(merged(k))); };
    // Into a dense output the partial is dense from the start when the input
    // holds dimension / 64 entries (partial_of); otherwise it stays
    // index/value until that is larger, as without one (combine_partials).
    const bool dense_from_start = dense_output && entries * static_cast<double>(dense_output_partial_from) >= dimension;
    const auto rd_step = [&](double k) { return step_as(k, !dense_from_start && sparse(merged(k))); };
    int levels = 0;
    while ((1 << (levels + 1)) <= ranks) ++levels;
    const bool extra = (1 << levels) != ranks;
    double rd = 0, binomial = 0;
    for (int k = 0; k < levels; ++k) rd += rd_step(std::ldexp(extra ? 2.0 : 1.0, k));
    if (extra) rd += rd_step(1) + m.alpha + m.beta * bytes(merged(ranks)); // fold in, send back
    // reduce: a binomial tree's rounds, or a pipeline at ~ the result's bytes once per link
    int rounds = 0;
    while ((1 << rounds) < ranks) ++rounds;
    for (int k = 0; k < rounds; ++k) binomial += step(std::ldexp(1.0, k));
    const double result = bytes(merged(ranks));
    const double segments = std::max(1.0, std::ceil(result / segment_bytes));
    const double per_segment = m.alpha + m.beta * std::min(result, segment_bytes);
    const double pipelined = (segments + 2 * rounds) * per_segment + m.gamma_dense * dimension;
    const double broadcast = (segments + rounds - 1) * per_segment;
    // split-allgather: every rank sends (P-1)/P of its entries directly
    // (one message of wire blocks per peer), folds P pieces (pairwise while
    // sparse: log2 P passes over its share; in place once dense), then a
    // ring allgather of the reduced ranges; plus the sizes (an alltoall, an allgather).
    // Full inputs (every element present on every rank: the mean is the
    // dimension) travel raw: no block is encoded or decoded, a rank folds
    // P - 1 pieces of its share of C; into a dense output it receives the
    // others' shares where they go.
    const double P = ranks, share = (P - 1) / P, log_p = std::log2(std::max(P, 1.0));
    const bool raw = entries >= dimension, raw_gather = raw && dense_output;
    const double scatter = (P - 1) * m.alpha + m.beta * bytes(entries) * share +
                           (entries * (m.index_bytes + v) < dimension * v ? m.gamma * entries * log_p
                            : raw                                         ? m.gamma_dense * dimension * share
                                                                          : m.gamma_dense * dimension);
    const double u = merged(ranks);
    const double gather = (P - 1) * m.alpha + m.beta * bytes(u) * share +
                          (raw_gather                               ? 0
                           : u * (m.index_bytes + v) < dimension * v ? m.gamma * u
                                                                      : m.gamma_dense * dimension);
    const double counts = 2 * log_p * m.alpha;
    return {rd, std::min(binomial, pipelined) + broadcast, ranks > 1 ? scatter + gather + counts : 0};
}

} // namespace sparse_reduce::detail
