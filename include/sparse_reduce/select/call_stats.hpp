#pragma once
// What the ranks of a reduce agree on before choosing a tree: each rank's
// entries counted per block, the small statistics allreduce's contribution
// (entries, dimension, dense input, where the entries fall) and the call as
// selection sees it from the sums; and what must be the same on every rank
// (the root and the policy), checked in that same allreduce.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "../detail/exhaustive.hpp"
#include "../detail/fnv1a.hpp"
#include "../detail/value_equal.hpp"
#include "../error.hpp"
#include "../model/merged_size.hpp"
#include "../policy.hpp"
#include "../repr/representation.hpp"
#include "path.hpp"
#include "sreduce.hpp"
#include "tuning.hpp"

namespace sparse_reduce::detail {

// Entries per block of `grain` elements, into counts (a vector of
// uint32_t): the windows' counts (the node's choice of accumulator), and
// automatic's entry count and histogram, in one pass.
template <class T, class Counts>
void block_entries(Counts& counts, const auto& in, std::size_t dimension, std::size_t grain, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<decltype(in)>>;
    counts.assign((dimension + grain - 1) / grain, 0);
    if constexpr (R::kind == repr_kind::dense) {
        const auto d = R::read(in);
        for (std::size_t k = 0; k < counts.size(); ++k) {
            const std::size_t lo = k * grain, hi = std::min(dimension, lo + grain);
            std::uint32_t n = 0;
            for (std::size_t i = lo; i < hi; ++i) n += !same_value(d[i], id);
            counts[k] = n;
        }
    } else if constexpr (R::kind == repr_kind::index_value) {
        for (const auto i : R::indices(in))
            if (static_cast<std::size_t>(i) < dimension) ++counts[static_cast<std::size_t>(i) / grain];
    } else if constexpr (R::kind == repr_kind::rle) {
        rle::cursor<T> c(in.words().data(), in.words().size(), in.size());
        while (c.next())
            if (c.run == 0 && c.pos < dimension) ++counts[c.pos / grain];
    } else {
        static_assert(dependent_false<R>, "block_entries: a repr_kind without a count");
    }
}

// ---- what the ranks agree on before choosing a tree ----

inline constexpr std::size_t stats_grain = 1024;  // elements per counted block
inline constexpr std::size_t stats_buckets = 64;  // histogram of where entries fall

// Whether this call needs the small allreduce: not when every rank is known
// to have the same dimension and automatic's choice cannot depend on the
// counts (the caller hinted S and D, or the vector is below T_u^c, where
// Sreduce takes the binomial tree whatever the data).
template <class P>
bool stats_needed(const P& p, std::size_t dimension, std::size_t value_bytes, bool dimensions_agree)
{
    if (!needs_call_stats(p)) return false;
    if constexpr (std::is_same_v<P, policy::automatic>) {
        if (!dimensions_agree) return true;
        if (p.sparsity && p.distribution) return false;
        const tuning& t = p.tuned ? *p.tuned : current_tuning(p.tuning_file);
        return !t.limits.small(dimension, value_bytes);
    }
    return true;
}

// One rank's contribution to the statistics allreduce. Nothing but doubles,
// so the allreduce sums the struct as an array of them (MPI_DOUBLE, MPI_SUM).
struct local_summary {
    double entries = 0;
    double dimension = 0;
    double dense_input = 0;                        // 1: the input is a dense array
    std::array<double, stats_buckets> histogram{}; // where the entries fall in the index space

