#pragma once
// Raw byte transfers of any size. MPI counts are int: a transfer is cut into
// pieces of at most 1 GiB, cut the same way on both sides, so a sender's
// isend_bytes matches a receiver's irecv_bytes of the same size and tag.

#include <algorithm>
#include <cstddef>
#include <vector>

#include <mpi.h>

namespace sparse_reduce::detail {

inline constexpr std::size_t max_piece_bytes = std::size_t{1} << 30;

// f(piece, piece_bytes) for the pieces of [p, p + bytes), in order; one
// (empty) piece when bytes is 0, so both sides still match one message.
template <class Byte, class F>
void for_each_piece(Byte* p, std::size_t bytes, F&& f)
{
    do {
        const std::size_t n = std::min(bytes, max_piece_bytes);
        f(p, static_cast<int>(n));
        p += n;
        bytes -= n;
    } while (bytes > 0);
}

inline void isend_bytes(const void* p, std::size_t bytes, int dest, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs)
{
    for_each_piece(static_cast<const char*>(p), bytes, [&](const char* c, int n) {
        reqs.emplace_back();
        MPI_Isend(c, n, MPI_BYTE, dest, tag, comm, &reqs.back());
    });
}

inline void irecv_bytes(void* p, std::size_t bytes, int source, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs)
{
    for_each_piece(static_cast<char*>(p), bytes, [&](char* c, int n) {
        reqs.emplace_back();
        MPI_Irecv(c, n, MPI_BYTE, source, tag, comm, &reqs.back());
    });
}

// Blocking: the matching isend_bytes's pieces into [p, p + bytes).
inline void recv_bytes(void* p, std::size_t bytes, int source, int tag, MPI_Comm comm)
{
    for_each_piece(static_cast<char*>(p), bytes,
                   [&](char* c, int n) { MPI_Recv(c, n, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE); });
}

inline void wait_all(std::vector<MPI_Request>& reqs)
{
    if (!reqs.empty()) MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    reqs.clear();
}

inline void bcast_bytes(void* p, std::size_t bytes, int root, MPI_Comm comm)
{
    for_each_piece(static_cast<char*>(p), bytes, [&](char* c, int n) { MPI_Bcast(c, n, MPI_BYTE, root, comm); });
}

} // namespace sparse_reduce::detail
