#pragma once
/// @file
/// simulate_reduce, a reduce of P virtual ranks in one process on a modelled
/// clock. Include `<sparse_reduce/simulate.hpp>`.
///
/// The simulator: runs the very same per-rank programs as the Boost.MPI
/// executor (exec/rank_program.hpp, the same reduce_node state machines, real
/// data, real encoding) for P virtual ranks inside one process, on a
/// modelled clock instead of a network:
///
///      a message of B bytes    alpha + beta * B on the sender's and the
///                              receiver's link; a rank's transfers serialise on
///                              its link, and a transfer starts once the
///                              receiver has posted the receive, in the earliest
///                              interval free on both links (no token
///                              bucket: windows stream back to back, where
///                              a bucket would shorten only the first; whole
///                              messages: whole_model.hpp's buckets, the
///                              call timed in a loop of calls)
///      automatic's allreduce   log2(P) rounds of alpha + beta * 536 bytes first,
///                              when the call needs it, divided by
///                              remeasure_every (a plan's steady state)
///      computing               gamma * (sparse entries merged, encoded,
///                              decoded) + gamma_dense * (dense elements folded,
///                              copied, scanned) on the rank's processor, as the
///                              nodes count them; a dense input is scanned once
///                              (its entries per window) before anything is sent
///
/// It returns the modelled completion time, the bytes on the critical path
/// (the longest chain of dependent transfers ending at the root) and the
/// totals; byte and message counts equal the executor's for the same inputs.
/// Sparse inputs under the adaptive wire travel whole in the executor (one
/// message per edge, exec/whole_reduce.hpp): their time, bytes and messages
/// come from sim/whole_model.hpp, the result from the windowed run.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "../detail/index_width.hpp"
#include "../error.hpp"
#include "../model/cost.hpp"
#include "../op/associative_op.hpp"
#include "../op/builtin.hpp"
#include "../policy.hpp"
#include "../repr/representation.hpp"
#include "../schedule/schedule.hpp"
#include "../select/call_stats.hpp"
#include "../select/path.hpp"
#include "../select/resolve.hpp"
#include "../exec/program_input.hpp"
#include "../exec/rank_program.hpp"
#include "modelled_machine.hpp"
#include "whole_model.hpp"

