#pragma once
/// @file
/// Reduction policies (namespace sparse_reduce::policy): which tree or
/// algorithm, which wire format, which segment size. Include
/// `<sparse_reduce/sparse_reduce.hpp>`.
///
/// Aggregates, so call sites read as `policy::k_ary{.k = 4, .wire = wire::rle}`.
/// Fields common to the policies:
///
///     wire           wire::adaptive (default: smallest of dense, index/value,
///                    RLE and, where the tuning's network makes bytes dear, a
///                    bitmap for every block), wire::dense, wire::index_value,
///                    wire::rle (float and double)
///     segment_bytes  the dense size of one window of the index space: the unit
///                    of pipelining and the size a message is sent at.
///                    0 = automatic (default_segment_bytes); below 1 GiB
///                    (max_segment_bytes), else sparse_reduce::error on every rank

#include <concepts>
#include <cstddef>
#include <optional>
#include <string>

#include "error.hpp"
#include "model/cost.hpp"
#include "select/tuning.hpp"
#include "wire/format.hpp"

namespace sparse_reduce {

/// The segment size of a policy whose segment_bytes is 0 (128 KiB).
inline constexpr std::size_t default_segment_bytes = 128 * 1024;
/// The largest window (in the elements' bytes): a larger segment_bytes sends
/// larger messages (several windows each) but keeps windows at this size,
/// the unit in which the wire format is chosen and the dense accumulator's
/// length, so a larger message costs neither adaptivity nor cache.
inline constexpr std::size_t max_window_bytes = 128 * 1024;
/// segment_bytes must be below this (1 GiB): validate(policy) in
/// policy_check.hpp, and every schedule built, refuse more.
inline constexpr std::size_t max_segment_bytes = std::size_t{1} << 30;

namespace detail {
// The one check of a segment size, where a policy is validated and where
// a schedule is built: the same on every rank, so all refuse it alike,
// before any message (a segment of 1 GiB or more has no valid MPI count).
// who: the policy's name, or nullptr.
inline void check_segment(const char* who, const char* name, std::size_t bytes)
{
    if (bytes >= max_segment_bytes)
        fail(who ? who : "", who ? ": " : "", name, " = ", bytes,
             " is too large: it must be below 1 GiB (1073741824 bytes; 0 = automatic)");
}
} // namespace detail

/// The policies: reduce's trees and allreduce's algorithms.
namespace policy {

/// The binomial tree (tree/binomial.hpp): depth ceil(log2 P); latency-bound calls.
struct binomial {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const binomial&, const binomial&) = default;
};
/// The k-ary tree (tree/k_ary.hpp).
struct k_ary {
    int k = 0; ///< Children per node; 0: Heikkinen's (n.d.) best k for this call's sizes and the tuned model (one small allreduce)
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const k_ary&, const k_ary&) = default;
};
/// The in-order binary tree (tree/binary.hpp).
struct binary {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const binary&, const binary&) = default;
};
/// The chain, a linear pipeline (tree/chain.hpp): for large vectors.
struct chain {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const chain&, const chain&) = default;
};
/// The binary tree of least modelled completion time for this call's entry
/// counts (one allgather of nnz per call; tree/optimal_binary.hpp).
struct optimal_binary {
    cost_model model{}; ///< The model the tree minimises.
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const optimal_binary&, const optimal_binary&) = default;
};
/// Two binary trees sharing the windows (Sanders, Speck and Träff 2009): for large vectors.
struct two_tree {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
    friend bool operator==(const two_tree&, const two_tree&) = default;
};
/// The default: Sreduce (select/sreduce.hpp) chooses the tree and segment size
/// per call from P, C, S and D and the machine's tuning. One small allreduce (entries,
/// dimension, where entries fall) gives every rank the same view; a plan
/// repeats it every remeasure_every calls, a one-shot reduce every call (a
/// dense input's counts, a pass over it, are kept between one-shot calls in
/// the same way, recounted early when a 1/32 sample says the data changed).
/// Hints override the measured S and D. For allreduce: the least of
/// recursive doubling, reduce_broadcast and split_allgather by the model.
struct automatic {
    wire::format wire = wire::adaptive;      ///< The wire format.
    std::size_t segment_bytes = 0;           ///< 0: chosen too.
    std::optional<double> sparsity{};        ///< Hint: fraction of identity elements, same on every rank.
    std::optional<merge_model> distribution{}; ///< Hint: uniform or zipf.
    std::string tuning_file{};               ///< Else $SPARSE_REDUCE_TUNING, else built-in defaults.
    std::optional<sparse_reduce::tuning> tuned{}; ///< In place of any file (e.g.\ a simulated network).
    unsigned remeasure_every = 64; ///< A plan measures S and D on its first call and every this many after; 0: always
    friend bool operator==(const automatic&, const automatic&) = default;
};

