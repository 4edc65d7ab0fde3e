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
// `dense_wire`: every block travels dense (wire::dense), C v bytes per
// partial; a sparse partial then decodes every element of what it gets
// (γ C), and split-allgather sends raw any range with an entry (goes_raw),
// not only full ones.
// The sizes the estimates price: the entries of a partial of k inputs, its
// bytes on the wire, and the form each side holds it in.
struct allreduce_sizes {
    double entries, dimension, v;
    cost_model m, mv; // mv: m with value_bytes = v
    bool dense_wire;

    allreduce_sizes(double entries_, double dimension_, double v_, const cost_model& m_, bool dense_wire_)
        : entries(entries_), dimension(dimension_), v(v_), m(m_), mv(m_), dense_wire(dense_wire_)
    {
        mv.value_bytes = v;
    }
    double merged(double k) const { return std::min(dimension, merged_entries(k, entries, dimension, m.merge)); }
    double bytes(double e) const
    {
        return (dense_wire ? dimension * v : mv.payload_bytes(e, dimension)) + m.header_bytes;
    }
    // blocks that are not dense (index/value or bitmap: folded per entry)
    bool sparse(double e) const { return mv.payload_bytes(e, dimension) < dimension * v; }
    // a partial that merges: held index/value while that is smaller than dense
    bool listed(double e) const { return e * (m.index_bytes + v) < dimension * v; }
    // a partial held index/value (8-byte indices: partial_codec.hpp)
    bool sparse_partial(double e) const { return e * (8 + v) < dimension * v; }
};

// split-allgather: every rank sends (P-1)/P of its entries directly
// (one message of wire blocks per peer), folds P pieces (pairwise while
// sparse: log2 P passes over its share, and γ per entry for encoding and
// decoding its index/value blocks, as in recursive doubling's dense
// partials; in place once dense), then a
// ring allgather of the reduced ranges; plus the sizes: a word between
// every pair of members before each half, posted at once (priced as
// 2 log2 P latencies).
// Raw inputs (full ones: the mean is the dimension; with the dense wire,
// any) travel as they lie: no block is encoded or decoded, a rank folds
// P - 1 pieces of its share of C into a dense accumulator; into a dense
// output it receives the others' shares where they go.
inline double split_allgather_time(const allreduce_sizes& z, int ranks, bool dense_output)
{
    const cost_model& m = z.m;
    const double entries = z.entries, dimension = z.dimension;
    const bool dense_wire = z.dense_wire;
    const double P = ranks, share = (P - 1) / P, log_p = std::log2(std::max(P, 1.0));
    const auto goes_raw = [&](double e) { return e >= dimension || (dense_wire && e > 0); };
    const bool raw = goes_raw(entries);
    const double u = z.merged(ranks);
    const bool dense_acc = raw || !z.sparse_partial(u); // the dense wire's accumulator
    const double scatter_fold = dense_wire ? (raw         ? m.gamma_dense * dimension * share
                                              : dense_acc ? m.gamma_dense * dimension
                                                          : m.gamma * (dimension + entries * log_p))
                                : z.sparse(entries) ? m.gamma * entries * (log_p + 1)
                                : raw               ? m.gamma_dense * dimension * share
                                                    : m.gamma_dense * dimension;
    const double scatter = (P - 1) * m.alpha + m.beta * z.bytes(entries) * share + scatter_fold;
    const bool raw_gather = (dense_wire ? goes_raw(u) : raw) && dense_output;
    const double gather = (P - 1) * m.alpha + m.beta * z.bytes(u) * share +
                          (raw_gather                                  ? 0
                           : dense_wire  ? (dense_acc ? m.gamma_dense * dimension : m.gamma * dimension)
                           : z.sparse(u) ? m.gamma * u
                                         : m.gamma_dense * dimension);
    const double counts = 2 * log_p * m.alpha;
    return ranks > 1 ? scatter + gather + counts : 0;
}

inline allreduce_estimate estimate_allreduce(int ranks, double entries, double dimension, double v,
                                             double segment_bytes, const cost_model& m, bool dense_output = false,
                                             bool dense_wire = false)
{
    const allreduce_sizes z(entries, dimension, v, m, dense_wire);
    // Folding what arrives: a sparse partial merges (2γ per entry; with the
    // dense wire it first decodes every element, γ C); a dense one folds
    // densely (γ_dense C), and index/value blocks cost it γ per entry more
    // (encoded from a dense array, scattered into one: perf at 50 %, P = 2,
    // 2^18, they are 40 % of the call).
    const auto fold = [&](double e, bool merges) {
        if (merges) return 2 * m.gamma * e + (dense_wire ? m.gamma * dimension : 0);
        return m.gamma_dense * dimension + (!dense_wire && z.sparse(e) ? m.gamma * e : 0);
    };
    const auto step_as = [&](double k, bool merges) { // send a partial of k inputs, merge two (or fold densely)
        const double e = z.merged(k);
        return m.alpha + m.beta * z.bytes(e) + fold(e, merges);
    };
    const auto step = [&](double k) { return step_as(k, z.listed(z.merged(k))); };
    // Into a dense output the partial is dense from the start when the input
    // holds dimension / 64 entries (partial_of); otherwise it stays
    // index/value until that is larger, as without one (combine_partials).
    const bool dense_from_start = dense_output && entries * static_cast<double>(dense_output_partial_from) >= dimension;
    const auto rd_step = [&](double k) {
        return step_as(k, !dense_from_start && (dense_wire ? z.sparse_partial(z.merged(k)) : z.listed(z.merged(k))));
    };
    int levels = 0;
    while ((1 << (levels + 1)) <= ranks) ++levels;
    const bool extra = (1 << levels) != ranks;
    double rd = 0, binomial = 0;
    for (int k = 0; k < levels; ++k) rd += rd_step(std::ldexp(extra ? 2.0 : 1.0, k));
    if (extra) rd += rd_step(1) + m.alpha + m.beta * z.bytes(z.merged(ranks)); // fold in, send back
    // reduce: a binomial tree's rounds, or a pipeline at ~ the result's bytes once per link
    int rounds = 0;
    while ((1 << rounds) < ranks) ++rounds;
    for (int k = 0; k < rounds; ++k) binomial += step(std::ldexp(1.0, k));
    const double result = z.bytes(z.merged(ranks));
    const double segments = std::max(1.0, std::ceil(result / segment_bytes));
    const double per_segment = m.alpha + m.beta * std::min(result, segment_bytes);
    const double pipelined = (segments + 2 * rounds) * per_segment + m.gamma_dense * dimension;
    const double broadcast = (segments + rounds - 1) * per_segment;
    return {rd, std::min(binomial, pipelined) + broadcast, split_allgather_time(z, ranks, dense_output)};
}

} // namespace sparse_reduce::detail
