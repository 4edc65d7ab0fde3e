#pragma once
// The path a reduce call takes: the one rule. The MPI executor
// (collective/reduce.hpp), the simulator (sim/simulator.hpp) and Sreduce's
// weighing of whole messages against windows (select/sreduce.hpp) all ask
// it, so they agree by construction (test/mpi/test_reduce.cpp compares the
// executor's and the simulator's reports on every path).
//
//   path        runs                                         for
//   whole       one message per edge of the schedule's       index/value inputs under the
//               first tree (exec/whole_reduce.hpp)           adaptive wire (whole_rule below)
//   windows     the windowed pipeline over one tree          everything else: dense and RLE
//               (exec/reduce_node.hpp)                       inputs, the dense drop-in, fixed
//                                                            wire formats, and whole calls
//                                                            Sreduce finds faster in windows
//   two_trees   the windowed pipeline, alternate windows     two_tree, fixed or chosen
//               on two trees
//
// Whether a call that may travel whole does so:
//
//   at_once         a fixed tree, or P <= 2 (every tree is the one edge):
//                   nothing is measured, the first message is the data
//                   (automatic's one-shot call at P = 2 with every input
//                   full and large: the dense wire's windows instead,
//                   full_goes_in_windows)
//   after_exchange  automatic and k_ary{.k = 0} at P > 2: the statistics
//                   allreduce, then Sreduce weighs whole against windows;
//                   optimal_binary: after the gather its tree is built from
//
// Every input here is the same on every rank (the policy, P, the input's
// kind, which is part of the call's type as MPI's datatypes are), so every
// rank takes the same path without a message.

#include <type_traits>

#include "../policy.hpp"
#include "../schedule/schedule.hpp"

namespace sparse_reduce::detail {

enum class reduce_path { whole, windows, two_trees };

enum class whole_rule { never, at_once, after_exchange };

// Whether a policy chooses per call from statistics the ranks exchange.
template <class P>
bool needs_call_stats(const P& p)
{
    if constexpr (std::is_same_v<P, policy::automatic>) return true; // also when hinted: the ranks must agree on C
    else if constexpr (std::is_same_v<P, policy::k_ary>) return p.k <= 0;
    else return false;
}

struct path_facts {
    bool index_value_input = false; // the input's kind is index/value
    wire::format wire = wire::adaptive;
    bool measures = false;          // the policy chooses from exchanged statistics
    bool gathers = false;           // optimal_binary: its tree needs every rank's count
    int ranks = 1;
};

constexpr whole_rule whole_messages(const path_facts& f)
{
    if (!f.index_value_input || f.wire != wire::adaptive) return whole_rule::never;
    if (f.gathers || (f.measures && f.ranks > 2)) return whole_rule::after_exchange;
    return whole_rule::at_once;
}

template <reduce_policy P>
whole_rule whole_messages(const P& pol, bool index_value_input, int ranks)
{
    return whole_messages({.index_value_input = index_value_input,
                           .wire = pol.wire,
                           .measures = needs_call_stats(pol),
                           .gathers = std::is_same_v<P, policy::optimal_binary>,
                           .ranks = ranks});
}

// A call that would travel whole at once, under a policy that measures
// (automatic), at P = 2, goes in windows with the dense wire instead when
// every rank's input holds every element and the vector has at least
// full_in_windows_bytes: a whole message of a full vector overlaps less of
// the root's fold with the transfer than the windows' pipeline does (2^21
// doubles: 7.7 ms whole, 5.4 in windows; doc/selection.md, the one-shot
// grid). A one-shot call learns whether every input is full in the
// dimension agreement it makes anyway; a plan, which exchanges nothing on
// such calls, keeps whole messages.
inline constexpr std::size_t full_in_windows_bytes = std::size_t{1} << 18; // 2^15 doubles

constexpr bool full_goes_in_windows(whole_rule rule, bool measures, int ranks, bool all_full, std::size_t dimension,
                                    std::size_t value_bytes)
{
    return rule == whole_rule::at_once && measures && ranks == 2 && all_full &&
           dimension * value_bytes >= full_in_windows_bytes;
}

// Whether Sreduce weighs whole messages against windows for a call that may
// travel whole: only where the executor asks it, after the exchange.
constexpr bool whole_is_weighed(int ranks)
{
    return whole_messages({.index_value_input = true, .measures = true, .ranks = ranks}) ==
           whole_rule::after_exchange;
}

// The path of a resolved schedule.
inline reduce_path path_of(const schedule& s)
{
    return s.whole ? reduce_path::whole : s.trees.size() > 1 ? reduce_path::two_trees : reduce_path::windows;
}

} // namespace sparse_reduce::detail