/// Any of the trees above, chosen at run time: defined in
/// `<sparse_reduce/policy_any.hpp>` (not part of the umbrella header: a
/// program that never names it does not parse std::variant for it).
template <class = void>
class basic_any;
/// Any reduce tree, chosen at run time (`<sparse_reduce/policy_any.hpp>`).
using any = basic_any<>;

} // namespace policy

/// A reduce policy: any type with `wire` and `segment_bytes` (the policy:: trees).
template <class P>
concept reduce_policy = requires(const P& p) {
    { p.wire } -> std::convertible_to<wire::format>;
    { p.segment_bytes } -> std::convertible_to<std::size_t>;
};

/// What make_plan, reduce and simulate_reduce take: a reduce_policy, or
/// policy::any holding one.
template <class P>
concept reduce_policy_or_any = reduce_policy<P> || std::same_as<P, policy::any>;

} // namespace sparse_reduce

// ---- allreduce (collective/allreduce.hpp, doc/allreduce.md) ----
namespace sparse_reduce::policy {

/// allreduce: reduce to rank 0 over `tree` (any reduce policy), then a pipelined
/// binomial broadcast of the result in wire blocks of segment_bytes (0: the tree's).
template <reduce_policy Tree = automatic>
struct reduce_broadcast {
    Tree tree{};                             ///< The reduce's policy.
    std::size_t broadcast_segment_bytes = 0; ///< The broadcast's blocks (0: the tree's segment).
};
/// allreduce: recursive doubling (SparCML's SSAR_Recursive_double): exchange partial
/// results with rank ^ 2^k, kept sparse until their index/value form
/// outgrows dense; extra ranks of a non-power-of-two P folded in first.
struct recursive_doubling {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Block length on the wire (0: default_segment_bytes).
};
/// allreduce: Chen and Lee's (n.d.) group-replicated accumulation on a 2D mesh of ranks. The mesh:
/// the communicator's own 2D cartesian topology (MPI_Cart_create, Boost.MPI's
/// cartesian_communicator; periodic in both dimensions = wrapped-around),
/// else mesh_rows x mesh_cols, else MPI_Dims_create(P, 2); rank r at (r /
/// cols, r % cols), as MPI numbers a cartesian communicator. Groups of
/// group_rows x group_cols neighbouring ranks (dividing the mesh's sides) each
/// hold one replica of the vector, in block ranges over their members:
///
///      updating     reduce_scatter within the group (each member gets its range)
///      integration  recursive doubling across the corresponding members of all groups
///      broadcasting allgather of the integrated ranges within the group
///
/// group_rows = group_cols = 0: the shape Chen and Lee's model finds best
/// (model/group_replication.hpp), from the first call's mean density, the
/// tuned machine and `links`; fixed for a plan after that.
struct grouped {
    int group_rows = 0, group_cols = 0; ///< A group's shape; 0, 0: chosen by the model.
    int mesh_rows = 0, mesh_cols = 0;   ///< The mesh, when comm has no cartesian topology; 0: MPI_Dims_create.
    bool bidirectional_links = true;   ///< The model's RS2/WS2 (else RS1/WS1).
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0;     ///< Block length on the wire (0: default_segment_bytes).
    std::string tuning_file{};         ///< For the model: else $SPARSE_REDUCE_TUNING, else defaults.
    std::optional<sparse_reduce::tuning> tuned{}; ///< In place of any file.
};
/// allreduce: SparCML's SSAR_Split_allgather, a reduce_scatter by block ranges,
/// then an allgather of the reduced ranges (grouped with one group of all ranks).
struct split_allgather {
    wire::format wire = wire::adaptive; ///< The wire format.
    std::size_t segment_bytes = 0; ///< Message size in bytes (windows: at most max_window_bytes); 0: default_segment_bytes.
};

} // namespace sparse_reduce::policy
