#pragma once
// Every MPI tag the library uses, in one place. All traffic runs on the
// library's private duplicate of the user's communicator (communicator.hpp),
// so these never meet a user's tags; they only have to keep the library's own
// concurrent exchanges apart.
//
//   1 ..  2n   the windowed reduce (exec/): tree k of n (n <= 2, two_tree)
//              streams child -> parent on stream_tag + 2k and top ->
//              destination on forward_tag + 2k; the whole-message reduce
//              uses stream_tag and forward_tag
//   61 .. 64   allreduce: the broadcast's status, its blocks
//              (broadcast_block_tag + k for its stream k of at most two),
//              recursive doubling (64: above the broadcast's streams)
//   71 .. 72   the distributed sort (sort/)
//   73 .. 74   reduce_scatter (collective/reduce_scatter.hpp): slices
//   75 .. 76   fixed-pattern plans (collective/pattern_plan.hpp)
//   77         reduce_scatter: its ranks' status words
//   78         a fixed-pattern plan's call: its ranks' status words
//   79         reduce_scatter: its ranks' headers
//   1000 + 4s  a started reduce (reduce_plan::start, ireduce): the windowed
//   .. + 3     reduce's tags, moved up by request_tags(s) for the s-th start
//              on the communicator (mod request_tag_slots), so requests in
//              flight together, and blocking calls beside them, never match
//              each other's messages; a started reduce_broadcast takes
//              start s for its broadcast (status 1000 + 4s, streams + 1
//              and + 2) and s + 1 for its reduce; a started
//              recursive_doubling or split_allgather takes start s, its
//              data on 1000 + 4s + 1 and its agreement on + 2; a started
//              pattern plan call (collective/pattern_start.hpp) takes start
//              s, its values on + 1, its agreement on + 2, an allreduce's
//              sums on + 3

#include <cstddef>

namespace sparse_reduce::detail {

inline constexpr int stream_tag = 1;  // child -> parent in the tree
inline constexpr int forward_tag = 2; // top -> destination
inline constexpr int tags_per_tree = 2; // tree k's: stream_tag + 2k, forward_tag + 2k

// Tree k's tag for its streams (stream_tag) or its forwarded result (forward_tag).
constexpr int tree_tag(int tag, std::size_t k) { return tag + tags_per_tree * static_cast<int>(k); }

inline constexpr int broadcast_status_tag = 61; // root -> children: outcome of the reduce
inline constexpr int broadcast_block_tag = 62;  // root -> children: one segment
inline constexpr int doubling_tag = 64;         // recursive doubling and its fold

inline constexpr int rebalance_tag = 71;
inline constexpr int move_data_tag = 72;

inline constexpr int scatter_offset_tag = 73;
inline constexpr int scatter_value_tag = 74;
inline constexpr int pattern_index_tag = 75; // a pattern plan's indices, once
inline constexpr int pattern_value_tag = 76; // its values, every call

inline constexpr int scatter_status_tag = 77; // each rank's room and output, to every other
inline constexpr int pattern_status_tag = 78; // a pattern plan's call: each rank's check, to every other
inline constexpr int scatter_header_tag = 79; // reduce_scatter: each rank's header, to every other

// A started reduce's tag offset: within MPI's smallest tag bound (32767).
inline constexpr int request_tag_base = 1000;
inline constexpr unsigned request_tag_slots = 7000;
constexpr int request_tags(unsigned long long start)
{
    return request_tag_base - stream_tag + 2 * tags_per_tree * static_cast<int>(start % request_tag_slots);
}

} // namespace sparse_reduce::detail
