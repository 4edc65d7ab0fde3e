#pragma once
// One message of a reduction stream: a 40-byte header, then one wire block
// per window of the index space it covers (or, with the error flag, the
// error's text).
//
//   +-------+-------+-----------+--------+--------+------------+-----+
//   | magic | flags | dimension |   lo   |   hi   | error rank | pad |  40 bytes
//   +-------+-------+-----------+--------+--------+------------+-----+
//   | block for window lo/W | block for window lo/W + 1 | ...  (up to hi)
//
// A stream from one rank to another covers [0, dimension) in order, window
// by window; its last message carries the `last` flag. Raw bytes only:
// nothing here goes through Boost.Serialization.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "../error.hpp"

namespace sparse_reduce::detail {

struct message_header {
    static constexpr std::uint32_t magic_value = 0x31445253; // "SRD1"
    static constexpr std::uint32_t last = 1, failed = 2;

    std::uint32_t magic = magic_value;
    std::uint32_t flags = 0;
    std::uint64_t dimension = 0;
    std::uint64_t lo = 0, hi = 0;
    std::int32_t error_rank = -1;
    std::uint32_t reserved = 0;
};
static_assert(sizeof(message_header) == 40);

inline constexpr std::size_t message_header_bytes = sizeof(message_header);

inline message_header read_header(std::span<const std::byte> msg)
{
    message_header h;
    if (msg.size() < sizeof h) fail("malformed message: ", msg.size(), " bytes, shorter than its header");
    std::memcpy(&h, msg.data(), sizeof h);
    if (h.magic != message_header::magic_value) fail("malformed message: bad magic number");
    if (h.lo > h.hi || h.hi > h.dimension) fail("malformed message: bad index range");
    return h;
}

inline void write_header(std::byte* out, const message_header& h) { std::memcpy(out, &h, sizeof h); }

// An error message: the header with the failed flag, then the text.
inline std::size_t write_error_message(std::byte* out, std::size_t capacity, std::uint64_t dimension, int rank,
                                       std::string_view text)
{
    message_header h;
    h.flags = message_header::last | message_header::failed;
    h.dimension = dimension;
    h.error_rank = rank;
    write_header(out, h);
    const std::size_t n = std::min(text.size(), capacity - sizeof h);
    std::memcpy(out + sizeof h, text.data(), n);
    return sizeof h + n;
}

inline std::string error_text(std::span<const std::byte> msg)
{
    const std::size_t n = msg.size() > message_header_bytes ? msg.size() - message_header_bytes : 0;
    return std::string(reinterpret_cast<const char*>(msg.data() + message_header_bytes), n);
}

} // namespace sparse_reduce::detail
