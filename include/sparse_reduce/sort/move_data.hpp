#pragma once
// move_data(comm, sorted, splitters [, comp]): sends every item to the rank
// that owns its bin, after which rank d holds exactly the items of its bins
// as P sorted runs, one per source rank in rank order. Collective; each
// rank's data must be sorted by comp, and every rank must pass the same
// splitters (as find_splitters returns them).
//
// Bins and ranks: with B = splitters.size() + 1 bins, bin b belongs to rank
// b * P / B, so each rank owns a contiguous group of bins (B may exceed P,
// and with B < P some ranks own none). An item's bin is decided by the same
// (key, global position) order find_splitters counts in, so runs of equal
// keys are cut where the splitters say.
//
// Counts travel by one MPI_Alltoall, the items by MPI_Irecv / MPI_Isend of
// raw bytes straight from and into the vectors; a rank's own share is copied.
//
// A comparator that throws (any type) on some rank, in the sortedness check
// or the cut, or counts it cannot allocate, is flagged in the agreement
// before the counts, a receive buffer or requests it cannot allocate in the
// one after them: every rank throws sparse_reduce::error with the lowest
// failing rank's text, and no item has moved.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../error.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "find_splitters.hpp"
#include "sort_key.hpp"

namespace sparse_reduce {

struct move_result {
    std::vector<std::size_t> runs; // P + 1 offsets: run r (from rank r) is [runs[r], runs[r + 1])
    std::size_t sent = 0, received = 0; // items to and from other ranks
};

namespace detail {

// The first bin rank d owns: the least b with b * P / B >= d.
inline std::size_t first_bin(int d, int ranks, std::size_t bins)
{
    return (static_cast<std::size_t>(d) * bins + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
}

} // namespace detail

/// Sends every item to the rank that owns its bin (bin b to rank b * P / B
/// of B bins); afterwards rank d holds the items of its bins as P sorted
/// runs, one per source rank in rank order. Collective; every rank passes the
/// same splitters, as find_splitters returns them.
template <sort_key K, key_order<K> Compare = std::less<>>
move_result move_data(const boost::mpi::communicator& comm, std::vector<K>& data, std::span<const splitter<K>> splitters,
                      const Compare& comp = {})
{
    detail::enter_collective(MPI_Comm(comm), "move_data");
    const MPI_Comm pc = detail::private_comm(MPI_Comm(comm));
    const int me = comm.rank(), ranks = comm.size();
    const auto P = static_cast<std::size_t>(ranks);
    const std::uint64_t n = data.size();
    std::uint64_t base = 0;
    MPI_Exscan(&n, &base, 1, MPI_UINT64_T, MPI_SUM, pc);
    if (me == 0) base = 0;
    // Where each destination's share starts in the local data (the
    // comparator runs here, before the agreement).
    const std::size_t bins = splitters.size() + 1;
    const std::span<const K> view(data);
    std::vector<std::uint64_t> cut, send, recv;
    bool local_sorted = true;
    std::string failure;
    try {
        cut.assign(P + 1, 0);
        send.assign(P, 0);
        recv.assign(P, 0);
        cut[P] = n;
        local_sorted = std::is_sorted(data.begin(), data.end(), comp);
        for (std::size_t d = 1; d < P && local_sorted; ++d) {
            const std::size_t b = detail::first_bin(static_cast<int>(d), ranks, bins);
            const std::uint64_t c = b == 0 ? 0 : b >= bins ? n : detail::count_below(view, base, splitters[b - 1], comp);
            cut[d] = std::clamp(c, cut[d - 1], n); // splitters out of order cannot cut backwards
        }
    } catch (...) {
        failure = detail::text_or_out_of_memory([&] { return detail::rank_failure_text(me); });
    }
    const auto ns = static_cast<long long>(splitters.size());
    const long long mine[4] = {ns, -ns, local_sorted ? 0 : ranks - me, failure.empty() ? 0 : 1};
    long long agreed[4];
    MPI_Allreduce(mine, agreed, 4, MPI_LONG_LONG, MPI_MAX, pc);
    if (agreed[3]) detail::throw_if_any_failed(pc, failure, "move_data failed on");
    if (agreed[0] != -agreed[1]) detail::fail("move_data: ranks disagree on the number of splitters");
    if (agreed[2]) detail::fail("move_data: data not sorted on rank ", ranks - agreed[2]);
    for (std::size_t d = 0; d < P; ++d) send[d] = cut[d + 1] - cut[d];
    MPI_Alltoall(send.data(), 1, MPI_UINT64_T, recv.data(), 1, MPI_UINT64_T, pc);
    // The receive buffer and the requests before the second agreement, so
    // that a rank that cannot allocate them is heard of before any item moves.
    move_result res;
    std::vector<K> out;
    std::vector<MPI_Request> reqs;
    try {
        res.runs.assign(P + 1, 0);
        std::size_t pieces = 0;
        for (std::size_t s = 0; s < P; ++s) {
            res.runs[s + 1] = res.runs[s] + static_cast<std::size_t>(recv[s]);
            pieces += detail::pieces_of(recv[s] * sizeof(K)) + detail::pieces_of(send[s] * sizeof(K));
        }
        out.resize(res.runs[P]);
        reqs.reserve(pieces);
    } catch (...) {
        failure = detail::text_or_out_of_memory([&] { return detail::rank_failure_text(me); });
    }
    detail::throw_if_any_failed(pc, failure, "move_data failed on");
    for (std::size_t s = 0; s < P; ++s)
        if (recv[s] && static_cast<int>(s) != me)
            detail::irecv_bytes(out.data() + res.runs[s], recv[s] * sizeof(K), static_cast<int>(s), detail::move_data_tag,
                                pc, reqs);
    for (std::size_t k = 1; k < P; ++k) { // start with the right neighbour: not all ranks hit rank 0 at once
        const std::size_t d = (static_cast<std::size_t>(me) + k) % P;
        if (send[d]) {
            detail::isend_bytes(data.data() + cut[d], send[d] * sizeof(K), static_cast<int>(d), detail::move_data_tag, pc,
                                reqs);
            res.sent += static_cast<std::size_t>(send[d]);
        }
    }
    const auto own = static_cast<std::size_t>(me);
    std::copy(data.begin() + static_cast<std::ptrdiff_t>(cut[own]), data.begin() + static_cast<std::ptrdiff_t>(cut[own + 1]),
              out.begin() + static_cast<std::ptrdiff_t>(res.runs[own]));
    detail::wait_all(reqs);
    res.received = res.runs[P] - static_cast<std::size_t>(send[own]);
    data = std::move(out);
    return res;
}

/// Convenience overload for containers.
template <sort_key K, key_order<K> Compare = std::less<>>
move_result move_data(const boost::mpi::communicator& comm, std::vector<K>& data, const std::vector<splitter<K>>& splitters,
                      const Compare& comp = {})
{
    return move_data(comm, data, std::span<const splitter<K>>(splitters), comp);
}

} // namespace sparse_reduce
