#pragma once
// sparse_reduce::reduce — MPI_Reduce for sparse vectors.
//
//   report reduce(comm, in, out, op, root [, policy]);
//   auto plan = make_plan(comm, root, dimension [, policy]);
//   report r = plan.reduce(in, out, op);
//
// in and out are any supported vectors (Eigen::SparseVector, Eigen dense,
// std::vector, std::span, index_value_vector, rle_vector), of the same value
// type. out is written on the root only, in the caller's type. A std::span
// pair is the dense drop-in: identity elements hidden in the buffer are found
// and left off the wire.
//
// Non-commutative operations (is_commutative_v false, the default for
// unknown types) are folded in rank order: every tree here has an
// order-preserving form, used as is, and its top forwards the result to any
// other root. Commutative operations get the tree rotated onto the root.
//
// Failure never hangs: if a rank's op throws, ranks disagree on the
// dimension, or a message is malformed, the error travels up the tree; the
// root throws sparse_reduce::error naming the rank where it happened, and so
// does the rank that detected it. An invalid root throws on every rank
// before anything is sent.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../error.hpp"
#include "../exec/mpi_executor.hpp"
#include "../exec/rank_program.hpp"
#include "../exec/reduce_node.hpp"
#include "../kernel/combine.hpp"
#include "../kernel/entry_stream.hpp"
#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../policy.hpp"
#include "../repr/representation.hpp"
#include "../report.hpp"
#include "../schedule/schedule.hpp"
#include "../select/sreduce.hpp"
#include "../select/tuning.hpp"
#include "../tree/binary.hpp"
#include "../tree/binomial.hpp"
#include "../tree/chain.hpp"
#include "../tree/k_ary.hpp"
#include "../tree/optimal_binary.hpp"
#include "../tree/two_tree.hpp"

namespace sparse_reduce {
namespace detail {

inline constexpr int default_k = 4;

template <class P> inline constexpr algorithm algorithm_of = algorithm::binomial;
template <> inline constexpr algorithm algorithm_of<policy::k_ary> = algorithm::k_ary;
template <> inline constexpr algorithm algorithm_of<policy::binary> = algorithm::binary;
template <> inline constexpr algorithm algorithm_of<policy::chain> = algorithm::chain;
template <> inline constexpr algorithm algorithm_of<policy::two_tree> = algorithm::two_tree;

// Entries per block of `grain` elements: the windows' counts (the node's
// choice of accumulator), and automatic's entry count and histogram, in one pass.
template <class T>
std::vector<std::uint32_t> block_entries(const auto& in, std::size_t dimension, std::size_t grain, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<decltype(in)>>;
    std::vector<std::uint32_t> counts((dimension + grain - 1) / grain, 0);
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
    } else {
        rle::cursor<T> c(in.words().data(), in.words().size(), in.size());
        while (c.next())
            if (c.run == 0 && c.pos < dimension) ++counts[c.pos / grain];
    }
    return counts;
}

inline stream_config make_stream_config(const schedule& s)
{
    stream_config cfg;
    cfg.dimension = s.dimension;
    cfg.segment_bytes = s.segment_bytes;
    cfg.window = s.window;
    cfg.format = s.format;
    cfg.window_stride = s.trees.size();
    return cfg;
}

// How a rank reads its own vector: the dense array when there is one, a
// reader over its entries, and its entries per window (summed from finer
// blocks counted already, when they divide the window).
template <representation In, class T>
auto make_own_input(const In& in, const stream_config& cfg, const T& id, bool count_windows,
                    std::span<const std::uint32_t> blocks = {}, std::size_t grain = 0)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    own_input<T, decltype(make_reader(in, id))> own{nullptr, make_reader(in, id), {}};
    if constexpr (R::kind == repr_kind::dense) own.dense = R::read(in).data();
    if (!count_windows) return own;
    if (grain && cfg.window % grain == 0 && !blocks.empty()) {
        own.window_entries.assign(cfg.windows(), 0);
        for (std::size_t b = 0; b < blocks.size(); ++b) // empty blocks skipped: a sparse call has mostly those
            if (blocks[b]) own.window_entries[b * grain / cfg.window] += blocks[b];
    } else {
        own.window_entries = block_entries<T>(in, cfg.dimension, cfg.window, id);
    }
    return own;
}

// ---- what the ranks agree on before choosing a tree ----

inline constexpr std::size_t stats_grain = 1024;  // elements per counted block
inline constexpr std::size_t stats_buckets = 64;  // histogram of where entries fall

