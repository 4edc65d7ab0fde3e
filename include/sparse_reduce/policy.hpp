#pragma once
// Reduction policies: which tree, which wire format, which segment size.
// Aggregates, so call sites read as `policy::k_ary{.k = 4, .wire = wire::rle}`.
//
//   wire           wire::adaptive (default: smallest of dense, index/value
//                  and RLE for every block), wire::dense, wire::index_value,
//                  wire::rle (float and double)
//   segment_bytes  the dense size of one window of the index space: the unit
//                  of pipelining and the size a message is sent at.
//                  0 = automatic (default_segment_bytes); below 1 GiB
//                  (max_segment_bytes), else sparse_reduce::error on every rank

#include <cstddef>
#include <optional>
#include <string>

#include "model/cost.hpp"
#include "select/tuning.hpp"
#include "wire/block.hpp"

namespace sparse_reduce {

inline constexpr std::size_t default_segment_bytes = 128 * 1024;
// segment_bytes must be below this (1 GiB): validate(policy) in
// policy_check.hpp, and every schedule built, refuse more.
inline constexpr std::size_t max_segment_bytes = std::size_t{1} << 30;

namespace policy {

struct binomial {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const binomial&, const binomial&) = default;
};
struct k_ary {
    int k = 0; // 0: Heikkinen's (n.d.) best k for this call's sizes and the tuned model (one small allreduce)
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const k_ary&, const k_ary&) = default;
};
struct binary {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const binary&, const binary&) = default;
};
struct chain {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const chain&, const chain&) = default;
};
// The binary tree of least modelled completion time for this call's entry
// counts (one allgather of nnz per call; tree/optimal_binary.hpp).
struct optimal_binary {
    cost_model model{};
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const optimal_binary&, const optimal_binary&) = default;
};
// Two binary trees sharing the windows (Sanders, Speck and Träff 2009): for large vectors.
struct two_tree {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
    friend bool operator==(const two_tree&, const two_tree&) = default;
};
// Sreduce (select/sreduce.hpp): tree and segment size chosen per call from
// P, C, S and D and the machine's tuning. One small allreduce (entries,
// dimension, where entries fall) gives every rank the same view; a plan
// repeats it every remeasure_every calls, a one-shot reduce every call (a
// dense input's counts, a pass over it, are kept between one-shot calls in
// the same way, recounted early when a 1/32 sample says the data changed).
// Hints override the measured S and D.
struct automatic {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;           // 0: chosen too
    std::optional<double> sparsity{};        // hint: fraction of identity elements, same on every rank
    std::optional<merge_model> distribution{}; // hint: uniform or zipf
    std::string tuning_file{};               // else $SPARSE_REDUCE_TUNING, else built-in defaults
    std::optional<sparse_reduce::tuning> tuned{}; // in place of any file (e.g. a simulated network)
    unsigned remeasure_every = 64; // a plan measures S and D on its first call and every this many after; 0: always
    friend bool operator==(const automatic&, const automatic&) = default;
};

} // namespace policy

template <class P>
concept reduce_policy = requires(const P& p) {
    { p.wire } -> std::convertible_to<wire::format>;
    { p.segment_bytes } -> std::convertible_to<std::size_t>;
};

} // namespace sparse_reduce

// ---- allreduce (collective/allreduce.hpp, doc/allreduce.md) ----
namespace sparse_reduce::policy {

// reduce to rank 0 over `tree` (any reduce policy), then a pipelined
// binomial broadcast of the result in wire blocks of segment_bytes (0: the tree's).
template <reduce_policy Tree = automatic>
struct reduce_broadcast {
    Tree tree{};
    std::size_t broadcast_segment_bytes = 0;
};
// Recursive doubling (SparCML's SSAR_Recursive_double): exchange partial
// results with rank ^ 2^k, kept sparse until their index/value form
// outgrows dense; extra ranks of a non-power-of-two P folded in first.
struct recursive_doubling {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0; // block length on the wire (0: default_segment_bytes)
};
// Chen and Lee's (n.d.) group-replicated accumulation on a 2D mesh of ranks. The mesh:
// the communicator's own 2D cartesian topology (MPI_Cart_create, Boost.MPI's
// cartesian_communicator; periodic in both dimensions = wrapped-around),
// else mesh_rows x mesh_cols, else MPI_Dims_create(P, 2); rank r at (r /
// cols, r % cols), as MPI numbers a cartesian communicator. Groups of
// group_rows x group_cols neighbouring ranks (dividing the mesh's sides) each
// hold one replica of the vector, in block ranges over their members:
//   updating     reduce_scatter within the group (each member gets its range)
//   integration  recursive doubling across the corresponding members of all groups
//   broadcasting allgather of the integrated ranges within the group
// group_rows = group_cols = 0: the shape Chen and Lee's model finds best
// (model/group_replication.hpp), from the first call's mean density, the
// tuned machine and `links`; fixed for a plan after that.
struct grouped {
    int group_rows = 0, group_cols = 0;
    int mesh_rows = 0, mesh_cols = 0;
    bool bidirectional_links = true;   // the model's RS2/WS2 (else RS1/WS1)
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;     // block length on the wire (0: default_segment_bytes)
    std::string tuning_file{};         // for the model: else $SPARSE_REDUCE_TUNING, else defaults
    std::optional<sparse_reduce::tuning> tuned{};
};
// SparCML's SSAR_Split_allgather: reduce_scatter by block ranges, then an
// allgather of the reduced ranges (grouped with one group of all ranks).
struct split_allgather {
    wire::format wire = wire::adaptive;
    std::size_t segment_bytes = 0;
};

} // namespace sparse_reduce::policy