namespace sparse_reduce {

/// What simulate_reduce returns.
struct simulation_result {
    std::string algorithm;               ///< What ran (as report::algorithm).
    double time = 0;                     ///< Modelled completion, seconds.
    std::size_t critical_path_bytes = 0; ///< On the longest dependent chain into the root.
    std::size_t bytes_total = 0, messages_total = 0; ///< Over all ranks.
    std::vector<std::size_t> bytes_sent; ///< Per rank.
};

namespace detail {

// What the simulated ranks would agree on before the exchange (summed local
// statistics, every count), and the schedule the policy runs for it.
struct simulated_call {
    std::size_t dimension = 0;                      // the largest rank's
    std::vector<std::vector<std::uint32_t>> blocks; // per rank: entries per counted block
    bool stats = false;                             // whether the call measures (automatic's allreduce)
    schedule sched;
};

// What the simulated ranks count of their inputs, whatever the policy.
struct simulated_counts {
    std::vector<double> nnz;     // stored entries per rank
    local_summary sum;           // summed local statistics
    bool same_dimensions = true; // every rank's dimension is the largest
    bool all_full = true;        // every input holds every element (a one-shot call's dimension agreement)
};

template <class T, class In>
simulated_counts count_simulated_inputs(std::span<const In* const> inputs, const T& id, simulated_call& call,
                                        bool (*stats_needed_for)(const void*, std::size_t, std::size_t, bool),
                                        const void* policy)
{
    const int p = static_cast<int>(inputs.size());
    simulated_counts c;
    std::size_t& dim = call.dimension;
    for (const In* pin : inputs) {
        dim = std::max(dim, dimension(*pin));
        c.nnz.push_back(static_cast<double>(stored_entries(*pin)));
    }
    for (const In* pin : inputs) {
        c.same_dimensions &= dimension(*pin) == dim;
        c.all_full &= dimension(*pin) == dim && stored_entries(*pin) == dim;
    }
    call.stats = stats_needed_for(policy, dim, sizeof(T), c.same_dimensions);
    call.blocks.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
        const In& in = *inputs[static_cast<std::size_t>(r)];
        auto counts = count_locally(in, dimension(in), id, call.stats && dimension(in) == dim);
        c.sum += counts.stats;
        call.blocks[static_cast<std::size_t>(r)] = std::move(counts.blocks);
    }
    return c;
}

// The executor's path (select/path.hpp) and schedule for the counted call.
template <class Policy>
void plan_simulated_schedule(simulated_call& call, const simulated_counts& c, int p, int root, const Policy& policy,
                             bool commutative, std::size_t value_bytes, bool index_value_input, bool dense_output)
{
    const std::size_t dim = call.dimension;
    const whole_rule rule = whole_messages(policy, index_value_input, p);
    if (full_goes_in_windows(rule, needs_call_stats(policy), p, c.all_full, dim, value_bytes))
        call.sched = full_schedule_in_windows(p, root, commutative, dim, value_bytes);
    else
        call.sched = rule == whole_rule::at_once
                         ? whole_schedule_at_once(policy, p, root, commutative, dim, value_bytes)
                         : resolve_schedule(policy, p, root, commutative, dim, value_bytes, c.nnz,
                                            agreed_stats(c.sum, p, value_bytes, dense_output, rule != whole_rule::never));
}

// What the ranks agree on and the schedule the policy runs for it; a
// started call always goes in windows (collective/reduce_start.hpp), as if
// its input were not index/value.
template <class Policy, class T, class Out, class Op, class In>
simulated_call plan_simulated_call(std::span<const In* const> inputs, int root, const Policy& policy, const T& id,
                                   bool started = false)
{
    using RI = repr_traits<std::remove_cvref_t<In>>;
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    simulated_call call;
    const auto stats_needed_for = [](const void* pol, std::size_t dim, std::size_t value_bytes, bool same) {
        return stats_needed(*static_cast<const Policy*>(pol), dim, value_bytes, same);
    };
    const simulated_counts c = count_simulated_inputs<T>(inputs, id, call, +stats_needed_for, &policy);
    plan_simulated_schedule(call, c, static_cast<int>(inputs.size()), root, policy, is_commutative_v<Op, T>, sizeof(T),
                            RI::kind == repr_kind::index_value && !started, RO::kind == repr_kind::dense);
    return call;
}

} // namespace detail

namespace detail {

// The whole-message path's timing into res, on the schedule's first tree
// as reduce_whole runs it (at P <= 2 any tree is the one edge; a fixed
// policy's tree and k_ary's measured k are the schedule's).
template <class T, class In, class Op>
void set_whole_timing(simulation_result& res, std::span<const In* const> inputs, const Op& op, bool dense_output,
                      std::size_t dim, const schedule& sched, double before, const network_model& net)
{
    using R = repr_traits<std::remove_cvref_t<In>>;
    const int p = static_cast<int>(inputs.size());
    const tree& t = sched.trees.front();
    std::vector<whole_partial<T>> own(static_cast<std::size_t>(p));
    std::vector<double> start(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r) {
        const In& in = *inputs[static_cast<std::size_t>(r)];
        own[static_cast<std::size_t>(r)].idx.assign(R::indices(in).begin(), R::indices(in).end());
        own[static_cast<std::size_t>(r)].val.assign(R::values(in).begin(), R::values(in).end());
        // the input's check: one vectorisable pass over its indices, a dense
        // element's cost each rather than a merge's
        start[static_cast<std::size_t>(r)] = before + net.gamma_dense * static_cast<double>(R::indices(in).size());
    }
    // With token buckets the call is timed in a loop of calls (a benchmark's,
    // a plan's): it runs twice, first from full buckets, and the second run
    // finds each bucket holding what it earned since the first last used it.
    whole_links links(static_cast<std::size_t>(p), net);
    if (net.burst_bytes > 0) {
        const whole_timing first = time_whole_reduce<T>(t, own, start, dim, op, net, dense_output, links);
        links.shift(first.time);
    }
    const whole_timing w = time_whole_reduce<T>(t, std::move(own), start, dim, op, net, dense_output, links);
    res.algorithm += ", whole messages"; // as the executor's report says
    res.time = w.time;
    res.bytes_sent = w.bytes_sent;
    res.bytes_total = res.messages_total = 0;
    for (int r = 0; r < p; ++r) {
        res.bytes_total += w.bytes_sent[static_cast<std::size_t>(r)];
        res.messages_total += w.messages_sent[static_cast<std::size_t>(r)];
    }
    res.critical_path_bytes = w.critical_path_bytes;
}

} // namespace detail

