#pragma once
/// @file
/// sparse_reduce::error, the library's exception type. Included by every
/// collective's header and by `<sparse_reduce/sparse_reduce.hpp>`.

#include <exception>
#include <stdexcept>
#include <string>

namespace sparse_reduce {

/// The one exception type the library throws for bad input, mismatched ranks
/// and malformed buffers. Its message names the problem: the text starts with
/// "sparse_reduce: " once, then the failing rank and what went wrong.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

namespace detail {

inline constexpr char error_prefix[] = "sparse_reduce: ";

// `what` without the library's prefix (an error's text passed on keeps one).
inline std::string unprefixed(const std::string& what)
{
    std::string s = what;
    while (s.rfind(error_prefix, 0) == 0) s.erase(0, sizeof(error_prefix) - 1);
    return s;
}

// Cold path kept out of line of the callers' loops. The message carries the
// prefix "sparse_reduce: " exactly once, also when `what` is the text of
// another sparse_reduce::error.
[[noreturn, gnu::cold, gnu::noinline]] inline void fail(const std::string& what)
{
    throw error(error_prefix + unprefixed(what));
}

[[noreturn, gnu::cold, gnu::noinline]] inline void fail(const char* what) { fail(std::string(what)); }

inline void require(bool condition, const char* what)
{
    if (!condition) [[unlikely]]
        fail(what);
}

// The text of the exception being handled, whatever its type: for use in a
// catch (...) block. An operation may throw anything (`throw 42;`); it is
// an operation failure like any other.
inline std::string current_exception_text()
{
    try {
        throw;
    } catch (const std::exception& e) {
        // never empty: the collectives tell a failure by its text
        const char* what = e.what();
        return what && *what ? what : "an exception with an empty message";
    } catch (...) {
        return "an exception not derived from std::exception";
    }
}

// The text make() builds, or "out of memory" when building it fails: the
// failure of a rank that has no memory left must still be told (a string
// that short allocates nothing).
template <class Make>
std::string text_or_out_of_memory(Make&& make) noexcept
{
    try {
        return make();
    } catch (...) {
        return "out of memory";
    }
}

// A rank's failure to allocate the room for a message from rank `from`.
inline std::string no_room_text(std::size_t bytes, int from)
{
    return "cannot allocate " + std::to_string(bytes) + " bytes for a message from rank " + std::to_string(from);
}

// In a catch block: the exception's text without the library's prefix, or
// "out of memory" when there is none left to copy it.
inline std::string caught_text() noexcept
{
    return text_or_out_of_memory([] { return unprefixed(current_exception_text()); });
}

} // namespace detail
} // namespace sparse_reduce
