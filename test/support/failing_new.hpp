#pragma once
// Allocation failure on one rank, for one test executable: replaces the
// global operator new (replace_new.hpp) so that, while a failing_allocations
// guard lives, every request of at least its many bytes throws
// std::bad_alloc. Include in exactly one source file of the executable.

#include "replace_new.hpp"

#include <cstddef>

namespace sparse_reduce_test {

inline std::size_t fail_from = 0; // 0: every allocation succeeds

// Allocations of `bytes` or more (0: none) fail on this process while it lives.
struct failing_allocations {
    explicit failing_allocations(std::size_t bytes) { fail_from = bytes; }
    ~failing_allocations() { fail_from = 0; }
    failing_allocations(const failing_allocations&) = delete;
    failing_allocations& operator=(const failing_allocations&) = delete;
};

} // namespace sparse_reduce_test

bool sparse_reduce_test::allocation_hook(std::size_t bytes)
{
    return fail_from == 0 || bytes < fail_from;
}
