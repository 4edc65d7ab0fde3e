#pragma once
// Memory a rank works in, kept across calls (by a plan, or for one-shot
// calls by the communicator's cache, exec/comm_state.hpp): numbered slots of
// 8-aligned bytes, each grown to the largest request and never shrunk, so a
// loop of calls allocates only while its sizes still grow.
//
// A whole-message reduce's buffers also keep a drain: room for one piece of
// a message, made before the first whole-message call sends anything
// (inside its agreement, reduce_core::reduce_whole) and touched only when
// used. A rank that cannot allocate a buffer for a message it must receive
// receives it there piece by piece and drops it (exec/whole_transport.hpp),
// so its sender is not left waiting.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../detail/uninit_vector.hpp"

namespace sparse_reduce::detail {

class node_buffers {
public:
    template <class U>
    U* get(std::size_t slot, std::size_t count)
    {
        static_assert(alignof(U) <= 8);
        if (slots_.size() <= slot) slots_.resize(slot + 1);
        auto& v = slots_[slot];
        const std::size_t words = (count * sizeof(U) + 7) / 8 + 1;
        v.grow(words);
        return reinterpret_cast<U*>(v.data());
    }

    void make_drain(std::size_t bytes) { drain_.make(bytes); }
    std::span<std::byte> drain() const { return drain_; }

private:
    std::vector<raw_room<std::uint64_t>> slots_;
    byte_room drain_;
};

} // namespace sparse_reduce::detail