template <class P>
bool needs_call_stats(const P& p)
{
    if constexpr (std::is_same_v<P, policy::automatic>) return true; // also when hinted: the ranks must agree on C
    else if constexpr (std::is_same_v<P, policy::k_ary>) return p.k <= 0;
    else return false;
}

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
        return static_cast<double>(dimension) * static_cast<double>(value_bytes) >= t.limits.small_bytes;
    }
    return true;
}

// The modelled time of that allreduce (recursive doubling of its 536 bytes).
inline double stats_allreduce_time(int ranks, const cost_model& m)
{
    int rounds = 0;
    while ((1 << rounds) < ranks) ++rounds;
    return rounds * (m.alpha + m.beta * 8 * (3 + stats_buckets));
}

// One rank's contribution: entries, dimension, dense input, histogram.
inline std::vector<double> local_stats(double entries, std::size_t dimension, bool dense_input,
                                       std::span<const std::uint32_t> blocks, std::size_t grain)
{
    std::vector<double> v(3 + stats_buckets, 0);
    v[0] = entries;
    v[1] = static_cast<double>(dimension);
    v[2] = dense_input;
    if (dimension)
        for (std::size_t b = 0; b < blocks.size(); ++b)
            if (blocks[b]) v[3 + std::min(stats_buckets - 1, b * grain * stats_buckets / dimension)] += blocks[b];
    return v;
}

// A rank's local statistics for a call. When selection needs the entries
// (count), they are counted once per block of stats_grain elements; the
// blocks are kept, since the windows' counts are sums of them.
struct local_counts {
    std::vector<std::uint32_t> blocks;
    std::vector<double> stats;
};
template <class T, representation In>
local_counts count_locally(const In& in, std::size_t dimension, const T& id, bool count)
{
    local_counts lc;
    double entries = static_cast<double>(stored_entries(in));
    if (count) {
        lc.blocks = block_entries<T>(in, dimension, stats_grain, id);
        entries = 0;
        for (auto b : lc.blocks) entries += b;
    }
    lc.stats = local_stats(entries, dimension, repr_traits<std::remove_cvref_t<In>>::kind == repr_kind::dense,
                           lc.blocks, stats_grain);
    return lc;
}

// Zipf when the lowest 1/64 of the index space holds more than four times
// its share of the entries (supports crowd the low indices).
inline merge_model estimate_distribution(std::span<const double> histogram)
{
    double total = 0;
    for (double h : histogram) total += h;
    return total > 0 && histogram.front() > 4 * total / static_cast<double>(histogram.size()) ? merge_model::zipf
                                                                                              : merge_model::uniform;
}

// The call as selection sees it, from the summed local_stats of all ranks.
inline call_stats agreed_stats(std::span<const double> sum, int ranks, std::size_t value_bytes, bool dense_output)
{
    call_stats c;
    c.ranks = ranks;
    c.value_bytes = value_bytes;
    c.entries = sum[0] / ranks;
    c.dimension = static_cast<std::size_t>(sum[1] / ranks + 0.5);
    c.dense_input = 2 * sum[2] >= ranks;
    c.dense_output = dense_output;
    c.distribution = estimate_distribution(sum.subspan(3));
    return c;
}

// The schedule a policy runs for a call. Everything here comes from values
// every rank agrees on (the policy, gathered counts), so all build the same.
template <reduce_policy Policy>
schedule resolve_schedule(const Policy& policy, int size, int root, bool commutative, std::size_t dimension,
                          std::size_t value_bytes, std::span<const double> nnz, call_stats stats)
{
    std::size_t segment = policy.segment_bytes;
    wire::format format = policy.wire;
    std::vector<tree> trees;
    std::string selection;
    if constexpr (std::is_same_v<Policy, policy::optimal_binary>) {
        trees = {optimal_binary_tree(nnz, static_cast<double>(dimension), root, commutative, {.model = policy.model}).t};
    } else if constexpr (std::is_same_v<Policy, policy::automatic>) {
        if (policy.sparsity)
            stats.entries = (1 - std::clamp(*policy.sparsity, 0.0, 1.0)) * static_cast<double>(stats.dimension);
        if (policy.distribution) stats.distribution = *policy.distribution;
        const choice ch = sreduce(stats, policy.tuned ? *policy.tuned : current_tuning(policy.tuning_file), policy.wire,
                                  policy.segment_bytes);
        trees = algorithm_trees(ch.algo, ch.k, size, root, commutative);
        segment = ch.segment_bytes;
        format = ch.wire;
        selection = "automatic: " + describe(ch);
    } else if constexpr (std::is_same_v<Policy, policy::k_ary>) {
        const int k = policy.k > 0 ? policy.k : model_k(stats, current_tuning().machine);
        trees = algorithm_trees(algorithm::k_ary, k, size, root, commutative);
    } else {
        trees = algorithm_trees(algorithm_of<Policy>, 0, size, root, commutative);
    }
    schedule s = make_schedule(std::move(trees), dimension, value_bytes, segment ? segment : default_segment_bytes,
                               format);
    s.selection = std::move(selection);
    return s;
}

} // namespace detail

