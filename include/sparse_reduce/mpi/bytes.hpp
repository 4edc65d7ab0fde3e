#pragma once
// Raw byte transfers of any size. MPI counts are int: a transfer is cut into
// pieces of at most 1 GiB, cut the same way on both sides, so a sender's
// isend_bytes matches a receiver's irecv_bytes of the same size and tag.
// And a few words from every rank to every other, point to point (post_words).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

namespace sparse_reduce::detail {

inline constexpr std::size_t max_piece_bytes = std::size_t{1} << 30;

// f(piece, piece_bytes) for the pieces of [p, p + bytes) of at most `piece`
// bytes, in order; one (empty) piece when bytes is 0, so both sides still
// match one message.
template <class Byte, class F>
void for_each_piece(Byte* p, std::size_t bytes, F&& f, std::size_t piece = max_piece_bytes)
{
    do {
        const std::size_t n = std::min(bytes, piece);
        f(p, static_cast<int>(n));
        p += n;
        bytes -= n;
    } while (bytes > 0);
}

// How many pieces (so requests) a transfer of `bytes` takes.
inline std::size_t pieces_of(std::size_t bytes, std::size_t piece = max_piece_bytes)
{
    return bytes == 0 ? 1 : (bytes + piece - 1) / piece;
}

// Room for k more requests, made before any is posted: a transfer is posted
// whole or not at all (growth stays geometric).
inline void room_for_requests(std::vector<MPI_Request>& reqs, std::size_t k)
{
    if (reqs.capacity() - reqs.size() < k) reqs.reserve(std::max(reqs.size() + k, 2 * reqs.capacity()));
}

inline void isend_bytes(const void* p, std::size_t bytes, int dest, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs,
                        std::size_t piece = max_piece_bytes)
{
    room_for_requests(reqs, pieces_of(bytes, piece));
    for_each_piece(
        static_cast<const char*>(p), bytes,
        [&](const char* c, int n) {
            reqs.emplace_back();
            MPI_Isend(c, n, MPI_BYTE, dest, tag, comm, &reqs.back());
        },
        piece);
}

inline void irecv_bytes(void* p, std::size_t bytes, int source, int tag, MPI_Comm comm, std::vector<MPI_Request>& reqs,
                        std::size_t piece = max_piece_bytes)
{
    room_for_requests(reqs, pieces_of(bytes, piece));
    for_each_piece(
        static_cast<char*>(p), bytes,
        [&](char* c, int n) {
            reqs.emplace_back();
            MPI_Irecv(c, n, MPI_BYTE, source, tag, comm, &reqs.back());
        },
        piece);
}

// Takes the pieces of a transfer of `bytes` (of at most `piece` bytes each,
// as its sender cut them; drain holds one) into `drain`, one after the
// other, and drops them: a rank without room for what it must receive.
inline void drop_bytes(std::span<std::byte> drain, std::size_t bytes, std::size_t piece, int source, int tag, MPI_Comm comm)
{
    do {
        const std::size_t n = std::min(bytes, piece);
        MPI_Recv(drain.data(), static_cast<int>(n), MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE);
        bytes -= n;
    } while (bytes > 0);
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

// Whether the requests are complete (may_wait: waits until they are);
// cleared once they are.
inline bool requests_done(std::vector<MPI_Request>& reqs, bool may_wait)
{
    if (may_wait || reqs.empty()) {
        wait_all(reqs);
        return true;
    }
    int done = 0;
    MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (done) reqs.clear();
    return done != 0;
}

inline void bcast_bytes(void* p, std::size_t bytes, int root, MPI_Comm comm)
{
    for_each_piece(static_cast<char*>(p), bytes, [&](char* c, int n) { MPI_Bcast(c, n, MPI_BYTE, root, comm); });
}

// Posts this member's words to the other members (send[d] to d) and
// theirs to it (recv[r] from r; recv[me] = send[me]) on `tag`, the requests
// in reqs: a small exchange of point-to-point messages, so a started call
// enters no collective (split_allgather's counts and raw flags), and words
// posted with a call's data travel with it, in no round of their own
// (status_words, mpi/first_failure.hpp; reduce_scatter's headers). Messages
// between two members on one tag arrive in the order sent, so the words
// match where every member posts them at the same point of the call.
// width: the words to and from each member (send[width d ...], recv[width r ...]).
inline void post_words(MPI_Comm pc, std::span<const std::uint64_t> send, std::span<std::uint64_t> recv, int tag,
                       std::vector<MPI_Request>& reqs, std::size_t width = 1)
{
    int member = 0;
    MPI_Comm_rank(pc, &member);
    const auto me = static_cast<std::size_t>(member), P = recv.size() / width;
    const int w = static_cast<int>(width);
    std::copy_n(send.data() + width * me, width, recv.data() + width * me);
    room_for_requests(reqs, 2 * P);
    for (std::size_t r = 0; r < P; ++r)
        if (r != me) {
            reqs.emplace_back();
            MPI_Irecv(recv.data() + width * r, w, MPI_UINT64_T, static_cast<int>(r), tag, pc, &reqs.back());
        }
    for (std::size_t d = 0; d < P; ++d)
        if (d != me) {
            reqs.emplace_back();
            MPI_Isend(send.data() + width * d, w, MPI_UINT64_T, static_cast<int>(d), tag, pc, &reqs.back());
        }
}

} // namespace sparse_reduce::detail
