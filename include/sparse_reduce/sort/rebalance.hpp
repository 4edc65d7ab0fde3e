#pragma once
// rebalance(comm, data): afterwards rank r holds floor(N/P) items, plus one
// for r < N mod P (the remainder dealt round-robin from rank 0), and the
// global order (rank by rank, then local order) is unchanged.
//
// Sayer's (2021) scheme: one exclusive scan and one allreduce of the counts, then
// every rank talks only to its neighbours, at most once each. With S the
// items on the ranks before r and E(r) what they should hold,
//   forward  (delta_pre)  S + n - E(r + 1) > 0: send that many last items to r + 1,
//                                         < 0: receive as many from r + 1;
//   backward (bkwdCnt)    S - E(r)       > 0: receive that many from r - 1,
//                                         < 0: send as many first items to r - 1.
// A rank whose send exceeds what it holds (items pass through it) first
// waits for the receive from the other side. That happens in one direction
// at most, and the waits form chains that end at a rank that need not wait,
// so there is no deadlock.
//
// Every buffer is allocated before the first item moves, then the ranks
// agree (one allreduce): a rank that cannot allocate makes every rank throw
// sparse_reduce::error naming it, and no item has moved. Without it the
// failing rank would throw alone and its neighbours wait for it forever.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>

#include "../detail/uninit_vector.hpp"
#include "../mpi/bytes.hpp"
#include "../mpi/communicator.hpp"
#include "../mpi/first_failure.hpp"
#include "../mpi/tags.hpp"
#include "sort_key.hpp"

namespace sparse_reduce {

// What rebalance did on this rank.
struct rebalance_result {
    std::uint64_t total = 0;       // N
    std::uint64_t first = 0;       // global position of this rank's first item afterwards
    std::size_t sent = 0, received = 0; // items
};

namespace detail {

// E(r): the items ranks 0 .. r-1 hold once balanced.
inline std::uint64_t balanced_prefix(std::uint64_t total, int ranks, int r)
{
    const auto p = static_cast<std::uint64_t>(ranks), q = total / p, rem = total % p;
    const auto rr = static_cast<std::uint64_t>(r);
    return rr * q + std::min(rr, rem);
}

// One rank's side of the exchange: the items crossing its two boundaries
// and the buffers and requests for them, allocated (allocate) before
// anything moves.
template <class K>
struct rebalance_exchange {
    std::size_t n = 0, from_back = 0, to_back = 0, to_fwd = 0, from_fwd = 0;
    uninit_vector<K> in_back, in_fwd, buf;
    std::vector<K> out;
    std::vector<MPI_Request> back_recv, fwd_recv, sends;

    // When items pass through this rank: buf = [from r-1][mine][from r+1],
    // and the send that exceeds what this rank holds waits for its receive.
    bool through() const { return to_back > n || to_fwd > n; }
    std::size_t kept() const { return n + from_back + from_fwd - to_back - to_fwd; }

    void allocate(std::vector<K>& data)
    {
        if (through()) {
            buf.resize(from_back + n + from_fwd);
            data.reserve(kept());
        } else {
            in_back.resize(from_back);
            in_fwd.resize(from_fwd);
            if (from_back || from_fwd) out.reserve(kept());
        }
        back_recv.reserve(pieces_of(from_back * sizeof(K)));
        fwd_recv.reserve(pieces_of(from_fwd * sizeof(K)));
        sends.reserve(pieces_of(to_back * sizeof(K)) + pieces_of(to_fwd * sizeof(K)));
    }

    // The usual case: sends come straight from data, receives land in
    // buffers without zero-fill, and the result is built in one pass.
    void run_direct(MPI_Comm pc, int me, std::vector<K>& data)
    {
        if (from_back) irecv_bytes(in_back.data(), from_back * sizeof(K), me - 1, rebalance_tag, pc, back_recv);
        if (from_fwd) irecv_bytes(in_fwd.data(), from_fwd * sizeof(K), me + 1, rebalance_tag, pc, fwd_recv);
        if (to_back) isend_bytes(data.data(), to_back * sizeof(K), me - 1, rebalance_tag, pc, sends);
        if (to_fwd) isend_bytes(data.data() + n - to_fwd, to_fwd * sizeof(K), me + 1, rebalance_tag, pc, sends);
        wait_all(back_recv);
        wait_all(fwd_recv);
        wait_all(sends);
        const auto keep_begin = data.begin() + static_cast<std::ptrdiff_t>(to_back);
        const auto keep_end = data.end() - static_cast<std::ptrdiff_t>(to_fwd);
        if (!from_back && !from_fwd) {
            data.erase(keep_end, data.end());
            data.erase(data.begin(), keep_begin);
            return;
        }
        out.insert(out.end(), in_back.begin(), in_back.end());
        out.insert(out.end(), keep_begin, keep_end);
        out.insert(out.end(), in_fwd.begin(), in_fwd.end());
        data.swap(out);
    }

