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

inline void isend_bytes(const void* p, std::size_t bytes, int dest, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs)
{
    const auto* c = static_cast<const char*>(p);
    do {
        const std::size_t n = std::min(bytes, max_piece_bytes);
        reqs.emplace_back();
        MPI_Isend(c, static_cast<int>(n), MPI_BYTE, dest, tag, comm, &reqs.back());
        c += n;
        bytes -= n;
    } while (bytes > 0);
}

inline void irecv_bytes(void* p, std::size_t bytes, int source, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs)
{
    auto* c = static_cast<char*>(p);
    do {
        const std::size_t n = std::min(bytes, max_piece_bytes);
        reqs.emplace_back();
        MPI_Irecv(c, static_cast<int>(n), MPI_BYTE, source, tag, comm, &reqs.back());
        c += n;
        bytes -= n;
    } while (bytes > 0);
}

inline void wait_all(std::vector<MPI_Request>& reqs)
{
    if (!reqs.empty()) MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    reqs.clear();
}

inline void bcast_bytes(void* p, std::size_t bytes, int root, MPI_Comm comm)
{
    auto* c = static_cast<char*>(p);
    do {
        const std::size_t n = std::min(bytes, max_piece_bytes);
        MPI_Bcast(c, static_cast<int>(n), MPI_BYTE, root, comm);
        c += n;
        bytes -= n;
    } while (bytes > 0);
}

} // namespace sparse_reduce::detail