namespace detail {

// When the ranks start: after automatic's allreduce, per call of a plan that
// repeats it every remeasure_every calls (the steady state a benchmark of a
// plan sees), ...
template <class Policy>
double stats_time_before(const simulated_call& call, const Policy& pol, int p, const network_model& net)
{
    double before = call.stats ? stats_allreduce_time(p, net) : 0;
    if constexpr (std::is_same_v<Policy, policy::automatic>)
        if (pol.remeasure_every > 0) before /= pol.remeasure_every;
    return before;
}

// ... and the scan of each rank's input.
template <class In>
std::vector<double> start_times(std::span<const In* const> inputs, double before, const network_model& net)
{
    using RI = repr_traits<std::remove_cvref_t<In>>;
    std::vector<double> start;
    for (const In* in : inputs)
        start.push_back(before + (RI::kind == repr_kind::dense ? net.gamma_dense * static_cast<double>(dimension(*in))
                                                               : net.gamma * static_cast<double>(stored_entries(*in))));
    return start;
}

// The windowed run's figures: time, bytes and messages per rank, and the
// critical path into the root.
template <class Program, class Machine>
simulation_result windowed_result(const schedule& sched, const std::vector<std::unique_ptr<Program>>& programs,
                                  Machine& machine, int root)
{
    simulation_result res;
    res.algorithm = describe(sched);
    for (std::size_t r = 0; r < programs.size(); ++r) {
        const auto& prog = *programs[r];
        res.bytes_sent.push_back(prog.bytes_sent());
        res.bytes_total += prog.bytes_sent();
        res.messages_total += prog.messages_sent();
        res.time = std::max(res.time, machine.clock(static_cast<int>(r)));
    }
    for (auto& b : programs[static_cast<std::size_t>(root)]->bindings())
        res.critical_path_bytes = std::max(res.critical_path_bytes, machine.critical(b.node));
    return res;
}

} // namespace detail

namespace detail {

// The simulation of a planned call (the policy's part is done: its schedule,
// and `before`, when the ranks start): compiled once per input, output and
// operation, whatever the policy. `work`: a started call's computation
// (modelled_machine.hpp).
template <class In, class Out, class Op>
simulation_result simulate_planned(std::span<const In* const> inputs, Out& out, const Op& op, int root,
                                   const simulated_call& call, double before, const network_model& net,
                                   const computation* work = nullptr)
{
    using T = value_type_of<In>;
    using RI = repr_traits<std::remove_cvref_t<In>>;
    using RO = repr_traits<std::remove_cvref_t<Out>>;
    const int p = static_cast<int>(inputs.size());
    const T id = identity<T>(op);
    const std::size_t dim = call.dimension;
    const schedule& sched = call.sched;
    const auto cfg = make_stream_config(sched);

    using reader_t = own_reader_t<In>;
    using program_t = rank_program<T, Op, reader_t>;
    std::vector<std::vector<node_buffers>> pools(static_cast<std::size_t>(p));
    std::vector<std::vector<std::uint32_t>> window_counts(static_cast<std::size_t>(p));
    std::vector<own_input<T, reader_t>> owns;
    for (int r = 0; r < p; ++r) {
        const In& in = *inputs[static_cast<std::size_t>(r)];
        owns.push_back(make_own_input(in, cfg, id, dimension(in) == dim,
                                              window_counts[static_cast<std::size_t>(r)],
                                              call.blocks[static_cast<std::size_t>(r)], stats_grain));
    }
    // the root's output once every input has been read
    const bool out_is_an_input =
        std::ranges::any_of(inputs, [&](const In* in) { return same_object(*in, out); });
    const root_output<T> result =
        make_root_output<T>(out, out_is_an_input, sched, owns[static_cast<std::size_t>(root)]);
    try {
        std::vector<std::unique_ptr<program_t>> programs;
        for (int r = 0; r < p; ++r) {
            const In& in = *inputs[static_cast<std::size_t>(r)];
            const bool ok = dimension(in) == dim;
            programs.push_back(std::make_unique<program_t>(
                sched.trees, r, cfg, op, owns[static_cast<std::size_t>(r)],
                r == root ? result : root_output<T>{},
                pools[static_cast<std::size_t>(r)],
                ok ? std::string() : "dimension mismatch: rank " + std::to_string(r) + " has dimension " +
                                         std::to_string(dimension(in)) + ", others " + std::to_string(dim)));
        }

        modelled_machine<program_t> machine(programs, net);
        machine.run(start_times(inputs, before, net), work);
        simulation_result res = windowed_result(sched, programs, machine, root);
        // The whole path (select/path.hpp): the executor sends one message per
        // edge of the schedule's first tree, so time, bytes and messages are
        // that path's (sim/whole_model.hpp), which prices 32-bit message
        // indices; over 2^32 the windowed run's figures stand. The windowed
        // run above still gives the result.
        auto& at_root = *programs[static_cast<std::size_t>(root)];
        if (at_root.failed()) at_root.throw_if_failed(true); // before the whole model runs op again
        if constexpr (RI::kind == repr_kind::index_value)
            if (path_of(sched) == reduce_path::whole && narrow_indices(dim))
                set_whole_timing<T>(res, inputs, op, RO::kind == repr_kind::dense, dim, sched, before, net);
        if constexpr (RO::kind != repr_kind::dense) at_root.write_sparse_output(out, dim, id);
        return res;
    } catch (...) {
        clear_root_output(out);
        throw;
    }
}


} // namespace detail

