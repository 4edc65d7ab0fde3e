#pragma once
// wire::format, what a policy puts on the wire (`.wire`): the vocabulary the
// policies need, apart from the block encoders (wire/forms.hpp, wire/block.hpp).

#include <cstdint>
#include <string>

#include "../error.hpp"

namespace sparse_reduce {
/// The encoding of blocks between ranks: wire::format, which policies carry as `.wire`.
namespace wire {

// What a collective may put on the wire (policies carry it as `.wire`).
enum class format : std::uint8_t { adaptive, dense, index_value, rle };
inline constexpr format adaptive = format::adaptive;       // smallest form per block (default)
inline constexpr format dense = format::dense;
inline constexpr format index_value = format::index_value;
inline constexpr format rle = format::rle;                 // float and double only

inline const char* to_string(format f)
{
    switch (f) {
    case format::dense: return "dense";
    case format::index_value: return "index_value";
    case format::rle: return "rle";
    case format::adaptive: return "adaptive";
    }
    detail::fail("wire::to_string: not a wire::format (", static_cast<int>(f), ")");
}

} // namespace wire
} // namespace sparse_reduce
