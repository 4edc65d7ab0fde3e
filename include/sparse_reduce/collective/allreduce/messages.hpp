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

// One message of isend_message being received, piece by piece, without
// knowing its size: each piece is matched by a probe (MPI_Mprobe, or
// MPI_Improbe when the caller must not wait) and taken by the matched
// receive, so a started call's test() never blocks on a transfer. Into buf
// from byte `at` (8-aligned; buf grown as needed, one spare word past the
// end). Given `dropped`: where buf cannot grow, the message goes into
// `drain` instead (its byte k at drain[k]) and *dropped is set, so that a
// rank out of memory still takes it and nothing stays queued.
struct message_receiver {
    MPI_Request request = MPI_REQUEST_NULL; // the piece in flight
    std::size_t got = 0;                    // the bytes taken so far
    std::size_t piece = 0;                  // the piece in flight's

    // Moves the message on; true once all of it is in (its bytes: got).
    // may_wait: blocks until then. A new message needs a fresh receiver.
    bool receive(int source, int tag, MPI_Comm comm, wire_buffer& buf, std::size_t at, std::span<std::byte> drain,
                 bool* dropped, bool may_wait)
    {
        for (;;) {
            if (request == MPI_REQUEST_NULL) {
                MPI_Message m;
                MPI_Status st;
                int found = 1, count = 0;
                if (may_wait) MPI_Mprobe(source, tag, comm, &m, &st);
                else MPI_Improbe(source, tag, comm, &found, &m, &st);
                if (!found) return false;
                MPI_Get_count(&st, MPI_BYTE, &count);
                piece = static_cast<std::size_t>(count);
                void* into = nullptr;
                if (!dropped || !*dropped) try {
                        if (buf.size() < (at + got + piece) / 8 + 1) buf.resize((at + got + piece) / 8 + 1);
                        into = reinterpret_cast<char*>(buf.data()) + at + got;
                    } catch (const std::bad_alloc&) {
                        if (!dropped) throw; // the call fails here; the matched piece is not taken
                        *dropped = true;
                    }
                if (!into) {
                    if (got + piece > drain.size())
                        fail("out of memory for a message of ", got + piece, " bytes");
                    into = drain.data() + got;
                }
                MPI_Imrecv(into, count, MPI_BYTE, &m, &request);
            }
            int done = 1;
            if (may_wait) MPI_Wait(&request, MPI_STATUS_IGNORE);
            else MPI_Test(&request, &done, MPI_STATUS_IGNORE);
            if (!done) return false;
            got += piece;
            if (piece < max_piece_bytes) return true;
        }
    }
};

// Receives one message of isend_message (message_receiver, waiting); returns its bytes.
inline std::size_t recv_message(int source, int tag, MPI_Comm comm, wire_buffer& buf, std::size_t at = 0,
                                std::span<std::byte> drain = {}, bool* dropped = nullptr)
{
    message_receiver r;
    r.receive(source, tag, comm, buf, at, drain, dropped, true);
    return r.got;
}

} // namespace sparse_reduce::detail