    local_summary& operator+=(const local_summary& o)
    {
        entries += o.entries;
        dimension += o.dimension;
        dense_input += o.dense_input;
        for (std::size_t b = 0; b < stats_buckets; ++b) histogram[b] += o.histogram[b];
        return *this;
    }
    bool operator==(const local_summary&) const = default;
};

// What the ranks must pass the same, summed in the same allreduce: the
// root, the policy and the dimension (in 16-bit limbs), each as x and x^2
// (P * sum(x^2) == sum(x)^2 exactly when every rank passed the same x, x
// below 2^20, so the sums stay exact in a double up to 8192 ranks); and how
// many ranks could not read the tuning or set the call up, and the sum of
// the latter's ranks (one-shot calls; a plan agreed on that when made).
inline constexpr int dimension_limbs = 4;
struct agreement_sums {
    double root = 0, root_squared = 0;
    double policy = 0, policy_squared = 0;
    double tuning = 0, tuning_squared = 0; // automatic's tuning (tuning_fingerprint); 0 for others
    double tuning_failures = 0;
    double setup_failures = 0, setup_failed_ranks = 0;
    double root_dense_output = 0; // 1 from the root when its output is dense: what the choice prices
    std::array<double, dimension_limbs> dimension{}, dimension_squared{};
};

// The statistics allreduce's whole message.
struct stats_message {
    local_summary summary;
    agreement_sums agreement;
    static constexpr int doubles = static_cast<int>((sizeof(local_summary) + sizeof(agreement_sums)) / sizeof(double));
};
static_assert(sizeof(stats_message) == stats_message::doubles * sizeof(double), "the message is an array of doubles");

// The modelled time of that allreduce (recursive doubling of its bytes).
inline double stats_allreduce_time(int ranks, const cost_model& m)
{
    int rounds = 0;
    while ((1 << rounds) < ranks) ++rounds;
    return rounds * (m.alpha + m.beta * static_cast<double>(sizeof(stats_message)));
}

// One rank's contribution: entries, dimension, dense input, histogram.
inline local_summary local_stats(double entries, std::size_t dimension, bool dense_input,
                                 std::span<const std::uint32_t> blocks, std::size_t grain)
{
    local_summary v;
    v.entries = entries;
    v.dimension = static_cast<double>(dimension);
    v.dense_input = dense_input;
    if (dimension)
        for (std::size_t b = 0; b < blocks.size(); ++b)
            if (blocks[b]) v.histogram[std::min(stats_buckets - 1, b * grain * stats_buckets / dimension)] += blocks[b];
    return v;
}

// A rank's local statistics for a call. When selection needs the entries
// (count), they are counted once per block of stats_grain elements; the
// blocks are kept, since the windows' counts are sums of them.
struct local_counts {
    std::vector<std::uint32_t> blocks;
    local_summary stats;
};
template <class T, representation In>
local_counts count_locally(const In& in, std::size_t dimension, const T& id, bool count)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    local_counts lc;
    double entries = static_cast<double>(stored_entries(in));
    if constexpr (R::kind == repr_kind::index_value) {
        // O(entries), not O(dimension): the histogram straight from the
        // indices (the windows' counts, if wanted, come from make_own_input).
        // Entries at every index are read as a dense array (make_own_input,
        // exec/program_input.hpp), so the model prices them as one.
        lc.stats = local_stats(entries, dimension, dimension > 0 && R::indices(in).size() == dimension, {}, 1);
        if (count && dimension)
            for (const auto i : R::indices(in))
                if (static_cast<std::size_t>(i) < dimension)
                    lc.stats.histogram[std::min(stats_buckets - 1, static_cast<std::size_t>(static_cast<double>(i) * stats_buckets /
                                                                                         static_cast<double>(dimension)))] += 1;
        return lc;
    }
    if (count) {
        block_entries<T>(lc.blocks, in, dimension, stats_grain, id);
        entries = 0;
        for (auto b : lc.blocks) entries += b;
    }
    lc.stats = local_stats(entries, dimension, repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense,
                           lc.blocks, stats_grain);
    return lc;
}

// A dense input's entries estimated from every sample_stride-th block of
// stats_grain elements: 1/32 of the pass that counts them. Where the input
// is too small for a sample (fewer than four blocks), -1.
inline constexpr std::size_t sample_stride = 32;
template <class T, representation In>
double sampled_entries(const In& in, std::size_t dimension, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    static_assert(R::kind == repr_kind::dense, "sampled_entries: for dense inputs");
    if (dimension < 4 * sample_stride * stats_grain) return -1;
    const auto d = R::read(in);
    std::size_t n = 0, seen = 0;
    for (std::size_t lo = 0; lo < dimension; lo += sample_stride * stats_grain) {
        const std::size_t hi = std::min(dimension, lo + stats_grain);
        for (std::size_t i = lo; i < hi; ++i) n += !same_value(d[i], id);
        seen += hi - lo;
    }
    return static_cast<double>(n) * static_cast<double>(dimension) / static_cast<double>(seen);
}

// A one-shot call's last local statistics of a dense input. Counting them is
// a pass over the whole input, as long as the reduction itself at low
// density (0.6 ms of a 1.9 ms drop-in at 2^21, 0.1%), so one-shot calls
// count as a plan does: on the first call and every `every` calls, and
// also when a sample of the input says its entries changed by more than 2x.
// Between, the call sends the kept summary in its allreduce (every call
// still agrees on root, policy and dimension there). Ranks may differ in
// whether they recount: the choice depends only on the sum, the same on all.
struct dense_stats_memo {
    local_summary local;
    double sampled = -1; // the sample when local was counted; -1: nothing kept
    unsigned calls = 0;

    // Whether the kept summary stands for an input whose sample is s.
    bool fits(double s, unsigned every)
    {
        if (sampled < 0 || s < 0 || every == 0 || ++calls >= every) return false;
        const double a = s + 1, b = sampled + 1; // +1: an all-identity sample
        return a <= 2 * b && b <= 2 * a;
    }
    void keep(const local_summary& l, double s)
    {
        local = l;
        sampled = s;
        calls = 0;
    }
};

// How often automatic recounts its statistics (k_ary{k = 0}: as automatic's default).
template <class P>
unsigned remeasure_interval(const P& p)
{
    if constexpr (requires { p.remeasure_every; }) return p.remeasure_every;
    else return policy::automatic{}.remeasure_every;
}

