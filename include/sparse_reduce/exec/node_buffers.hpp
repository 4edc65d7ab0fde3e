#pragma once
// Memory a rank works in, kept across calls (by a plan, or for one-shot
// calls by the communicator's cache, exec/comm_state.hpp): numbered slots of
// 8-aligned bytes, each grown to the largest request and never shrunk, so a
// loop of calls allocates only while its sizes still grow.

#include <cstddef>
#include <cstdint>
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
        if (v.size() < words) v.resize(words);
        return reinterpret_cast<U*>(v.data());
    }

private:
    std::vector<uninit_vector<std::uint64_t>> slots_;
};

} // namespace sparse_reduce::detail
