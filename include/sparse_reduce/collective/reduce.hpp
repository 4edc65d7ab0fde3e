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
#include "../tree/binary.hpp"
#include "../tree/binomial.hpp"
#include "../tree/chain.hpp"
#include "../tree/k_ary.hpp"
#include "../tree/optimal_binary.hpp"
#include "../tree/two_tree.hpp"

namespace sparse_reduce {
namespace detail {

inline constexpr int default_k = 4;

// The trees of a policy: one, or two that share the windows (two_tree).
inline std::vector<tree> build_trees(const policy::binomial&, int size, int root, bool commutative)
{
    return {binomial_tree(size, root, commutative)};
}
inline std::vector<tree> build_trees(const policy::k_ary& p, int size, int root, bool commutative)
{
    return {k_ary_tree(size, root, commutative, p.k > 0 ? p.k : default_k)};
}
inline std::vector<tree> build_trees(const policy::binary&, int size, int root, bool commutative)
{
    return {binary_tree(size, root, commutative)};
}
inline std::vector<tree> build_trees(const policy::chain&, int size, int root, bool commutative)
{
    return {chain_tree(size, root, commutative)};
}
inline std::vector<tree> build_trees(const policy::two_tree&, int size, int root, bool commutative)
{
    const auto t = two_trees(size, root, commutative);
    return {t[0], t[1]};
}
// Until the cost model chooses: the binomial tree, whose depth is optimal
// for latency and whose local pipelining covers large vectors.
inline std::vector<tree> build_trees(const policy::automatic&, int size, int root, bool commutative)
{
    tree t = binomial_tree(size, root, commutative);
    t.name = "automatic: " + t.name;
    return {t};
}

template <class T>
std::vector<std::uint32_t> window_entries(const auto& in, const stream_config& cfg, const T& id)
{
    using R = repr_traits<std::remove_cvref_t<decltype(in)>>;
    std::vector<std::uint32_t> counts(cfg.windows(), 0);
    if constexpr (R::kind == repr_kind::dense) {
        const auto d = R::read(in);
        for (std::size_t k = 0; k < counts.size(); ++k) {
            const std::size_t lo = k * cfg.window, hi = lo + cfg.window_length(k);
            std::uint32_t n = 0;
            for (std::size_t i = lo; i < hi; ++i) n += !same_value(d[i], id);
            counts[k] = n;
        }
    } else if constexpr (R::kind == repr_kind::index_value) {
        for (const auto i : R::indices(in))
            if (static_cast<std::size_t>(i) < cfg.dimension) ++counts[static_cast<std::size_t>(i) / cfg.window];
    } else {
        rle::cursor<T> c(in.words().data(), in.words().size(), in.size());
        while (c.next())
            if (c.run == 0 && c.pos < cfg.dimension) ++counts[c.pos / cfg.window];
    }
    return counts;
}

template <reduce_policy Policy>
stream_config make_stream_config(const Policy& policy, std::size_t dimension, std::size_t value_bytes, std::size_t ntrees)
{
    stream_config cfg;
    cfg.dimension = dimension;
    cfg.segment_bytes = policy.segment_bytes ? policy.segment_bytes : default_segment_bytes;
    cfg.window = std::max<std::size_t>(1, cfg.segment_bytes / value_bytes);
    cfg.format = policy.wire;
    cfg.window_stride = ntrees;
    return cfg;
}

// How a rank reads its own vector: the dense array when there is one, a
// reader over its entries, and its entries per window.
template <representation In, class T>
auto make_own_input(const In& in, const stream_config& cfg, const T& id, bool count_windows)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    own_input<T, decltype(make_reader(in, id))> own{nullptr, make_reader(in, id), {}};
    if constexpr (R::kind == repr_kind::dense) own.dense = R::read(in).data();
    if (count_windows) own.window_entries = window_entries<T>(in, cfg, id);
    return own;
}

// The trees of a policy for this call; optimal_binary needs every rank's
// entry count and the dimension they agree on.
template <reduce_policy Policy>
std::vector<tree> trees_of(const Policy& policy, int size, int root, bool commutative, std::span<const double> nnz,
                           double dimension)
{
    if constexpr (std::is_same_v<Policy, policy::optimal_binary>)
        return {optimal_binary_tree(nnz, dimension, root, commutative, {.model = policy.model}).t};
    else
        return build_trees(policy, size, root, commutative);
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
    }

