#pragma once
// The communicator a collective is handed, and the library's own duplicate
// of it.
//
//   require_mpi_running()                  throws unless MPI is initialised and not finalised
//   require_not_finalized()                throws once MPI_Finalize has run (a plan's check)
//   require_intracommunicator(comm, who)   throws unless comm is an intracommunicator
//   enter_collective(comm, who)            that, then the started calls' transfers finished
//   attached<S>(comm, make)                comm's S, made on first use and kept as
//                                          an MPI attribute of comm (freed with
//                                          it), as Boost.MPI and KaMPIng keep theirs
//   private_comm(comm)                     the library's duplicate of comm: its
//                                          messages never mix with the user's
//                                          (MPI_Comm_dup is paid once); an MPI
//                                          error on it ends the job
//   private_comm_owner(comm)               a share of it, which a plan keeps
//   agree_on_setup(comm, make, what)       make() on every rank, kept only if it
//                                          succeeded on all of them

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include <mpi.h>

#include "../error.hpp"
#include "first_failure.hpp"
#include "pending.hpp"

namespace sparse_reduce::detail {

[[noreturn]] inline void fail_mpi_not_running()
{
    fail("MPI is not initialised: create a boost::mpi::environment (or call MPI_Init) before any collective");
}

// Set by MPI_Finalize. It deletes MPI_COMM_SELF's attributes before anything
// else (MPI 4.0, section 11.2.4), and the library keeps one there whose
// deletion sets this. Read where no other check runs: by plans, which keep
// their communicators' handles, and by attached's fast path, whose
// communicator's attributes MPI_Finalize leaves alone (a duplicate never freed).
inline std::atomic<bool> mpi_finalized{false};

inline void watch_for_finalize()
{
    static const bool watching = [] {
        int keyval = MPI_KEYVAL_INVALID;
        auto finalizing = [](MPI_Comm, int, void*, void*) -> int {
            mpi_finalized.store(true, std::memory_order_release);
            return MPI_SUCCESS;
        };
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalizing, &keyval, nullptr);
        MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr);
        return true;
    }();
    (void)watching;
}

// Before any other MPI call: without it Open MPI aborts the process instead.
// Run where a communicator is first seen (require_intracommunicator, and so
// attached's slow path), not per call: Open MPI 4.1's MPI_Initialized and
// MPI_Finalized take a mutex and run hooks, about 120 instructions together.
// Calls after MPI_Finalize are still checked: it sets mpi_finalized, which
// attached's fast path and every plan's call read (test/standalone/).
inline void require_mpi_running()
{
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) fail_mpi_not_running();
    watch_for_finalize();
}

// A plan's call, which makes no other check first: one atomic load.
inline void require_not_finalized()
{
    if (mpi_finalized.load(std::memory_order_acquire)) fail_mpi_not_running();
}

// Every collective works on intracommunicators only: an intercommunicator's
// ranks and collectives mean the remote group, so its result would be
// meaningless. Throws sparse_reduce::error on every rank that passes one
// (all of them, for a collective call), before anything is sent.
inline void require_intracommunicator(MPI_Comm comm, const char* who = "sparse_reduce")
{
    require_mpi_running();
    if (comm == MPI_COMM_NULL) fail(std::string(who) + ": the communicator is MPI_COMM_NULL");
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter) fail(std::string(who) + ": an intercommunicator was passed; collectives need an intracommunicator");
}

// A one-shot collective's first step: comm checked (require_intracommunicator),
// then every started call's transfer finished (mpi/pending.hpp), so no rank
// waits in this collective on a rank that waits on one of those.
inline void enter_collective(MPI_Comm comm, const char* who)
{
    require_intracommunicator(comm, who);
    complete_pending();
}

// Bumped when any S attribute is deleted (its communicator freed): a freed
// handle can come back for a new communicator, so every thread's cached
// (handle, S*) pair below must be dropped then.
template <class S>
inline std::atomic<std::uint64_t> attached_generation{1};

// The attribute key for objects of type S, created on first use; the
// attribute's object is deleted with its communicator.
template <class S>
int attribute_keyval()
{
    static int keyval = MPI_KEYVAL_INVALID;
    if (keyval == MPI_KEYVAL_INVALID) {
        auto destroy = [](MPI_Comm, int, void* attr, void*) -> int {
            attached_generation<S>.fetch_add(1, std::memory_order_acq_rel);
            delete static_cast<S*>(attr);
            return MPI_SUCCESS;
        };
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, destroy, &keyval, nullptr);
    }
    return keyval;
}