/// Simulates reduce(comm of inputs.size() ranks, *inputs[r] on rank r, out, op, root, policy)
/// on network `net`; out gets the result. Ranks may share an input object: a
/// simulation of many ranks needs memory only for the distinct ones.
/// @throws sparse_reduce::error for an invalid root, or what the reduce would throw at the root
template <reduce_policy Policy = policy::automatic, representation In, representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
simulation_result simulate_reduce(std::span<const In* const> inputs, Out& out, const Op& op, int root,
                                  const Policy& policy = {}, const network_model& net = {})
{
    using T = value_type_of<In>;
    const int p = static_cast<int>(inputs.size());
    if (root < 0 || root >= std::max(p, 1))
        detail::fail("invalid root ", root, " for ", p, " simulated ranks");
    if (p == 0) return {};
    const detail::simulated_call call = detail::plan_simulated_call<Policy, T, Out, Op>(inputs, root, policy, identity<T>(op));
    return detail::simulate_planned(inputs, out, op, root, call, detail::stats_time_before(call, policy, p, net), net);
}

/// Simulates reduce(comm of inputs.size() ranks, inputs[r] on rank r, out, op, root, policy).
template <reduce_policy Policy = policy::automatic, representation In, representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
simulation_result simulate_reduce(std::span<const In> inputs, Out& out, const Op& op, int root, const Policy& policy = {},
                                  const network_model& net = {})
{
    std::vector<const In*> ptrs;
    for (const In& in : inputs) ptrs.push_back(&in);
    return simulate_reduce(std::span<const In* const>(ptrs), out, op, root, policy, net);
}

/// simulate_reduce with a tree chosen at run time: as with the tree `policy` holds.
template <representation In, representation Out, class Op, std::same_as<policy::any> Any>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
simulation_result simulate_reduce(std::span<const In* const> inputs, Out& out, const Op& op, int root,
                                  const Any& policy, const network_model& net = {})
{
    return policy.visit([&](const auto& tree) { return simulate_reduce(inputs, out, op, root, tree, net); });
}
/// simulate_reduce of inputs[r] on rank r, with a tree chosen at run time.
template <representation In, representation Out, class Op, std::same_as<policy::any> Any>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
simulation_result simulate_reduce(std::span<const In> inputs, Out& out, const Op& op, int root,
                                  const Any& policy, const network_model& net = {})
{
    return policy.visit([&](const auto& tree) { return simulate_reduce(inputs, out, op, root, tree, net); });
}

} // namespace sparse_reduce