template <reduce_policy Policy = policy::automatic>
class reduce_plan {
public:
    reduce_plan(const boost::mpi::communicator& comm, int root, std::size_t dimension, Policy policy = {})
        : comm_(comm), private_(detail::private_comm(MPI_Comm(comm))), root_(root), dimension_(dimension),
          policy_(policy)
    {
        if (root < 0 || root >= comm.size())
            detail::fail("invalid root " + std::to_string(root) + " for a communicator of size " +
                         std::to_string(comm.size()));
        if (detail::needs_call_stats(policy_)) {
            // Once per plan, together: is the tuning readable everywhere (a
            // rank that cannot read it must not leave the others waiting),
            // and do the ranks agree on C (then calls may skip the allreduce)?
            std::string tuning_error;
            try {
                if constexpr (std::is_same_v<Policy, policy::automatic>) {
                    if (!policy_.tuned) current_tuning(policy_.tuning_file);
                } else {
                    current_tuning();
                }
            } catch (const error& e) {
                tuning_error = e.what();
            }
            const long long mine[3] = {static_cast<long long>(dimension), -static_cast<long long>(dimension),
                                       tuning_error.empty() ? 0 : 1};
            long long all[3];
            MPI_Allreduce(mine, all, 3, MPI_LONG_LONG, MPI_MAX, private_);
            if (all[2]) detail::fail(tuning_error.empty() ? "the tuning could not be read on another rank" : tuning_error);
            dimensions_agree_ = all[0] == -all[1];
        }
    }

    int root() const { return root_; }
    std::size_t dimension() const { return dimension_; }
    const Policy& policy() const { return policy_; }

    // What reduce runs for values of value_bytes bytes when this rank holds
    // local_entries entries. Collective for optimal_binary (an allgather of
    // the entry counts), automatic and k_ary{k = 0} (a small allreduce);
    // rebuilt only when what the ranks agree on changes.
    const schedule& schedule_for(bool commutative, std::size_t value_bytes, std::size_t local_entries = 0)
    {
        const auto stats = detail::local_stats(static_cast<double>(local_entries), dimension_, false, {}, 1);
        return resolve(commutative, value_bytes, stats, true);
    }
    const tree& tree_for(bool commutative, std::size_t local_entries = 0)
    {
        return schedule_for(commutative, 8, local_entries).trees.front();
    }

