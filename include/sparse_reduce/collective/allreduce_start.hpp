#pragma once
// allreduce_plan::start and iallreduce (collective/allreduce.hpp), left
// running on the process's pending runs (mpi/pending.hpp), never waiting
// (MPI_Improbe, MPI_Imrecv, MPI_Test):
//
// recursive_doubling (started_doubling): the blocking call's steps
// (doubling_run), then the agreement on failures by messages over the
// same steps (doubling_agreement), on the call's own tags.
//
// split_allgather (started_split): the blocking call's steps (grouped_call
// on the one group of all ranks: its counts and raw flags exchanged by
// point-to-point messages), then the same agreement.
//
// reduce_broadcast (started_allreduce), as two chained machines:
//
//   start      the reduce to 0 started (reduce_core::start, its own run),
//              the broadcast half made (result_broadcast::prepare)
//   run        while the reduce's run is in flight: nothing of its own;
//              then the reduce completed (its report or failure, the
//              root's result) and the broadcast stepped, never waiting
//              (MPI_Improbe, MPI_Imrecv, MPI_Testall)
//   complete   result_broadcast::finish: the report, `out` written on the
//              other ranks, the error thrown where the blocking call throws
//
// Either state is built in the plan's slot (its exchange buffers: the
// communicator's for iallreduce; made with the plan), so a plan runs one
// call at a time and no start allocates it. Tags (mpi/tags.hpp): one start
// number for the broadcast (status, two streams), the next for the reduce;
// one for recursive doubling and for split_allgather (data, agreement).

#include <exception>
#include <cstddef>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <mpi.h>

#include "../error.hpp"
#include "../exec/started_call.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/pending.hpp"
#include "../mpi/tags.hpp"
#include "allreduce/doubling_agreement.hpp"
#include "allreduce/grouped.hpp"
#include "allreduce/recursive_doubling.hpp"
#include "allreduce/reduce_broadcast.hpp"
#include "allreduce/status.hpp"
#include "reduce_core.hpp"
#include "reduce_request.hpp"
#include "reduce_start.hpp"

namespace sparse_reduce::detail {

// What a started allreduce's (or pattern plan's) state holds beside its
// machine. Owner: what holds its slot (started, started_room) and its
// messages' buffers: the plan's exchange buffers, or its pattern_state.
template <class Held, class Op, class Owner = exchange_buffers>
struct started_base {
    std::shared_ptr<Owner> buffers;               // the slot this state is in, the messages' buffers
    std::shared_ptr<private_duplicate> duplicate; // kept while the call runs (the plan may go first)
    Held out;
    Op op;
    report_text reason;      // the report's
    std::string run_failure; // an internal error of the run
};

// A state S's run: S::step (never waiting unless may_wait; true once every
// message is in and sent), its throw kept as the run's failure.
template <class S>
bool advance_started(void* self, bool may_wait) noexcept
{
    auto& s = *static_cast<S*>(self);
    try {
        return s.step(may_wait);
    } catch (...) {
        s.run_failure = text_or_out_of_memory([] { return current_exception_text(); });
        return true;
    }
}

// A state S's completion: S::finish's report, or the call's error; the
// state destroyed either way.
template <class S>
report complete_started_state(started_call& call)
{
    auto* s = static_cast<S*>(call.state);
    const auto keep = s->buffers; // call is in them
    report rep;
    std::exception_ptr error;
    try {
        if (!s->run_failure.empty()) fail(s->run_failure);
        rep = s->finish();
        rep.reason = s->reason;
    } catch (...) {
        error = std::current_exception();
    }
    s->~S();
    call.state = nullptr;
    if (error) std::rethrow_exception(error);
    return rep;
}

// The plan's slot for a state S, its previous call completed first.
template <class S, class Owner>
void* started_room_for(Owner& buffers)
{
    static_assert(sizeof(S) <= sizeof(buffers.started_room) && alignof(S) <= alignof(std::max_align_t),
                  "a started call's state outgrows the room its plan keeps for it");
    complete_started(buffers.started);
    return buffers.started_room;
}

// The state s, made in its slot, set running: the request attached, one
// step taken, the run on the pending list unless that finished it.
template <class S>
void run_started(S* s, double t0, reduce_request& request)
{
    started_call& call = s->buffers->started;
    call.state = s;
    call.complete = &complete_started_state<S>;
    call.started_at = t0;
    call.run.advance = &advance_started<S>;
    call.run.context = s;
    request_access::attach(request, call);
    if (!advance_started<S>(s, false)) pending().link(call.run);
}

// The caller's output as a started call holds it: by address, or a view by value.
template <class Target>
held_output<Target> hold_output(Target&& target)
{
    held_output<Target> held;
    if constexpr (held_output<Target>::by_address) held.held = &target;
    else held.held = std::move(target);
    return held;
}

// A started reduce_broadcast: the started reduce to 0, then the broadcast.
template <class T, class Held, class Op>
struct started_allreduce : started_base<Held, Op> {
    started_allreduce(started_base<Held, Op> base, std::size_t dimension, int tags)
        : started_base<Held, Op>(std::move(base)),
          broadcast(this->duplicate->comm, dimension, std::span<std::byte>(this->buffers->drain), tags + 1, tags + 2)
    {
    }

