#pragma once
/// @file
/// simulate_started_reduce: what a started reduce (`plan.start`, `ireduce`)
/// hides behind computation, on the simulator's modelled clock. Include
/// `<sparse_reduce/simulate.hpp>`.
///
/// Every rank starts the call, computes for `computation::seconds` with a
/// test() after every `computation::test_every` seconds of it, then waits
/// (sim/modelled_machine.hpp): its program moves only in those tests and in
/// the wait, its folds lengthen the computation, and transfers run on the
/// links meanwhile. The call runs in windows, as a started call does
/// (collective/reduce_start.hpp), on the schedule the policy gives it.
///
///   overlap = (T_comp + T_comm - T_total) / min(T_comp, T_comm)
///
/// with T_comm the started call alone (start, then wait) and T_total the
/// call with the computation (the slowest rank): 1 when the transfers hide
/// entirely behind the computation, 0 when none does.

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "../error.hpp"
#include "modelled_machine.hpp"
#include "simulator.hpp"

namespace sparse_reduce {

/// What simulate_started_reduce returns.
struct started_simulation {
    simulation_result call; ///< The call with the computation: `time` is T_total.
    double alone = 0;       ///< T_comm: the started call with no computation (start, then wait), seconds.
    double overlap = 0;     ///< As in the header comment; 0 when T_comp or T_comm is 0.
};

/// Simulates, on ranks of inputs.size(): `auto req = plan.start(*inputs[r], out, op)`
/// (a plan of `policy` to `root`), `work.seconds` of computation with
/// `req.test()` after every `work.test_every` seconds of it, `req.wait()`;
/// and the same call with no computation. out gets the result.
/// `out` must not be one of the inputs.
/// @throws sparse_reduce::error for an invalid root or computation, `out` one of the inputs, or what the reduce
/// would throw at the root
template <reduce_policy Policy = policy::automatic, representation In, representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
started_simulation simulate_started_reduce(std::span<const In* const> inputs, Out& out, const Op& op, int root,
                                           const computation& work, const Policy& policy = {},
                                           const network_model& net = {})
{
    using T = value_type_of<In>;
    const int p = static_cast<int>(inputs.size());
    if (root < 0 || root >= std::max(p, 1))
        detail::fail("invalid root ", root, " for ", p, " simulated ranks");
    if (!(std::isfinite(work.seconds) && work.seconds >= 0) ||
        !(std::isfinite(work.test_every) && work.test_every > 0))
        detail::fail("invalid computation: seconds ", work.seconds, " (>= 0 needed), test_every ", work.test_every,
                     " (> 0 needed)");
    if (p == 0) return {};
    if (std::ranges::any_of(inputs, [&](const In* in) { return detail::same_object(*in, out); }))
        detail::fail("simulate_started_reduce: out is one of the inputs (the call is simulated twice, alone and "
                     "with the computation)");
    const detail::simulated_call call =
        detail::plan_simulated_call<Policy, T, Out, Op>(inputs, root, policy, identity<T>(op), true);
    const double before = detail::stats_time_before(call, policy, p, net);
    started_simulation s;
    computation none = work;
    none.seconds = 0;
    s.alone = detail::simulate_planned(inputs, out, op, root, call, before, net, &none).time;
    s.call = detail::simulate_planned(inputs, out, op, root, call, before, net, &work);
    const double shorter = std::min(work.seconds, s.alone);
    if (shorter > 0) s.overlap = (work.seconds + s.alone - s.call.time) / shorter;
    return s;
}

/// simulate_started_reduce of inputs[r] on rank r.
template <reduce_policy Policy = policy::automatic, representation In, representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>>
started_simulation simulate_started_reduce(std::span<const In> inputs, Out& out, const Op& op, int root,
                                           const computation& work, const Policy& policy = {},
                                           const network_model& net = {})
{
    std::vector<const In*> ptrs;
    for (const In& in : inputs) ptrs.push_back(&in);
    return simulate_started_reduce(std::span<const In* const>(ptrs), out, op, root, work, policy, net);
}

} // namespace sparse_reduce