// user's S; make() (returning a std::unique_ptr<S>) builds it on first use.
// The last communicator's S is remembered per thread: Open MPI's
// MPI_Comm_get_attr and MPI_Comm_test_inter cost about 550 instructions, a
// fifth of an empty one-shot reduce. The handle was checked to be an
// intracommunicator when it was remembered, and stays one.
template <class S, class Make>
S& attached(MPI_Comm user, Make&& make)
{
    struct last_t {
        MPI_Comm comm = MPI_COMM_NULL;
        S* state = nullptr;
        std::uint64_t generation = 0;
    };
    thread_local last_t last;
    const std::uint64_t generation = attached_generation<S>.load(std::memory_order_acquire);
    if (user == last.comm && generation == last.generation && user != MPI_COMM_NULL &&
        !mpi_finalized.load(std::memory_order_relaxed))
        return *last.state;

    require_intracommunicator(user); // first: is MPI initialised (else Open MPI aborts)
    const int keyval = attribute_keyval<S>();
    void* attr = nullptr;
    int found = 0;
    MPI_Comm_get_attr(user, keyval, &attr, &found);
    S* s = static_cast<S*>(attr);
    if (!found) {
        std::unique_ptr<S> made = make();
        MPI_Comm_set_attr(user, keyval, made.get());
        s = made.release();
    }
    last = {user, s, generation};
    return *s;
}

// The duplicate, freed with the user's communicator or the last plan made
// on it (unless MPI has been finalised by then).
struct private_duplicate {
    MPI_Comm comm = MPI_COMM_NULL;
    unsigned long long starts = 0; // reduce_plan::start calls on it (mpi/tags.hpp, request_tags)

    private_duplicate() = default;
    private_duplicate(const private_duplicate&) = delete;
    private_duplicate& operator=(const private_duplicate&) = delete;
    ~private_duplicate()
    {
        int done = 0;
        MPI_Finalized(&done);
        if (!done && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    }
};

// The library's own duplicate of a communicator. Its error handler is
// MPI_ERRORS_ARE_FATAL whatever the user's is (boost::mpi::environment sets
// MPI_ERRORS_RETURN on MPI_COMM_WORLD, and a duplicate inherits it): every
// input is validated before MPI sees it, so an error inside the library's
// exchanges is MPI's own (a lost peer, exhausted resources). After one MPI's
// state is undefined (MPI 4.0, section 9.3) and the peers of the failing call
// cannot be told; returning the code, or throwing on the one rank that saw
// it, would leave them waiting forever. The job ends instead, with MPI's
// message naming the call and the error (test/standalone/mpi_error_is_fatal.cpp).
//
// The attribute shares the duplicate: a plan keeps it too
// (private_comm_owner), so a plan outlives the user's communicator, and the
// duplicate is freed with the last of them.
struct shared_duplicate {
    std::shared_ptr<private_duplicate> owner;
};

// The start of the error a failed setup throws on every rank.
inline constexpr const char* setup_failed_on = "setting up the communicator failed on";

// A communicator's state is made on its first use, on every rank in the same
// call, and an allocation can fail on one rank only. make() runs on every
// rank; then the ranks agree over `over` (one allreduce, on first use only):
// all keep what they made, or all throw "<what> failed on rank r: ...",
// and the next call starts again from nothing on every rank. A rank that
// threw alone would leave the others waiting for it.
template <class Make>
auto agree_on_setup(MPI_Comm over, Make&& make, const char* what) -> decltype(make())
{
    decltype(make()) made;
    std::string failure;
    try {
        made = make();
    } catch (...) {
        int me = 0;
        MPI_Comm_rank(over, &me);
        failure = rank_failure_text(me);
    }
    throw_if_any_failed(over, failure, what);
    return made;
}

inline const std::shared_ptr<private_duplicate>& private_comm_owner(MPI_Comm user)
{
    return attached<shared_duplicate>(user, [user] {
               // allocated before the (collective) duplication, which every rank
               // then makes, failed or not, so the agreement has a communicator
               std::unique_ptr<shared_duplicate> made;
               std::string failure;
               try {
                   made = std::make_unique<shared_duplicate>(shared_duplicate{std::make_shared<private_duplicate>()});
               } catch (...) {
                   int me = 0;
                   MPI_Comm_rank(user, &me);
                   failure = rank_failure_text(me);
               }
               MPI_Comm dup = MPI_COMM_NULL;
               if (MPI_Comm_dup(user, &dup) != MPI_SUCCESS) fail("MPI_Comm_dup failed");
               MPI_Comm_set_errhandler(dup, MPI_ERRORS_ARE_FATAL);
               try {
                   throw_if_any_failed(dup, failure, setup_failed_on);
               } catch (...) {
                   MPI_Comm_free(&dup);
                   throw;
               }
               made->owner->comm = dup;
               return made;
           })
        .owner;
}

inline MPI_Comm private_comm(MPI_Comm user)
{
    return private_comm_owner(user)->comm;
}

} // namespace sparse_reduce::detail