    void run_through(MPI_Comm pc, int me, std::vector<K>& data)
    {
        std::copy(data.begin(), data.end(), buf.begin() + static_cast<std::ptrdiff_t>(from_back));
        if (from_back) irecv_bytes(buf.data(), from_back * sizeof(K), me - 1, rebalance_tag, pc, back_recv);
        if (from_fwd) irecv_bytes(buf.data() + from_back + n, from_fwd * sizeof(K), me + 1, rebalance_tag, pc, fwd_recv);
        if (to_back) {
            if (to_back > n) wait_all(fwd_recv); // passes on what r + 1 sends
            isend_bytes(buf.data(), to_back * sizeof(K), me - 1, rebalance_tag, pc, sends);
        }
        if (to_fwd) {
            if (to_fwd > n) wait_all(back_recv); // passes on what r - 1 sends
            isend_bytes(buf.data() + from_back + n - to_fwd, to_fwd * sizeof(K), me + 1, rebalance_tag, pc, sends);
        }
        wait_all(back_recv);
        wait_all(fwd_recv);
        wait_all(sends);
        data.assign(buf.begin() + static_cast<std::ptrdiff_t>(to_back), buf.end() - static_cast<std::ptrdiff_t>(to_fwd));
    }
};

} // namespace detail

/// Moves items between neighbouring ranks until rank r holds floor(N/P)
/// items, plus one for r < N mod P; the global order is unchanged. Collective.
template <sort_key K>
rebalance_result rebalance(const boost::mpi::communicator& comm, std::vector<K>& data)
{
    detail::enter_collective(MPI_Comm(comm), "rebalance");
    const MPI_Comm pc = detail::private_comm(MPI_Comm(comm));
    const int me = comm.rank(), ranks = comm.size();
    const std::uint64_t n = data.size();
    std::uint64_t before = 0, total = 0;
    MPI_Exscan(&n, &before, 1, MPI_UINT64_T, MPI_SUM, pc);
    if (me == 0) before = 0; // MPI_Exscan leaves rank 0's result undefined
    MPI_Allreduce(&n, &total, 1, MPI_UINT64_T, MPI_SUM, pc);

    rebalance_result res;
    res.total = total;
    res.first = detail::balanced_prefix(total, ranks, me);
    const std::uint64_t end_target = detail::balanced_prefix(total, ranks, me + 1);
    // signed boundary flows: > 0 means items cross the boundary towards higher ranks
    const auto fwd = static_cast<std::int64_t>(before + n) - static_cast<std::int64_t>(end_target);
    const auto bwd = static_cast<std::int64_t>(before) - static_cast<std::int64_t>(res.first);
    detail::rebalance_exchange<K> x;
    x.n = n;
    x.from_back = bwd > 0 ? static_cast<std::size_t>(bwd) : 0;
    x.to_back = bwd < 0 ? static_cast<std::size_t>(-bwd) : 0;
    x.to_fwd = fwd > 0 ? static_cast<std::size_t>(fwd) : 0;
    x.from_fwd = fwd < 0 ? static_cast<std::size_t>(-fwd) : 0;
    std::string failure;
    try {
        x.allocate(data);
    } catch (...) {
        failure = detail::rank_failure_text(me);
    }
    detail::throw_if_any_failed(pc, failure, "rebalance failed on");
    if (fwd == 0 && bwd == 0) return res;
    if (x.through()) x.run_through(pc, me, data);
    else x.run_direct(pc, me, data);
    res.sent = x.to_back + x.to_fwd;
    res.received = x.from_back + x.from_fwd;
    return res;
}

} // namespace sparse_reduce
