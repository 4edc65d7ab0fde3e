#pragma once
// reduce_plan::start and ireduce (collective/reduce_core.hpp's
// reduce_core::start): a windowed reduce, started and left running. What a
// blocking call keeps on its stack (the executor, the rank program, the
// input's reader, the root's output) lives in a slot (exec/started_call.hpp:
// the plan's, or the communicator's), carved from its call arena; its run
// joins the process's pending runs (mpi/pending.hpp), which test() and
// wait() move on. Also here: what the blocking windowed call shares with
// it (ready_windows, windows_report).
//
//   start:     the blocking call's agreement and schedule (resolve, settle),
//              the program built on tags of its own (mpi/tags.hpp,
//              request_tags), the first messages posted
//   progress:  node_run::poll (never waits) or advance (waits), from any
//              request's test() or wait(), or a call that must not block
//              with runs in flight
//   complete:  windows_report, as a blocking call ends: the report, the
//              root's output written, the error thrown where it would be
//
// Windows only: the whole-message path, which a blocking call may take for
// a sparse input, blocks in its transfers.

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "../exec/mpi_executor.hpp"
#include "../exec/rank_program.hpp"
#include "../exec/started_call.hpp"
#include "../mpi/pending.hpp"
#include "../mpi/tags.hpp"
#include "reduce_core.hpp"
#include "reduce_request.hpp"

namespace sparse_reduce::detail {

// The caller's output for a started call's duration: an lvalue by address,
// a view passed as a temporary (a std::span) by value.
template <class Target>
struct held_output {
    using type = std::remove_cvref_t<Target>;
    static constexpr bool by_address = std::is_lvalue_reference_v<Target>;
    std::conditional_t<by_address, type*, type> held;
    type& get()
    {
        if constexpr (by_address) return *held;
        else return held;
    }
};

// What start hands down through reduce_checked to start_windows.
template <class Held>
struct start_args {
    reduce_request* request;
    Held out;
    double started_at;
};

// The report of a windowed call whose messages are all in (a blocking
// call's run_windows, a started call's completion); the root's output
// written, emptied where the call failed. Throws as reduce does.
template <class T, class Op, class Reader>
report reduce_core::windows_report(const schedule& sched, const detail::rank_program<T, Op, Reader>& program,
                                   const T& id, sparse_writer<T> write, void* out)
{
    const bool destination = rank_ == root_;
    report rep;
    rep.algorithm = describe_once(sched, false);
    rep.reason = report_text(memo_->reason);
    rep.tuning = tuning_name();
    rep.bytes_sent = program.bytes_sent();
    rep.bytes_received = program.bytes_received();
    rep.messages_sent = program.messages_sent();
    std::string write_failure; // every message is in: the root's own failure
    if (write && destination) { // emptied if the call failed
        try {
            write(out, program.results(), program.windows(), dimension_, id, program.failed());
        } catch (...) {
            write_failure = detail::rank_failure_text(rank_);
        }
    }
    program.throw_if_failed(destination);
    if (!write_failure.empty()) detail::fail("reduce failed on " + write_failure);
    return rep;
}

template <class T, class Op, class Reader>
void reduce_core::ready_windows(std::optional<detail::rank_program<T, Op, Reader>>& program,
                                std::optional<detail::node_run>& run, const schedule& sched,
                                const detail::stream_config& cfg, const Op& op, detail::own_input<T, Reader>& own,
                                const detail::root_output<T>& result, const std::string& local_failure,
                                call_arena::lease* mem, int tags)
{
    try {
        program.emplace(sched.trees, rank_, cfg, op, own, result, *pools_, local_failure, mem, tags);
    } catch (const std::bad_alloc&) {
        settle(detail::rank_failure_text(rank_)); // throws
    }
    run.emplace(private_, program->refs(), mem);
    settle(run->failure().empty() ? run->failure() : detail::concat("rank ", rank_, ": ", run->failure()));
}

// A started call's state, in its slot's call arena.
template <class T, class Op, class Reader, class Held>
struct reduce_core::started_windows {
    started_windows(const reduce_core& c, Held h, const schedule& s, const T& identity,
                    call_arena::lease* mem)
        : core(c), out(std::move(h)), sched(&s), id(identity), window_counts(mem)
    {
    }

