#pragma once
// The executors' state for a user's communicator, created on first use and
// kept as an MPI attribute of it (mpi/communicator.hpp), freed with it:
//   - the library's private duplicate (mpi/communicator.hpp's private_comm);
//   - the memory one-shot calls work in, so a loop of one-shot calls
//     allocates nothing once its sizes stop growing;
//   - one-shot selection memos, one per policy type;
//   - the started one-shot call (ireduce), until it completes.

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include <mpi.h>

#include "../error.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/tags.hpp"
#include "call_arena.hpp"
#include "node_buffers.hpp"
#include "started_call.hpp"

namespace sparse_reduce::detail {

struct comm_state {
    MPI_Comm dup = MPI_COMM_NULL;      // private_comm(user), owned by its own attribute
    private_duplicate* duplicate = nullptr; // dup's owner (its start count, mpi/tags.hpp)
    node_buffers whole;                // the whole-message reduce (exec/whole_reduce.hpp)
    std::vector<node_buffers> pools;   // the windowed reduce: three per tree (exec/rank_program.hpp)
    call_arena arena;                  // the windowed reduce's bookkeeping
    std::vector<std::shared_ptr<void>> memos; // by memo_slot<M>()
    started_call started;              // ireduce's call (collective/reduce_start.hpp)

    // The memo of type M (created empty on first use): an index per type,
    // not a map keyed by typeid (two strcmp of mangled names per call).
    template <class M>
    M& memo()
    {
        const std::size_t slot = memo_slot<M>();
        if (slot >= memos.size()) memos.resize(slot + 1);
        auto& p = memos[slot];
        if (!p) p = std::make_shared<M>();
        return *static_cast<M*>(p.get());
    }

private:
    static std::size_t next_memo_slot()
    {
        static std::atomic<std::size_t> next{0};
        return next.fetch_add(1, std::memory_order_relaxed);
    }
    template <class M>
    static std::size_t memo_slot()
    {
        static const std::size_t slot = next_memo_slot();
        return slot;
    }
};

// Made on every rank in the same call (mpi/communicator.hpp, agree_on_setup):
// kept on all or thrown on all.
inline comm_state& state_of(MPI_Comm user)
{
    return attached<comm_state>(user, [user] {
        const MPI_Comm dup = private_comm(user);
        auto s = agree_on_setup(dup, [] { return std::make_unique<comm_state>(); }, setup_failed_on);
        s->dup = dup;
        s->duplicate = private_comm_owner(user).get(); // (the attribute keeps it)
        return s;
    });
}

} // namespace sparse_reduce::detail
