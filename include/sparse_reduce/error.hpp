#pragma once
/// @file
/// sparse_reduce::error, the library's exception type. Included by every
/// collective's header and by `<sparse_reduce/sparse_reduce.hpp>`.

#include <charconv>
#include <concepts>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

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

// A piece of a message: text, or a number written as std::to_string
// writes it. A char is neither, and refused.
class text_piece {
public:
    text_piece(const char* s) noexcept : text_(s) {}
    text_piece(std::string_view s) noexcept : text_(s) {}
    text_piece(const std::string& s) noexcept : text_(s) {}
    template <std::integral I>
    text_piece(I v) noexcept : kind_(std::is_signed_v<I> ? kind::signed_number : kind::unsigned_number)
    {
        if constexpr (std::is_signed_v<I>)
            signed_ = v;
        else
            unsigned_ = v;
    }
    template <std::floating_point F>
    text_piece(F v) noexcept : kind_(kind::real), real_(v) {}
    text_piece(char) = delete;

    void append_to(std::string& out) const
    {
        if (kind_ == kind::text) {
            out.append(text_);
            return;
        }
        if (kind_ == kind::real) {
            out += std::to_string(real_);
            return;
        }
        char digits[24];
        const auto end = kind_ == kind::signed_number ? std::to_chars(digits, digits + sizeof digits, signed_).ptr
                                                      : std::to_chars(digits, digits + sizeof digits, unsigned_).ptr;
        out.append(digits, end);
    }

private:
    enum class kind : unsigned char { text, signed_number, unsigned_number, real };
    kind kind_ = kind::text;
    std::string_view text_;
    union {
        long long signed_ = 0;
        unsigned long long unsigned_;
        long double real_; // exact for every float and double
    };
};

// The pieces joined. Messages are cold code: one out-of-line join, where a
// chain of std::string's operator+ and std::to_string inlined at a call
// site takes about 240 bytes of code and 9 ms of g++ -O2 time.
[[gnu::noinline]] inline std::string concat_pieces(std::initializer_list<text_piece> pieces)
{
    std::string out;
    for (const text_piece& p : pieces) p.append_to(out);
    return out;
}

// concat("rank ", r, " has dimension ", d): the message of those pieces.
template <class... Pieces>
std::string concat(const Pieces&... pieces)
{
    return concat_pieces({text_piece(pieces)...});
}

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

// fail("rank ", r, " has dimension ", d): fails with the pieces joined.
template <class... Pieces>
[[noreturn]] void fail(const Pieces&... pieces)
    requires(sizeof...(Pieces) > 1)
{
    fail(concat(pieces...));
}

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
    return concat("cannot allocate ", bytes, " bytes for a message from rank ", from);
}

// In a catch block: the exception's text without the library's prefix, or
// "out of memory" when there is none left to copy it.
inline std::string caught_text() noexcept
{
    return text_or_out_of_memory([] { return unprefixed(current_exception_text()); });
}

} // namespace detail
} // namespace sparse_reduce