    reduce_core core; // the plan's: keeps its memory, policy and duplicate while the call runs
    Held out;
    const schedule* sched; // in the plan's memo, which no other call of the plan touches meanwhile
    T id;
    arena_array<std::uint32_t> window_counts;
    std::optional<own_input<T, Reader>> own;
    root_output<T> result;
    std::optional<rank_program<T, Op, Reader>> program;
    std::optional<node_run> run;
    std::string run_failure; // the executor's own (an internal error)

    static bool advance(void* self, bool may_wait) noexcept
    {
        auto& s = *static_cast<started_windows*>(self);
        try {
            return may_wait ? s.run->advance() : s.run->poll();
        } catch (...) {
            s.run_failure = text_or_out_of_memory([] { return current_exception_text(); });
            return true;
        }
    }

    static report complete(started_call& call)
    {
        auto* s = static_cast<started_windows*>(call.state);
        // call is in the plan's memory, which s->core may hold last
        const std::shared_ptr<plan_memory> keep = s->core.memory_;
        report rep;
        std::exception_ptr error;
        try {
            if (!s->run_failure.empty()) fail(s->run_failure);
            rep = s->core.windows_report(*s->sched, *s->program, s->id, writer_for<T, typename Held::type>(),
                                         &s->out.get());
        } catch (...) {
            if (s->core.rank_ == s->core.root_) clear_root_output(s->out.get());
            error = std::current_exception();
        }
        release(call);
        if (error) std::rethrow_exception(error);
        return rep;
    }

    // The state destroyed and the arena given back.
    static void release(started_call& call) noexcept
    {
        static_cast<started_windows*>(call.state)->~started_windows();
        call.state = nullptr;
        call.lease.reset();
    }
};

template <class T, class In, class Op, class Start>
void reduce_core::start_windows(const In& in, const Op& op, const schedule& sched, local_counts& counts,
                                std::string local_failure, Start started)
{
    using held_t = decltype(started.out);
    using state_t = started_windows<T, Op, own_reader_t<In>, held_t>;
    // every rank counts every start, failed or not
    const int tags = request_tags(duplicate_->starts++);
    started_call& call = started_slot();
    auto& lease = call.lease.emplace(*arena_);
    const stream_config cfg = make_stream_config(sched);
    state_t* s = nullptr;
    try {
        void* p = lease.allocate(sizeof(state_t), alignof(state_t));
        s = new (p) state_t(*this, std::move(started.out), sched, identity<T>(op), &lease);
    } catch (const std::bad_alloc&) {
        call.lease.reset();
        settle(rank_failure_text(rank_)); // throws
    }
    call.state = s;
    call.complete = &state_t::complete;
    call.started_at = started.started_at;
    call.run.advance = &state_t::advance;
    call.run.context = s;
    try {
        make_windows_io(in, s->out.get(), sched, cfg, s->id, counts, s->window_counts, s->own, s->result,
                        local_failure);
        ready_windows(s->program, s->run, sched, cfg, op, *s->own, s->result, local_failure, &lease, tags);
    } catch (...) {
        if (rank_ == root_) clear_root_output(s->out.get());
        state_t::release(call);
        throw;
    }
    started.request->attach(call);
    if (!state_t::advance(s, false)) pending().link(call.run); // the first messages posted
}

template <class In, class Out, class Op>
void reduce_core::start(const In& in, Out&& out, const Op& op, reduce_request& request,
                        const std::string& failed_before)
{
    if constexpr (checked_call<In, Out, Op>()) {
        require_not_finalized();
        complete_started(started_slot()); // the plan's (or communicator's) memory is the new call's
        unsettled_ = nullptr;
        const double t0 = MPI_Wtime();
        auto&& target = writable_output(std::forward<Out>(out));
        using held_t = held_output<decltype(target)>;
        held_t held;
        if constexpr (held_t::by_address) held.held = &target;
        else held.held = std::move(target);
        auto& typed = held.get();
        reduce_checked(in, typed, op, failed_before, start_args<held_t>{&request, std::move(held), t0});
    }
}

} // namespace sparse_reduce::detail
