#pragma once
// Allocation failure on one rank, for one test executable: replaces the
// global operator new (replace_new.hpp) so that, while a failing_allocations
// guard lives, every request of at least its many bytes throws
// std::bad_alloc, and while a failing_allocation guard lives, its n-th
// request does (once). Include in exactly one source file of the executable.

#include "replace_new.hpp"

#include <cstddef>

namespace sparse_reduce_test {

inline std::size_t fail_from = 0; // 0: every allocation succeeds
inline std::size_t fail_countdown = 0; // 0: none; else the request that makes it 0 fails
inline bool fail_fired = false;

// Allocations of `bytes` or more (0: none) fail on this process while it lives.
struct failing_allocations {
    explicit failing_allocations(std::size_t bytes) { fail_from = bytes; }
    ~failing_allocations() { fail_from = 0; }
    failing_allocations(const failing_allocations&) = delete;
    failing_allocations& operator=(const failing_allocations&) = delete;
};

// The n-th allocation (n >= 1; 0: none) fails while this lives; fired()
// says whether it came.
struct failing_allocation {
    explicit failing_allocation(std::size_t n)
    {
        fail_countdown = n;
        fail_fired = false;
    }
    ~failing_allocation() { fail_countdown = 0; }
    bool fired() const { return fail_fired; }
    failing_allocation(const failing_allocation&) = delete;
    failing_allocation& operator=(const failing_allocation&) = delete;
};

} // namespace sparse_reduce_test

bool sparse_reduce_test::allocation_hook(std::size_t bytes)
{
    if (fail_countdown != 0 && --fail_countdown == 0) {
        fail_fired = true;
        return false;
    }
    return fail_from == 0 || bytes < fail_from;
}