    result_broadcast<T> broadcast;
    reduce_request reduce; // the reduce to 0: done() once completed here

    bool step(bool may_wait)
    {
        if (!reduce.done()) {
            // its own run moves it; may_wait comes only once this run is the last
            if (!request_access::transfers_done(reduce)) return false;
            broadcast.reduced([&] { return reduce.wait(); }, this->out.get(), this->op);
        }
        return broadcast.step(may_wait);
    }

    report finish()
    {
        report rep = broadcast.finish(this->out.get(), this->op);
        rep.wait_seconds = 0; // (the reduce's, not this call's: wait() sets it)
        return rep;
    }
};

// Starts reduce's plan `reduce` to 0 and the broadcast of its result into
// `target` (the caller's output, as writable_output gives it).
template <class In, class Target, class Op>
void start_reduce_broadcast(reduce_core& reduce, const std::shared_ptr<private_duplicate>& duplicate,
                            const std::shared_ptr<exchange_buffers>& buffers, std::size_t dimension, const In& in,
                            Target&& target, const Op& op, std::size_t broadcast_segment, bool bitmap,
                            const report_text& reason, reduce_request& request)
{
    using T = value_type_of<In>;
    using held_t = held_output<Target>;
    using state_t = started_allreduce<T, held_t, Op>;
    void* room = started_room_for<state_t>(*buffers);
    const double t0 = MPI_Wtime();
    const int tags = request_tags(duplicate->starts++); // every rank counts every start
    auto* s = new (room) state_t({buffers, duplicate, hold_output(std::forward<Target>(target)), op, reason, {}},
                                 dimension, tags);
    s->broadcast.prepare(s->out.get(), reduce.policy(), broadcast_segment, bitmap, identity<T>(op));
    try {
        reduce.start(in, s->out.get(), op, s->reduce, s->broadcast.failure()); // throws on every rank alike
    } catch (...) {
        s->~state_t();
        throw;
    }
    run_started(s, t0, request);
}

// One step of a started call's machine, then of the agreement on its
// failures over recursive doubling's steps (once the machine is done:
// `agreeing`); part() gives this rank's part in it (failure_candidate, and
// its own failure's text).
template <class Call, class Part>
bool step_then_agree(Call& call, doubling_agreement& agreement, bool& agreeing, bool may_wait, const Part& part)
{
    if (!agreeing) {
        if (!call.step(may_wait)) return false;
        agreeing = true;
        const auto [candidate, text] = part();
        agreement.begin(candidate, text);
    }
    return agreement.step(may_wait);
}
// The same for a machine with a call_status (status()).
template <class Call>
bool step_then_agree(Call& call, doubling_agreement& agreement, bool& agreeing, bool may_wait)
{
    return step_then_agree(call, agreement, agreeing, may_wait, [&] {
        const call_status& st = call.status();
        return std::pair<int, std::string_view>(failure_candidate(st.rank, st.failure, st.heard), st.failure);
    });
}

// A started recursive doubling: the run, then the agreement.
template <class T, class Held, class Op>
struct started_doubling : started_base<Held, Op> {
    template <class In>
    started_doubling(started_base<Held, Op> base, std::size_t dimension, const In& in, wire::format fmt,
                     std::size_t segment_bytes, int tags, report_text tuned, bool chosen)
        : started_base<Held, Op>(std::move(base)), tuning(std::move(tuned)), automatic(chosen),
          call(this->duplicate->comm, rank_in(this->duplicate->comm), dimension, in, this->out.get(), this->op, fmt,
               segment_bytes, *this->buffers, tags + 1),
          agreement(this->duplicate->comm, tags + 2, this->buffers->send, this->buffers->receive,
                    std::span<std::byte>(this->buffers->drain))
    {
    }

    report_text tuning; // the report's
    bool automatic;     // its algorithm named as automatic's choice
    doubling_call<T, typename Held::type, Op> call;
    doubling_agreement agreement;
    bool agreeing = false;

    static int rank_in(MPI_Comm c)
    {
        int me = 0;
        MPI_Comm_rank(c, &me);
        return me;
    }

