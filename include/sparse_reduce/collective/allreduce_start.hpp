#pragma once
// allreduce_plan::start and iallreduce (collective/allreduce.hpp): the
// reduce_broadcast algorithm, started and left running as two chained
// machines on the process's pending runs (mpi/pending.hpp):
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
// The state is built in the plan's slot (its exchange buffers: the
// communicator's for iallreduce; made with the plan), so a plan runs one
// call at a time and no start allocates it. Tags: one start number for the
// broadcast (status, two streams), the next for the reduce (mpi/tags.hpp).

#include <exception>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include <mpi.h>

#include "../error.hpp"
#include "../exec/started_call.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/pending.hpp"
#include "../mpi/tags.hpp"
#include "allreduce/reduce_broadcast.hpp"
#include "allreduce/status.hpp"
#include "reduce_core.hpp"
#include "reduce_request.hpp"
#include "reduce_start.hpp"

namespace sparse_reduce::detail {

template <class T, class Held, class Op>
struct started_allreduce {
    started_allreduce(std::shared_ptr<exchange_buffers> b, std::shared_ptr<private_duplicate> d, std::size_t dimension,
                      Held h, const Op& o, int tags, report_text why)
        : buffers(std::move(b)), duplicate(std::move(d)), out(std::move(h)), op(o), reason(std::move(why)),
          broadcast(duplicate->comm, dimension, std::span<std::byte>(buffers->drain),
                    tags + 1, tags + 2)
    {
    }

    std::shared_ptr<exchange_buffers> buffers;  // the drain, and the slot this state is in
    std::shared_ptr<private_duplicate> duplicate; // kept while the call runs (the plan may go first)
    Held out;
    Op op;
    report_text reason; // the report's
    result_broadcast<T> broadcast;
    reduce_request reduce; // the reduce to 0: done() once completed here
    std::string run_failure; // an internal error of the run

    static bool advance(void* self, bool may_wait) noexcept
    {
        auto& s = *static_cast<started_allreduce*>(self);
        try {
            if (!s.reduce.done()) {
                // its own run moves it; may_wait comes only once this run is the last
                if (!request_access::transfers_done(s.reduce)) return false;
                s.broadcast.reduced([&] { return s.reduce.wait(); }, s.out.get(), s.op);
            }
            return s.broadcast.step(may_wait);
        } catch (...) {
            s.run_failure = text_or_out_of_memory([] { return current_exception_text(); });
            return true;
        }
    }

    static report complete(started_call& call)
    {
        auto* s = static_cast<started_allreduce*>(call.state);
        const std::shared_ptr<exchange_buffers> keep = s->buffers; // call is in them
        report rep;
        std::exception_ptr error;
        try {
            if (!s->run_failure.empty()) fail(s->run_failure);
            rep = s->broadcast.finish(s->out.get(), s->op);
            rep.reason = s->reason;
            rep.wait_seconds = 0; // (the reduce's, not this call's: wait() sets it)
        } catch (...) {
            error = std::current_exception();
        }
        s->~started_allreduce();
        call.state = nullptr;
        if (error) std::rethrow_exception(error);
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
    started_call& call = buffers->started;
    complete_started(call); // the plan's previous call
    const double t0 = MPI_Wtime();
    const int tags = request_tags(duplicate->starts++); // every rank counts every start
    held_t held;
    if constexpr (held_t::by_address) held.held = &target;
    else held.held = std::move(target);
    static_assert(sizeof(state_t) <= started_room_bytes && alignof(state_t) <= alignof(std::max_align_t),
                  "a started allreduce's state outgrows its room in exchange_buffers");
    state_t* s = new (buffers->started_room) state_t(buffers, duplicate, dimension, std::move(held), op, tags, reason);
    s->broadcast.prepare(s->out.get(), reduce.policy(), broadcast_segment, bitmap, identity<T>(op));
    try {
        reduce.start(in, s->out.get(), op, s->reduce, s->broadcast.failure()); // throws on every rank alike
    } catch (...) {
        s->~state_t();
        throw;
    }
    call.state = s;
    call.complete = &state_t::complete;
    call.started_at = t0;
    call.run.advance = &state_t::advance;
    call.run.context = call.state;
    request_access::attach(request, call);
    if (!state_t::advance(call.state, false)) pending().link(call.run);
}

} // namespace sparse_reduce::detail