    template <representation In, representation Out, class Op>
        requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>> &&
                 wire::wire_value<value_type_of<In>>
    report reduce(const In& in, Out&& out, const Op& op)
    {
        using T = value_type_of<In>;
        using RO = repr_traits<std::remove_cvref_t<Out>>;
        constexpr bool commutative = is_commutative_v<Op, T>;
        if constexpr (!rle_value<T>)
            if (policy_.wire == wire::rle) detail::fail("the rle wire format needs float or double values");

        const int me = comm_.rank();
        const T id = identity<T>(op);
        const bool local_ok = sparse_reduce::dimension(in) == dimension_;
        const bool count = detail::stats_needed(policy_, dimension_, sizeof(T), dimensions_agree_) && local_ok;
        const auto counts = detail::count_locally(in, dimension_, id, count);
        const schedule& sched = resolve(commutative, sizeof(T), counts.stats, RO::kind == repr_kind::dense);
        const detail::stream_config cfg = detail::make_stream_config(sched);

        using reader_t = decltype(detail::make_reader(in, id));
        const auto own = detail::make_own_input(in, cfg, id, local_ok, counts.blocks, detail::stats_grain);
        const bool destination = me == root_;
        T* dense_out = nullptr;
        if constexpr (RO::kind == repr_kind::dense)
            if (destination) dense_out = RO::output(out, dimension_).data();
        const std::string local_failure =
            local_ok ? std::string()
                     : "dimension mismatch: rank " + std::to_string(me) + " has dimension " +
                           std::to_string(sparse_reduce::dimension(in)) + ", the plan has " + std::to_string(dimension_);
        detail::rank_program<T, Op, reader_t> program(sched.trees, me, cfg, op, own, dense_out, pools_, local_failure);
        detail::run_nodes(private_, program.bindings());

        report rep;
        rep.algorithm = describe(sched);
        rep.bytes_sent = program.bytes_sent();
        rep.bytes_received = program.bytes_received();
        rep.messages_sent = program.messages_sent();
        program.throw_if_failed(destination);
        if constexpr (RO::kind != repr_kind::dense)
            if (destination) program.write_sparse_output(out, dimension_, id);
        return rep;
    }

private:
    // The call's one small collective, then the cached schedule or a new one.
    const schedule& resolve(bool commutative, std::size_t value_bytes, const std::vector<double>& local, bool dense_output)
    {
        auto& cached = cache_[commutative ? 1 : 0];
        if constexpr (std::is_same_v<Policy, policy::automatic>) {
            // Between measurements the plan keeps its choice: every rank
            // counts the same calls, so all keep or all measure.
            auto& calls = calls_since_measure_[commutative ? 1 : 0];
            if (cached && policy_.remeasure_every > 0 && cached->first.end()[-2] == static_cast<double>(value_bytes) &&
                cached->first.back() == static_cast<double>(dense_output) && ++calls % policy_.remeasure_every != 0)
                return cached->second;
            calls = 0;
        }
        std::vector<double> nnz, agreed;
        bool reduced = false; // agreed starts with the summed local statistics
        if constexpr (std::is_same_v<Policy, policy::optimal_binary>) {
            nnz = gather_entries(static_cast<std::size_t>(local[0]));
            agreed = nnz;
        } else if (detail::stats_needed(policy_, dimension_, value_bytes, dimensions_agree_)) {
            reduced = true;
            agreed.resize(local.size());
            MPI_Allreduce(local.data(), agreed.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, private_);
        }
        agreed.push_back(static_cast<double>(value_bytes));
        agreed.push_back(dense_output);
        if (!cached || cached->first != agreed) {
            call_stats stats;
            if (reduced) {
                stats = detail::agreed_stats({agreed.data(), local.size()}, comm_.size(), value_bytes, dense_output);
            } else { // no allreduce: this rank's view, which is all the choice depends on
                stats = detail::agreed_stats(local, 1, value_bytes, dense_output);
                stats.ranks = comm_.size();
            }
            double dimension = static_cast<double>(dimension_);
            if constexpr (std::is_same_v<Policy, policy::optimal_binary>) {
                dimension = nnz.back();
                nnz.pop_back();
            }
            cached.emplace(agreed, detail::resolve_schedule(policy_, comm_.size(), root_, commutative,
                                                           static_cast<std::size_t>(dimension), value_bytes, nnz, stats));
            // a plan streams its own dimension, whatever optimal_binary's gather said
            cached->second.dimension = dimension_;
        }
        return cached->second;
    }

    // Every rank's entry count, then the largest dimension, by one
    // allgather on the private communicator.
    std::vector<double> gather_entries(std::size_t local)
    {
        const unsigned long long mine[2] = {local, dimension_};
        std::vector<unsigned long long> all(2 * static_cast<std::size_t>(comm_.size()));
        MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all.data(), 2, MPI_UNSIGNED_LONG_LONG, private_);
        std::vector<double> out;
        unsigned long long dimension = 0;
        for (std::size_t r = 0; r < all.size(); r += 2) {
            out.push_back(static_cast<double>(all[r]));
            dimension = std::max(dimension, all[r + 1]);
        }
        out.push_back(static_cast<double>(dimension));
        return out;
    }

    boost::mpi::communicator comm_;
    MPI_Comm private_;
    int root_;
    std::size_t dimension_;
    Policy policy_;
    bool dimensions_agree_ = false;
    unsigned calls_since_measure_[2] = {0, 0};
    std::optional<std::pair<std::vector<double>, schedule>> cache_[2];
    std::vector<detail::node_buffers> pools_; // per tree: its node, and its forward receiver
};

template <reduce_policy Policy = policy::automatic>
reduce_plan<Policy> make_plan(const boost::mpi::communicator& comm, int root, std::size_t dimension, Policy policy = {})
{
    return reduce_plan<Policy>(comm, root, dimension, policy);
}

template <representation In, representation Out, class Op, reduce_policy Policy = policy::automatic>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
report reduce(const boost::mpi::communicator& comm, const In& in, Out&& out, const Op& op, int root, Policy policy = {})
{
    return make_plan(comm, root, dimension(in), policy).reduce(in, std::forward<Out>(out), op);
}

} // namespace sparse_reduce
