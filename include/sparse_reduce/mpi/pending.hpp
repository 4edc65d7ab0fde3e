#pragma once
// The runs of started calls (reduce_plan::start) still exchanging messages,
// in this process: a list that every progress point walks. A run moves
// only when this process calls into the library, so every call that could
// leave another rank waiting on one of these runs moves them all first:
//
//   test(), wait()            poll every run (wait blocks in MPI when its
//                             run is the only one)
//   a blocking call, making   complete every run first (complete_pending):
//   a plan, a start that      a rank blocked in an agreement must not hold
//   agrees on a new schedule  up a run another rank is waiting on
//
// A run is a hook in an intrusive list: starting one allocates nothing.
// The library's calls are not thread-safe, and neither is this list.

namespace sparse_reduce::detail {

struct pending_run {
    // Moves the run on: may_wait blocks in MPI until something completes.
    // True once every message of the run is sent and received. Never throws:
    // a failure is the run's to report when its request completes.
    bool (*advance)(void* context, bool may_wait) noexcept = nullptr;
    void* context = nullptr;
    pending_run* prev = nullptr;
    pending_run* next = nullptr;
    bool linked = false;
};

struct pending_runs {
    pending_run* head = nullptr;

    void link(pending_run& r) noexcept
    {
        r.prev = nullptr;
        r.next = head;
        if (head) head->prev = &r;
        head = &r;
        r.linked = true;
    }
    void unlink(pending_run& r) noexcept
    {
        if (!r.linked) return;
        (r.prev ? r.prev->next : head) = r.next;
        if (r.next) r.next->prev = r.prev;
        r.prev = r.next = nullptr;
        r.linked = false;
    }
};

inline pending_runs& pending() noexcept
{
    static pending_runs runs;
    return runs;
}

// Every run one step on, without waiting; a finished run leaves the list.
inline void poll_pending() noexcept
{
    for (pending_run* r = pending().head; r;) {
        pending_run* next = r->next;
        if (r->advance(r->context, false)) pending().unlink(*r);
        r = next;
    }
}

// Moves run (on the list) to its end, and the others with it: blocking in
// MPI when it is the only run, else polling all.
inline void finish_pending(pending_run& run) noexcept
{
    while (run.linked) {
        if (pending().head == &run && !run.next) {
            if (run.advance(run.context, true)) pending().unlink(run);
        } else {
            poll_pending();
        }
    }
}

// Every run to its end (a progress point that must not block with runs in
// flight: see the top of this file).
inline void complete_pending() noexcept
{
    while (pending().head) finish_pending(*pending().head);
}

} // namespace sparse_reduce::detail
