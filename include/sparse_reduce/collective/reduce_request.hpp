#pragma once
/// @file
/// sparse_reduce::reduce_request: a reduce or allreduce started by a plan's
/// start (or ireduce, iallreduce), to be completed by test() or wait(). Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///     auto req = plan.start(in, out, op);
///     while (!req.test()) compute_a_little();
///     report r = req.wait();

#include <exception>
#include <utility>

#include <mpi.h>

#include "../exec/started_call.hpp"
#include "../mpi/pending.hpp"
#include "../report.hpp"

namespace sparse_reduce {

class reduce_request;

namespace detail {
class reduce_core;
struct request_access;
void complete_started(started_call& call) noexcept;
} // namespace detail

/// A started reduce (reduce_plan::start, ireduce) or allreduce
/// (allreduce_plan::start, iallreduce). The call's `in` and `out` belong
/// to it until it completes: `out` is written then (a reduce's on its root). It moves on
/// whenever this process calls test() or wait() on any request, or makes
/// any other call of the library. Move-only; destroying one that has not
/// completed completes it (an error it would throw is then dropped on this
/// rank; the ranks it reaches throw theirs).
class reduce_request {
public:
    /// A request with nothing to do: test() is true, wait() returns an empty report.
    reduce_request() = default;
    reduce_request(reduce_request&& o) noexcept { take(o); }
    reduce_request& operator=(reduce_request&& o) noexcept
    {
        if (this != &o) {
            finish();
            take(o);
        }
        return *this;
    }
    reduce_request(const reduce_request&) = delete;
    reduce_request& operator=(const reduce_request&) = delete;
    ~reduce_request() { finish(); }

    /// Moves every started call of this process on, without waiting; true
    /// once this one is complete (wait() then returns at once). Never throws:
    /// the call's error is wait()'s.
    bool test()
    {
        if (!call_) return true;
        detail::poll_pending();
        if (call_->run.linked) return false;
        detail::complete_started(*call_);
        return true;
    }

    /// Completes the call and returns its report, whose wait_seconds is the
    /// time spent here; throws sparse_reduce::error on the ranks the
    /// blocking call throws on.
    report wait()
    {
        const double t0 = call_ ? MPI_Wtime() : 0;
        if (call_) {
            detail::complete_started(*call_);
            report_.wait_seconds = MPI_Wtime() - t0;
        }
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
        return report_;
    }

    /// Whether the call has completed (without moving anything on).
    bool done() const { return call_ == nullptr; }

private:
    friend void detail::complete_started(detail::started_call&) noexcept;
    friend class detail::reduce_core; // its start attaches the call
    friend struct detail::request_access;

    void take(reduce_request& o) noexcept
    {
        call_ = std::exchange(o.call_, nullptr);
        if (call_) call_->owner = this;
        report_ = std::move(o.report_);
        error_ = std::exchange(o.error_, nullptr);
    }
    void finish() noexcept
    {
        if (call_) detail::complete_started(*call_);
        error_ = nullptr;
    }

    void attach(detail::started_call& call) noexcept
    {
        call_ = &call;
        call.owner = this;
    }

    detail::started_call* call_ = nullptr;
    report report_;
    std::exception_ptr error_;
};

namespace detail {

// What a started call made of other calls (allreduce's) needs of a request.
struct request_access {
    static void attach(reduce_request& r, started_call& call) noexcept { r.attach(call); }
    // Whether r's messages are all in (the rest of it is its completion),
    // without moving anything on.
    static bool transfers_done(const reduce_request& r) noexcept { return !r.call_ || !r.call_->run.linked; }
};

// Completes a started call: its run to its end (moving every other run on
// meanwhile), then its report, the root's output and its error, handed to
// the request that owns it.
inline void complete_started(started_call& call) noexcept
{
    finish_pending(call.run);
    if (!call.busy()) return;
    reduce_request* owner = std::exchange(call.owner, nullptr);
    const double started_at = call.started_at; // (complete may free the plan that holds call)
    report r;
    std::exception_ptr error;
    try {
        r = call.complete(call);
    } catch (...) {
        error = std::current_exception();
    }
    if (!owner) return;
    r.seconds = MPI_Wtime() - started_at;
    owner->report_ = std::move(r);
    owner->error_ = std::move(error);
    owner->call_ = nullptr;
}

} // namespace detail

} // namespace sparse_reduce
