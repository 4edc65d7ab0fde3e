#pragma once
// Sreduce (Sreduce draft, n.d., Algorithm 1; doc/references.md): which tree,
// segment size and wire format for a call, from P, C, S and D.
//
//   C * value_bytes < T_u^c                          binomial tree
//                                                    (latency-bound)
//   C * value_bytes < T_s^c and S > T_s and
//     P < T_u^p (uniform) / T_z^p (zipf)             binomial tree with
//                                                    local pipelining
//                                                    (sparse partial results
//                                                    stay small up the tree)
//   otherwise                                        the calibrated model
//                                                    (schedule/predict.hpp)
//                                                    picks among binomial,
//                                                    k-ary (k after Heikkinen),
//                                                    binary, chain and the
//                                                    two trees
//
// The segment size is the model's best of a few candidates in every case
// (unless the caller fixed one). The wire format is the caller's; where it
// is adaptive (the default, which picks dense, index/value, RLE or the
// bitmap per block) the model also weighs the dense wire: on a fast network a sparse
// merge (γ per entry) can cost more than sending the window dense (β per
// byte) and folding it densely (γ_dense per element), and then a dense
// pipeline wins even on sparse data.

#include <algorithm>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "../kernel/fold_rule.hpp"
#include "../model/k_ary.hpp"
#include "../schedule/predict.hpp"
#include "../policy.hpp"
#include "../schedule/schedule.hpp"
#include "path.hpp"
#include "tree_table.hpp"
#include "tuning.hpp"

namespace sparse_reduce {

// What selection knows of a call: the same on every rank (from one small
// allreduce, or the caller's hints).
struct call_stats {
    int ranks = 1;
    std::size_t dimension = 0;
    std::size_t value_bytes = 8;
    double entries = 0; // mean non-identity entries per rank
    merge_model distribution = merge_model::uniform;
    bool dense_input = false;
    bool dense_output = true;
    // The call may send one message per tree edge (sparse inputs under the
    // adaptive wire, exec/whole_reduce.hpp): no pipelining, one tree. At
    // P > 2 sreduce weighs the windowed pipeline against it.
    bool whole_messages = false;

