#pragma once
// A replacement of the global operator new for one test executable: every
// allocation asks the test's sparse_reduce_test::allocation_hook(bytes)
// first, which counts it (test_hot_path) or refuses it (test_histogram_sort:
// std::bad_alloc on one rank). Include in exactly one source file of the
// executable, which defines the hook.

#include <cstddef>
#include <cstdlib>
#include <new>

namespace sparse_reduce_test {
// False: this allocation throws std::bad_alloc.
bool allocation_hook(std::size_t bytes);
} // namespace sparse_reduce_test

void* operator new(std::size_t n)
{
    if (!sparse_reduce_test::allocation_hook(n)) throw std::bad_alloc();
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
// The replacement new above allocates with malloc, so free is the match
// (GCC cannot see that through the replacement).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
