#pragma once
// sparse_reduce::error — the one exception type the library throws for bad
// input, mismatched ranks and malformed buffers. Its message names the problem.

#include <stdexcept>
#include <string>

namespace sparse_reduce {

class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

// Cold path kept out of line of the callers' loops.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail(const std::string& what)
{
    throw error("sparse_reduce: " + what);
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail(const char* what) { fail(std::string(what)); }

inline void require(bool condition, const char* what)
{
    if (!condition) [[unlikely]]
        fail(what);
}

} // namespace detail
} // namespace sparse_reduce