    int root() const { return root_; }
    std::size_t dimension() const { return dimension_; }
    const Policy& policy() const { return policy_; }

    // The tree used for operations of the given commutativity (built once;
    // optimal_binary rebuilds it when the ranks' entry counts change; the
    // first of the two for two_tree).
    const tree& tree_for(bool commutative, std::size_t local_entries = 0)
    {
        return trees_for(commutative, local_entries).front();
    }

    // What reduce runs for values of value_bytes bytes (collective for
    // optimal_binary, which gathers the entry counts).
    schedule schedule_for(bool commutative, std::size_t value_bytes, std::size_t local_entries = 0)
    {
        schedule s;
        s.trees = trees_for(commutative, local_entries);
        const auto cfg = detail::make_stream_config(policy_, dimension_, value_bytes, s.trees.size());
        s.dimension = cfg.dimension;
        s.window = cfg.window;
        s.segment_bytes = cfg.segment_bytes;
        s.format = cfg.format;
        return s;
    }

    const std::vector<tree>& trees_for(bool commutative, std::size_t local_entries = 0)
    {
        auto& t = trees_[commutative ? 1 : 0];
        if constexpr (std::is_same_v<Policy, policy::optimal_binary>) {
            // Built from gathered data only, so every rank builds the same
            // tree even when they disagree on the dimension (which the
            // streams then report).
            auto nnz = gather_entries(local_entries);
            const double dimension = nnz.back();
            nnz.pop_back();
            if (!t || nnz != tree_nnz_[commutative ? 1 : 0]) {
                t = detail::trees_of(policy_, comm_.size(), root_, commutative, nnz, dimension);
                tree_nnz_[commutative ? 1 : 0] = nnz;
            }
        } else if (!t) {
            t = detail::trees_of(policy_, comm_.size(), root_, commutative, {}, 0);
        }
        return *t;
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

        const std::vector<tree>& trees = trees_for(commutative, stored_entries(in));
        const int me = comm_.rank();
        const T id = identity<T>(op);
        const std::size_t ntrees = trees.size();
        const detail::stream_config cfg = detail::make_stream_config(policy_, dimension_, sizeof(T), ntrees);

        const bool local_ok = sparse_reduce::dimension(in) == dimension_;
        using reader_t = decltype(detail::make_reader(in, id));
        const auto own = detail::make_own_input(in, cfg, id, local_ok);

        const bool destination = me == root_;
        T* dense_out = nullptr;
        if constexpr (RO::kind == repr_kind::dense)
            if (destination) dense_out = RO::output(out, dimension_).data();
        const std::string local_failure =
            local_ok ? std::string()
                     : "dimension mismatch: rank " + std::to_string(me) + " has dimension " +
                           std::to_string(sparse_reduce::dimension(in)) + ", the plan has " + std::to_string(dimension_);
        detail::rank_program<T, Op, reader_t> program(trees, me, cfg, op, own, dense_out, pools_, local_failure);
        detail::run_nodes(private_, program.bindings());

        report rep;
        rep.algorithm = trees.front().name + "(wire=" + wire::to_string(cfg.format) + ", segment=" +
                        std::to_string(cfg.segment_bytes) + ")";
        for (const tree& t : trees)
            if (t.order_preserving && t.top != t.destination)
                rep.algorithm += ", rank order, forwarded from " + std::to_string(t.top);
        rep.bytes_sent = program.bytes_sent();
        rep.bytes_received = program.bytes_received();
        rep.messages_sent = program.messages_sent();
        program.throw_if_failed(destination);
        if constexpr (RO::kind != repr_kind::dense)
            if (destination) program.write_sparse_output(out, dimension_, id);
        return rep;
    }

private:
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
    std::optional<std::vector<tree>> trees_[2];
    std::vector<double> tree_nnz_[2];
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