    bool step(bool may_wait) { return step_then_agree(call, agreement, agreeing, may_wait); }

    report finish()
    {
        report rep = call.finish(agreement.first());
        rep.tuning = tuning;
        if (automatic) try {
                rep.algorithm = "automatic: " + rep.algorithm.str();
            } catch (...) { // the call succeeded: a text that cannot be made is left empty
            }
        return rep;
    }
};

// A started split_allgather: the call's steps, then the agreement.
template <class In, class Held, class Op>
struct started_split : started_base<Held, Op> {
    using T = value_type_of<In>;
    started_split(started_base<Held, Op> base, std::shared_ptr<const group_layout> layout, std::size_t dimension,
                  const In& in, wire::format fmt, std::size_t segment_bytes, std::span<const std::uint64_t> counted,
                  int tags, report_text tuned, bool chosen)
        : started_base<Held, Op>(std::move(base)), tuning(std::move(tuned)), automatic(chosen),
          group(std::move(layout)), wire(fmt), window(window_of<T>(segment_bytes)),
          call(*group, group->member, dimension, in, this->out.get(), this->op, fmt, window, *this->buffers, counted,
               tags + 1),
          agreement(this->duplicate->comm, tags + 2, this->buffers->send, this->buffers->receive,
                    std::span<std::byte>(this->buffers->drain))
    {
    }

    report_text tuning; // the report's
    bool automatic;     // its algorithm named as automatic's choice
    std::shared_ptr<const group_layout> group; // kept while the call runs (the plan may go first)
    wire::format wire;
    std::size_t window;
    grouped_call<In, typename Held::type, Op> call;
    doubling_agreement agreement;
    bool agreeing = false;

    bool step(bool may_wait) { return step_then_agree(call, agreement, agreeing, may_wait); }

    report finish()
    {
        throw_agreed(call.status().failure, agreement.first());
        report rep = call.finish();
        rep.tuning = tuning;
        try { // the call succeeded: a text that cannot be made is left empty
            rep.algorithm = std::string(automatic ? "automatic: " : "") + "split_allgather(" +
                            stream_params(wire, window * sizeof(T));
        } catch (...) {
        }
        return rep;
    }
};

// Starts split_allgather of `in` into `target` (the caller's output, as
// writable_output gives it) over the plan's one group of all ranks;
// `counted`: automatic's counts per range (copied into the plan's scratch).
template <class In, class Target, class Op>
void start_split(const std::shared_ptr<private_duplicate>& duplicate, const std::shared_ptr<exchange_buffers>& buffers,
                 const std::shared_ptr<group_layout>& layout, std::size_t dimension, const In& in, Target&& target,
                 const Op& op, wire::format fmt, std::size_t segment_bytes, std::span<const std::uint64_t> counted,
                 const report_text& reason, const report_text& tuning, bool automatic, reduce_request& request)
{
    using state_t = started_split<In, held_output<Target>, Op>;
    if constexpr (!rle_value<value_type_of<In>>)
        if (fmt == wire::rle) fail("the rle wire format needs float or double values");
    void* room = started_room_for<state_t>(*buffers);
    buffers->stream.counted.assign(counted.begin(), counted.end()); // reserved with the plan
    const double t0 = MPI_Wtime();
    const int tags = request_tags(duplicate->starts++); // every rank counts every start
    auto* s = new (room) state_t({buffers, duplicate, hold_output(std::forward<Target>(target)), op, reason, {}}, layout,
                                 dimension, in, fmt, segment_bytes, buffers->stream.counted, tags, tuning, automatic);
    run_started(s, t0, request);
}

// Starts recursive doubling of `in` into `target` (the caller's output, as
// writable_output gives it) on the plan's private duplicate.
template <class In, class Target, class Op>
void start_doubling(const std::shared_ptr<private_duplicate>& duplicate,
                    const std::shared_ptr<exchange_buffers>& buffers, std::size_t dimension, const In& in,
                    Target&& target, const Op& op, wire::format fmt, std::size_t segment_bytes,
                    const report_text& reason, const report_text& tuning, bool automatic, reduce_request& request)
{
    using state_t = started_doubling<value_type_of<In>, held_output<Target>, Op>;
    void* room = started_room_for<state_t>(*buffers);
    const double t0 = MPI_Wtime();
    const int tags = request_tags(duplicate->starts++); // every rank counts every start
    auto* s = new (room) state_t({buffers, duplicate, hold_output(std::forward<Target>(target)), op, reason, {}},
                                 dimension, in, fmt, segment_bytes, tags, tuning, automatic);
    run_started(s, t0, request);
}

} // namespace sparse_reduce::detail
