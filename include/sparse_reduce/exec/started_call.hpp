#pragma once
// A plan's started call (reduce_plan::start): its run on the process's
// pending list (mpi/pending.hpp), and its state (the rank program, the
// executor, the input's reader, the root's output) carved from the plan's
// call arena, which the call holds until it completes. A plan has one such
// slot, and so has a communicator for its one-shot calls (ireduce): the
// next call on it completes the one it started first.
//
//   start ── run linked ── test()/wait()/any progress point ── run done
//         ── complete: the report, the root's output written, the error
//            kept for wait(); the state destroyed, the arena given back

#include <optional>

#include "../mpi/pending.hpp"
#include "../report.hpp"
#include "call_arena.hpp"

namespace sparse_reduce {
class reduce_request;
}

namespace sparse_reduce::detail {

// The room a plan keeps for its started call's state (no start allocates it).
inline constexpr std::size_t started_room_bytes = 4096;

struct started_call {
    pending_run run;
    std::optional<call_arena::lease> lease; // the arena the state lives in
    void* state = nullptr;
    // After the run: the report (throws as the blocking call would, on the
    // ranks it would), the state destroyed; state is then null.
    report (*complete)(started_call& self) = nullptr;
    reduce_request* owner = nullptr; // where the outcome goes
    double started_at = 0;           // MPI_Wtime at start

    bool busy() const { return state != nullptr; }

    started_call() = default;
    started_call(const started_call&) = delete;
    started_call& operator=(const started_call&) = delete;
    // Destroyed with a call in flight (its communicator freed first, which
    // the documentation forbids): at least off the process's list.
    ~started_call() { pending().unlink(run); }
};

} // namespace sparse_reduce::detail
