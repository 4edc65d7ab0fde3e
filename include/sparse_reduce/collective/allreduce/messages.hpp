#pragma once
// allreduce's point-to-point messages (detail; collective/allreduce.hpp):
// (its tags are in mpi/tags.hpp), messages of any size sent in pieces below 1 GiB
// (isend_bytes) that the receiver takes without knowing their size.

#include <cstddef>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "../../error.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/tags.hpp"
#include "partial_codec.hpp"

namespace sparse_reduce::detail {

// Messages of a streamed exchange (recursive doubling, split_allgather):
// about this many bytes (or one window).
inline constexpr std::size_t stream_message_bytes = std::size_t{1} << 20;

// Sends `bytes` as pieces of max_piece_bytes (isend_bytes), the last one
// shorter (empty when bytes is a multiple): recv_message knows the end.
inline void isend_message(const void* p, std::size_t bytes, int dest, int tag, MPI_Comm comm,
                          std::vector<MPI_Request>& reqs)
{
    isend_bytes(p, bytes, dest, tag, comm, reqs);
    if (bytes > 0 && bytes % max_piece_bytes == 0) {
        reqs.emplace_back();
        MPI_Isend(p, 0, MPI_BYTE, dest, tag, comm, &reqs.back());
    }
}

// Receives one message of isend_message into buf from byte `at` (8-aligned;
// buf grown as needed, one spare word past the end); returns its bytes.
// Given `dropped`: where buf cannot grow, the message goes into `drain`
// instead (its byte k at drain[k]) and *dropped is set, so that a rank out
// of memory still takes it and nothing stays queued.
inline std::size_t recv_message(int source, int tag, MPI_Comm comm, wire_buffer& buf, std::size_t at = 0,
                                std::span<std::byte> drain = {}, bool* dropped = nullptr)
{
    std::size_t total = at;
    for (;;) {
        MPI_Status st;
        int count = 0;
        MPI_Probe(source, tag, comm, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        const auto n = static_cast<std::size_t>(count);
        void* into = nullptr;
        if (!dropped || !*dropped) try {
                if (buf.size() < (total + n) / 8 + 1) buf.resize((total + n) / 8 + 1);
                into = reinterpret_cast<char*>(buf.data()) + total;
            } catch (const std::bad_alloc&) {
                if (!dropped) throw;
                *dropped = true;
            }
        if (!into) {
            if (total - at + n > drain.size()) fail("out of memory for a message of " + std::to_string(total - at + n) + " bytes");
            into = drain.data() + (total - at);
        }
        MPI_Recv(into, count, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE);
        total += n;
        if (n < max_piece_bytes) return total - at;
    }
}

} // namespace sparse_reduce::detail
