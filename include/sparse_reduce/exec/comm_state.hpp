#pragma once
// The library's state for a user's communicator, created on first use and
// kept as an MPI attribute of it (freed with it), as Boost.MPI and KaMPIng
// keep theirs:
//   - a private duplicate, so the library's messages never mix with the
//     user's (MPI_Comm_dup is paid once);
//   - the memory one-shot calls work in, so a loop of one-shot calls
//     allocates nothing once its sizes stop growing;
//   - one-shot selection memos, one per policy type.

#include <cstddef>
#include <map>
#include <memory>
#include <typeindex>
#include <vector>

#include <mpi.h>

#include "../detail/communicator.hpp"
#include "../error.hpp"
#include "call_arena.hpp"
#include "node_buffers.hpp"

namespace sparse_reduce::detail {

// MPI counts are int: raw transfers are cut into pieces of at most 1 GiB,
// cut the same way on both sides.
inline constexpr std::size_t max_piece_bytes = std::size_t{1} << 30;

struct comm_state {
    MPI_Comm dup = MPI_COMM_NULL;
    node_buffers whole;                // the whole-message reduce (exec/whole_reduce.hpp)
    std::vector<node_buffers> pools;   // the windowed reduce: three per tree (exec/rank_program.hpp)
    call_arena arena;                  // the windowed reduce's bookkeeping
    std::map<std::type_index, std::shared_ptr<void>> memos;

    // The memo of type M (created empty on first use).
    template <class M>
    M& memo()
    {
        auto& p = memos[std::type_index(typeid(M))];
        if (!p) p = std::make_shared<M>();
        return *static_cast<M*>(p.get());
    }
};

inline comm_state& state_of(MPI_Comm user)
{
    static int keyval = MPI_KEYVAL_INVALID;
    if (keyval == MPI_KEYVAL_INVALID) {
        int initialized = 0, finalized = 0;
        MPI_Initialized(&initialized);
        MPI_Finalized(&finalized);
        if (!initialized || finalized)
            fail("MPI is not initialised: create a boost::mpi::environment (or call MPI_Init) before any collective");
        auto destroy = [](MPI_Comm, int, void* attr, void*) -> int {
            auto* s = static_cast<comm_state*>(attr);
            int done = 0;
            MPI_Finalized(&done);
            if (!done) MPI_Comm_free(&s->dup);
            delete s;
            return MPI_SUCCESS;
        };
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, destroy, &keyval, nullptr);
    }
    require_intracommunicator(user);
    void* attr = nullptr;
    int found = 0;
    MPI_Comm_get_attr(user, keyval, &attr, &found);
    if (found) return *static_cast<comm_state*>(attr);
    auto s = std::make_unique<comm_state>();
    if (MPI_Comm_dup(user, &s->dup) != MPI_SUCCESS) fail("MPI_Comm_dup failed");
    MPI_Comm_set_attr(user, keyval, s.get());
    return *s.release();
}

// The library's own duplicate of a communicator.
inline MPI_Comm private_comm(MPI_Comm user) { return state_of(user).dup; }

} // namespace sparse_reduce::detail