    double sparsity() const // S: the fraction of identity elements
    {
        return dimension ? 1 - std::min(1.0, entries / static_cast<double>(dimension)) : 1;
    }
    workload load() const { return {entries, dense_input, dense_output}; }
};

struct choice {
    algorithm algo = algorithm::binomial;
    int k = 0; // for k_ary
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    bool whole = false;   // whole messages (call_stats::whole_messages), not windows
    double predicted = 0; // modelled seconds
    std::string rule;     // why, in the rule's symbols, e.g. "C < T_c (small vector)"
    std::string reason;   // why, in words, e.g. "binomial tree: the vector is small, so latency decides"
};

namespace detail {

inline schedule make_schedule(std::vector<tree> trees, std::size_t dimension, std::size_t value_bytes,
                              std::size_t segment_bytes, wire::format format, bool bitmap = true)
{
    check_segment(nullptr, "segment_bytes", segment_bytes);
    schedule s;
    s.trees = std::move(trees);
    s.dimension = dimension;
    s.segment_bytes = segment_bytes;
    s.window = std::max<std::size_t>(1, std::min(segment_bytes, max_window_bytes) / value_bytes);
    s.format = format;
    s.bitmap = bitmap;
    return s;
}

} // namespace detail

/// @cond INTERNAL
// Heikkinen's (n.d.) branching factor for this call: the per-step overhead is a
// message's latency, the per-item cost a leaf's message and its fold.
inline int model_k(const call_stats& c, const cost_model& m)
{
    const double C = static_cast<double>(c.dimension), vb = static_cast<double>(c.value_bytes);
    cost_model mv = m;
    mv.value_bytes = vb;
    const double bytes = mv.message_bytes(c.entries, C);
    const bool dense = detail::folds_densely(c.entries, C);
    const double per_item = m.beta * bytes + (dense ? m.gamma_dense * C : m.gamma * c.entries);
    return best_k_ary(std::max(2, c.ranks), m.alpha, per_item);
}

// A candidate replaces the best so far only below this fraction of its
// modelled time: the model's resolution is about 5%, and ties go to the
// earlier (simpler) candidate.
inline constexpr double model_win_factor = 0.95;

// The default first: another size must be 5% better in the model (which
// does not charge the per-window costs of small segments) to be taken. No
// larger sizes: without pipelining the model is optimistic (it missed by
// 22-28% with 2 MiB on simulated 10 GbE).
inline constexpr std::size_t segment_candidates[] = {default_segment_bytes, 32 * 1024, 512 * 1024};

// The model's time for one algorithm, with the best candidate segment size
// (or the caller's).
inline choice best_segment(const call_stats& c, const cost_model& model, algorithm a, int k, wire::format wire,
                           std::size_t segment_bytes, int root = 0)
{
    cost_model m = model;
    m.value_bytes = static_cast<double>(c.value_bytes);
    m.merge = c.distribution;
    const merged_size_fn merged(c.entries, static_cast<double>(c.dimension), c.distribution);
    auto trees = detail::algorithm_trees(a, k, c.ranks, root, true);
    choice best{a, k, wire, 0, c.whole_messages, std::numeric_limits<double>::infinity(), {}, {}};
    auto consider = [&](std::size_t seg) {
        const double t = predicted_time(detail::make_schedule(trees, c.dimension, c.value_bytes, seg, wire, m.bitmap_pays()),
                                      c.load(), m, merged);
        if (t < (best.segment_bytes ? model_win_factor : 1.0) * best.predicted) {
            best.predicted = t;
            best.segment_bytes = seg;
        }
    };
    if (c.whole_messages) { // every stream is one message, whatever the segment
        consider(max_segment_bytes - 1);
        best.segment_bytes = segment_bytes ? segment_bytes : default_segment_bytes;
    } else if (segment_bytes) {
        consider(segment_bytes);
    } else {
        for (std::size_t seg : segment_candidates) consider(seg);
    }
    return best;
}
/// @endcond

namespace detail {

inline choice sreduce_one_path(const call_stats& c, const tuning& tune, wire::format wire, std::size_t segment_bytes)
{
    const thresholds& th = tune.limits;
    const double bytes = static_cast<double>(c.dimension) * static_cast<double>(c.value_bytes);
    const bool zipf = c.distribution == merge_model::zipf;
    if (th.small(c.dimension, c.value_bytes)) {
        // No search: a plan's call below T_c measures nothing (each rank
        // chooses from its own counts), so nothing here may depend on them.
        choice ch = best_segment(c, tune.machine, algorithm::binomial, 0, wire,
                                 segment_bytes ? segment_bytes : default_segment_bytes);
        ch.rule = "C < T_c (small vector)";
        ch.reason = "binomial tree: the vector is small, so latency decides";
        return ch;
    }
    if (bytes < th.sparse_bytes && c.sparsity() > th.sparsity && c.ranks < (zipf ? th.ranks_zipf : th.ranks_uniform)) {
        choice ch = best_segment(c, tune.machine, algorithm::binomial, 0, wire, segment_bytes);
        ch.rule = std::string("C < T_s^c, S > T_s, P < ") + (zipf ? "T_z^p (sparse, zipf)" : "T_u^p (sparse, uniform)");
        ch.reason = "binomial tree: the data is sparse and the ranks few";
        return ch;
    }
    // In order of simplicity: a later tree must win by more than the
    // model's resolution (5%) to be taken.
    const int k = model_k(c, tune.machine);
    choice best;
    best.predicted = std::numeric_limits<double>::infinity();
    // Whole messages keep the adaptive wire and run one tree (the first).
    // Dense first: the adaptive wire must win by the model's resolution. The
    // model prices its blocks as index/value, dense or (where it pays) the
    // bitmap, but where those come out alike (dense enough inputs on a fast
    // link, no bitmap) the encoder picks RLE for a few percent
    // fewer bytes and costs 3-4x the time on a fast link (doc/benchmarks.md,
    // "Adaptive blocks at high density").
    const wire::format callers[] = {wire}, either[] = {wire::dense, wire::adaptive};
    const bool both = wire == wire::adaptive && !c.whole_messages;
    for (wire::format w : both ? std::span<const wire::format>(either) : std::span<const wire::format>(callers))
        for (const detail::tree_algorithm& row : detail::tree_algorithms) { // the table's order
            if (c.ranks < row.min_ranks || (c.whole_messages && row.id == algorithm::two_tree)) continue;
            const choice ch = best_segment(c, tune.machine, row.id, k, w, segment_bytes);
            if (ch.predicted < model_win_factor * best.predicted) best = ch;
        }
    best.rule = "model (no threshold rule fits)";
    best.reason = to_string(best.algo) + std::string(": the cost model predicts it fastest for this size, "
                                                     "sparsity and number of ranks");
    return best;
}

} // namespace detail

/// Sreduce's choice for a call: the threshold rules, else the cost model's
/// fastest tree, wire and segment size. A call that may travel whole
/// (c.whole_messages) keeps whole messages unless, at P > 2, the windowed
/// pipeline wins by the model's resolution: whole messages do not pipeline,
/// so on a slow link a deep tree's hops add up (at P = 8, 1 Gbit/s, full
/// density: 463 ms modelled whole, 315 windowed). Where the executor does not
/// ask (select/path.hpp: P <= 2 runs whole messages at once) nothing is
/// weighed; below T_c a plan's ranks choose from their own counts, so they
/// keep whole messages too.
inline choice sreduce(const call_stats& c, const tuning& tune, wire::format wire = wire::adaptive,
                      std::size_t segment_bytes = 0)
{
    choice ch = detail::sreduce_one_path(c, tune, wire, segment_bytes);
    if (!c.whole_messages || !detail::whole_is_weighed(c.ranks) || tune.limits.small(c.dimension, c.value_bytes))
        return ch; // small: chosen from local counts, so no weighing
    call_stats windowed_call = c;
    windowed_call.whole_messages = false;
    choice windowed = detail::sreduce_one_path(windowed_call, tune, wire, segment_bytes);
    if (windowed.predicted < model_win_factor * ch.predicted) {
        windowed.reason += "; windows, not whole messages: the pipeline is faster here";
        return windowed;
    }
    return ch;
}

/// The choice as text: the algorithm (with k for k_ary) and the rule that picked it.
inline std::string describe(const choice& ch)
{
    if (detail::row_of(ch.algo).branching) return detail::concat(to_string(ch.algo), "(k=", ch.k, ") by ", ch.rule);
    return detail::concat(to_string(ch.algo), " by ", ch.rule);
}

} // namespace sparse_reduce