// A policy fingerprint's bits: x below 2^20 keeps the sum of x^2 over up to
// 8192 ranks below 2^53, exact in a double (agreement_sums).
inline constexpr int fingerprint_bits = 20;

// A policy as a number below 2^fingerprint_bits for agreement_sums.
template <class P>
double policy_fingerprint(const P& p)
{
    // over the fields that shape the schedule
    fnv1a h;
    const auto mix_value = [&](auto v) { h.mix_value(v); };
    mix_value(static_cast<int>(p.wire));
    mix_value(static_cast<std::uint64_t>(p.segment_bytes));
    if constexpr (std::is_same_v<P, policy::automatic>) {
        mix_value(p.sparsity ? *p.sparsity : -1.0);
        mix_value(p.distribution ? static_cast<int>(*p.distribution) : -1);
        mix_value(p.remeasure_every);
        // not the tuning's source: a file path may name a per-node copy
    } else if constexpr (requires { p.k; }) {
        mix_value(p.k);
    }
    return static_cast<double>(h.hash & ((std::uint64_t{1} << fingerprint_bits) - 1));
}
// A tuning's model and thresholds (not its source: per-node copies of one
// file agree) as a number below 2^fingerprint_bits for agreement_sums:
// automatic chooses from them, so ranks that read different ones could
// choose different paths and wait for each other.
inline double tuning_fingerprint(const tuning& t)
{
    fnv1a h;
    const cost_model& m = t.machine;
    for (double x : {m.alpha, m.beta, m.gamma, m.gamma_dense, m.value_bytes, m.index_bytes, m.header_bytes,
                     m.burst_bytes, t.limits.small_bytes, t.limits.sparse_bytes, t.limits.sparsity})
        h.mix_value(x);
    h.mix_value(static_cast<int>(m.merge));
    h.mix_value(t.limits.ranks_uniform);
    h.mix_value(t.limits.ranks_zipf);
    return static_cast<double>(h.hash & ((std::uint64_t{1} << fingerprint_bits) - 1));
}

inline constexpr const char* different_tunings_text =
    "the ranks read different tunings for policy::automatic (its choice must be the same on every rank: "
    "give every rank the same tuning file, or the same policy.tuned)";

inline agreement_sums agreement_of(int root, double fingerprint, std::size_t dimension, double tuning = 0)
{
    agreement_sums a{static_cast<double>(root), static_cast<double>(root) * root, fingerprint, fingerprint * fingerprint,
                     tuning, tuning * tuning};
    for (int l = 0; l < dimension_limbs; ++l) {
        const auto x = static_cast<double>((static_cast<std::uint64_t>(dimension) >> (16 * l)) & 0xffff);
        a.dimension[static_cast<std::size_t>(l)] = x;
        a.dimension_squared[static_cast<std::size_t>(l)] = x * x;
    }
    return a;
}
// Whether the summed agreement says every rank passed the same root and
// policy: every rank throws, or none. Returns whether the dimensions agree
// (naming the ranks that differ takes a collective of the caller's).
inline bool check_agreement(const agreement_sums& sum, int ranks)
{
    const auto same = [&](double s, double s2) { return static_cast<double>(ranks) * s2 == s * s; };
    if (!same(sum.root, sum.root_squared))
        fail("the ranks passed different roots to reduce (the root must be the same on every rank)");
    if (!same(sum.tuning, sum.tuning_squared)) fail(different_tunings_text);
    if (!same(sum.policy, sum.policy_squared))
        fail("the ranks passed different policies to reduce (the policy must be the same on every rank)");
    for (std::size_t l = 0; l < dimension_limbs; ++l)
        if (!same(sum.dimension[l], sum.dimension_squared[l])) return false;
    return true;
}

// Zipf when the lowest 1/64 of the index space holds more than
// zipf_head_share times its share of the entries (supports crowd the low
// indices).
inline constexpr double zipf_head_share = 4;

inline merge_model estimate_distribution(std::span<const double> histogram)
{
    double total = 0;
    for (double h : histogram) total += h;
    return total > 0 && histogram.front() > zipf_head_share * total / static_cast<double>(histogram.size())
               ? merge_model::zipf
               : merge_model::uniform;
}

// The call as selection sees it, from the summed local_stats of all ranks.
inline call_stats agreed_stats(const local_summary& sum, int ranks, std::size_t value_bytes, bool dense_output,
                               bool whole_messages = false)
{
    call_stats c;
    c.whole_messages = whole_messages;
    c.ranks = ranks;
    c.value_bytes = value_bytes;
    c.entries = sum.entries / ranks;
    c.dimension = static_cast<std::size_t>(sum.dimension / ranks + 0.5);
    c.dense_input = 2 * sum.dense_input >= ranks;
    c.dense_output = dense_output;
    c.distribution = estimate_distribution(sum.histogram);
    return c;
}

} // namespace sparse_reduce::detail
