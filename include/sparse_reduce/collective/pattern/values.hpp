#pragma once
// A pattern plan's state and its call (collective/pattern_plan.hpp): values
// only, folded at the slots the plan keeps (pattern/layout.hpp).
//
// A call, on every rank: check the values and make the output (a failure is
// kept, not thrown); post the receives, one per rank that sends here; send
// each owner its run (straight from the caller's values when the pattern is
// ordered by owner); start the agreement on the lowest failing rank (status
// words where every rank sends values to every other, else an
// MPI_Iallreduce); fold the runs in rank order as they arrive; end the
// agreement. A failed
// rank still sends (from the plan's buffer), so every message is matched.

#include <climits>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <mpi.h>

#include "../../detail/exhaustive.hpp"
#include "../../detail/uninit_vector.hpp"
#include "../../error.hpp"
#include "../../exec/started_call.hpp"
#include "../../mpi/bytes.hpp"
#include "../../mpi/communicator.hpp"
#include "../../mpi/first_failure.hpp"
#include "../../mpi/tags.hpp"
#include "../../op/associative_op.hpp"
#include "../../repr/representation.hpp"
#include "../../report.hpp"
#include "layout.hpp"
#include "matrix.hpp"

namespace sparse_reduce::detail {

template <class T>
struct pattern_state {
    std::shared_ptr<private_duplicate> comm; // keeps the private communicator
    pattern_layout l;
    bool check_indices = true;
    value_vector<T> send, recv;      // the runs this rank sends (gathered) and receives (others' only)
    std::vector<MPI_Request> reqs;   // room for every post of a call
    std::vector<std::size_t> posted; // P + 1: rank s's receive requests, posted[s] .. posted[s + 1]
    std::vector<int> all_bytes, all_at; // allreduce: each owner's part of the union, in bytes
    report traffic;                     // what every call sends and receives
    status_words status;                // a blocking call's agreement where l.agree_by_words
    std::vector<MPI_Request> status_reqs;
    matrix_split split;                 // a matrix output's structure, made on first use
    value_vector<T> staged;             // a column-major output's values in the support's order
    // A started call (collective/pattern_start.hpp): its slot, its state
    // built in started_room (no start allocates it), the messages of its
    // agreement on failures.
    started_call started;
    alignas(std::max_align_t) std::byte started_room[started_room_bytes];
    std::vector<std::uint64_t> agreement_send, agreement_receive;
    std::vector<std::byte> agreement_drain;
};

// This rank's pattern as global indices.
template <class Pattern>
std::vector<std::uint64_t> pattern_indices(const Pattern& p)
{
    auto copy = [](auto ix) {
        std::vector<std::uint64_t> v(ix.size());
        for (std::size_t k = 0; k < ix.size(); ++k) {
            if constexpr (std::is_signed_v<typename decltype(ix)::value_type>)
                if (ix[k] < 0) fail("pattern entry ", k, " is negative");
            v[k] = static_cast<std::uint64_t>(ix[k]);
        }
        return v;
    };
    if constexpr (sparse_matrix<Pattern>) return matrix_pattern(p);
    else if constexpr (index_value_representation<Pattern>) return copy(repr_traits<Pattern>::indices(p));
    else {
        static_assert(std::ranges::contiguous_range<const Pattern> &&
                          std::integral<std::remove_cv_t<std::ranges::range_value_t<const Pattern>>>,
                      "make_pattern_plan: the pattern is a contiguous range of integral indices, an "
                      "Eigen::SparseVector or an index_value_vector");
        return copy(std::span(std::ranges::data(p), std::ranges::size(p)));
    }
}

// What the report's algorithm says of a plan.
inline std::string pattern_algorithm(const pattern_layout& l)
{
    return std::string("pattern plan (values only, direct exchange") + (l.to_all ? ", then an allgather of the sums)" : ")");
}

// allreduce: each owner's sums, in bytes, for the MPI_Allgatherv.
template <class T>
void size_union_gather(pattern_state<T>& s)
{
    const pattern_layout& l = s.l;
    if (l.all_cut.back() > static_cast<std::size_t>(INT_MAX) / sizeof(T))
        fail("pattern plan: the union's ", l.all_cut.back(), " sums exceed an MPI_Allgatherv");
    const auto P = static_cast<std::size_t>(l.ranks);
    s.all_bytes.resize(P);
    s.all_at.resize(P);
    for (std::size_t r = 0; r < P; ++r) {
        s.all_bytes[r] = static_cast<int>((l.all_cut[r + 1] - l.all_cut[r]) * sizeof(T));
        s.all_at[r] = static_cast<int>(l.all_cut[r] * sizeof(T));
    }
    for (std::size_t r = 0; r < P; ++r)
        if (r != static_cast<std::size_t>(l.rank)) {
            s.traffic.bytes_received += static_cast<std::size_t>(s.all_bytes[r]);
            s.traffic.bytes_sent += static_cast<std::size_t>(s.all_bytes[l.rank]);
            ++s.traffic.messages_sent;
        }
}

// The rest of the plan, once the ranks agreed on its arguments: the runs'
// exchange, the support, and every buffer and request a call needs.
template <class T>
void build_pattern_state(pattern_state<T>& s)
{
    pattern_layout& l = s.l;
    const MPI_Comm pc = s.comm->comm;
    const auto P = static_cast<std::size_t>(l.ranks), me = static_cast<std::size_t>(l.rank);
    std::vector<std::uint64_t> runs = exchange_runs(pc, l);
    agreed_step(pc, l.rank, [&] {
        if (auto why = merge_runs(l, runs); !why.empty()) fail(why);
    });
    int every_peer = 1; // whether this rank sends to and receives from every other
    for (std::size_t r = 0; r < P; ++r)
        if (r != me && (!l.sends(static_cast<int>(r)) || !l.receives(static_cast<int>(r)))) every_peer = 0;
    MPI_Allreduce(MPI_IN_PLACE, &every_peer, 1, MPI_INT, MPI_MIN, pc);
    l.agree_by_words = every_peer != 0;
    if (l.to_all) gather_union(pc, l);
    agreed_step(pc, l.rank, [&] {
        s.send.resize(l.pattern_size());
        s.recv.resize(l.recv_cut[P] - l.receives(l.rank));
        s.posted.assign(P + 1, 0);
        std::size_t posts = 0;
        for (std::size_t r = 0; r < P; ++r) {
            if (r != me) posts += (l.sends(static_cast<int>(r)) ? pieces_of(l.sends(static_cast<int>(r)) * sizeof(T)) : 0);
            const std::size_t in = r != me && l.receives(static_cast<int>(r)) ? pieces_of(l.receives(static_cast<int>(r)) * sizeof(T)) : 0;
            s.posted[r + 1] = s.posted[r] + in;
            s.traffic.bytes_sent += r != me ? l.sends(static_cast<int>(r)) * sizeof(T) : 0;
            s.traffic.messages_sent += r != me && l.sends(static_cast<int>(r)) ? 1 : 0;
            s.traffic.bytes_received += r != me ? l.receives(static_cast<int>(r)) * sizeof(T) : 0;
        }
        s.reqs.reserve(posts + s.posted[P]);
        if (l.agree_by_words) {
            s.status.resize(P);
            s.status_reqs.reserve(2 * P);
        }
        if (l.to_all) size_union_gather(s);
        s.traffic.algorithm = pattern_algorithm(l);
    });
}

} // namespace sparse_reduce::detail
