#pragma once
/// @file
/// reduce_scatter_balanced, a reduce_scatter whose index ranges give every rank
/// about the same number of RESULT entries. Include `<sparse_reduce/sparse_reduce.hpp>`.
///
///      std::vector<std::size_t> ranges = reduce_scatter_balanced(comm, in, out, op [, tolerance]);
///
/// Same inputs, outputs and errors as reduce_scatter (collective/reduce_scatter.hpp);
/// the ranges are chosen here and returned. Block ranges fail under skew: with
/// supports crowding the low indices (zipf), rank 0's block holds most of the
/// result. Balancing the positions of the inputs' entries is not enough either:
/// an index present on many ranks is many input entries but one result entry.
/// So the ranges come from histogramming over the DISTINCT positions:
///
///      1. find_splitters over every rank's entry positions (sorted already, one
///         key per input entry): ranges that balance the input entries each rank
///         receives in step 2;
///      2. a reduce_scatter of the supports (one byte per entry, bit_or) by those
///         ranges: each rank ends with the union of the supports in its range,
///         every position exactly once across ranks;
///      3. find_splitters over those distinct positions with P bins and the
///         tolerance: the splitters cut the union into P shares within
///         ±tolerance; one allreduce turns them into index boundaries;
///      4. the reduce_scatter of the values by these ranges.
///
/// Every rank then owns (1 ± tolerance) U / P result entries, U the size of the
/// union of the supports (fewer where values cancel to the identity). Steps
/// 1-3 cost two histogram searches and one pass of the supports (5 bytes per
/// entry) before the real exchange.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../collective/reduce_scatter.hpp"
#include "find_splitters.hpp"

namespace sparse_reduce {
namespace detail {

// What the balanced ranges need beyond the reduce_scatters' own, made
// before the call's first agreement (a rank that cannot allocate it fails
// on every rank; nothing allocates between the collectives after it): the
// input's positions, its support, the boundaries' scratch, both ranges.
struct balanced_memory {
    std::vector<std::uint64_t> pos, past, all;
    index_value_vector<std::uint8_t, std::uint64_t> support;
    std::vector<std::size_t> coarse, ranges;
};

// P + 1 index boundaries (into r, P + 1 long) from splitters over positions:
// boundary d is one past the largest position any rank holds left of
// splitter d - 1 (0 if none), kept non-decreasing. Exact for distinct
// positions; for repeated ones an index split between two bins goes wholly
// to the lower rank. past and all: room for a word per splitter.
inline void ranges_from_splitters(MPI_Comm pc, std::span<const std::uint64_t> sorted,
                                  const std::vector<splitter<std::uint64_t>>& sp, std::size_t dimension,
                                  balanced_memory& m, std::vector<std::size_t>& r)
{
    int me = 0, ranks = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &ranks);
    const std::uint64_t n = sorted.size();
    std::uint64_t base = 0;
    MPI_Exscan(&n, &base, 1, MPI_UINT64_T, MPI_SUM, pc);
    if (me == 0) base = 0;
    auto &past = m.past, &all = m.all;
    past.assign(sp.size(), 0);
    all.assign(sp.size(), 0);
    for (std::size_t d = 0; d < sp.size(); ++d) {
        const std::uint64_t below = count_below(sorted, base, sp[d], std::less<>{});
        past[d] = below ? sorted[below - 1] + 1 : 0;
    }
    if (!sp.empty())
        MPI_Allreduce(past.data(), all.data(), static_cast<int>(sp.size()), MPI_UINT64_T, MPI_MAX, pc);
    r.assign(static_cast<std::size_t>(ranks) + 1, 0);
    for (std::size_t d = 1; d < static_cast<std::size_t>(ranks); ++d)
        r[d] = std::clamp<std::size_t>(static_cast<std::size_t>(all[d - 1]), r[d - 1], dimension);
    r.back() = dimension;
}

template <representation In, index_value_representation Out, class Op>
    requires std::same_as<value_type_of<In>, value_type_of<Out>> && associative_op<Op, value_type_of<In>> &&
             std::is_trivially_copyable_v<value_type_of<In>>
std::vector<std::size_t> reduce_scatter_balanced_checked(const boost::mpi::communicator& comm, const In& in,
                                                         Out& out, const Op& op, double tolerance)
{
    using T = value_type_of<In>;
    detail::enter_collective(MPI_Comm(comm), "reduce_scatter_balanced");
    const MPI_Comm pc = detail::private_comm(MPI_Comm(comm));
    const std::size_t dim = dimension(in);
    const T id = identity<T>(op);

    // Positions of this rank's entries, read (and checked) once, and the
    // memory of the steps below; then agree.
    const auto P = static_cast<std::size_t>(comm.size());
    balanced_memory m;
    auto& pos = m.pos;
    std::string failure;
    if (!(tolerance >= 0 && tolerance < 1)) failure = "reduce_scatter_balanced: tolerance must be in [0, 1)";
    if (failure.empty()) {
        try {
            pos.reserve(std::min(stored_entries(in), dim));
            for (auto r = detail::make_reader(in, id); !r.done(); r.next())
                if (!detail::same_value(r.value(), id)) pos.push_back(r.index());
            m.support = index_value_vector<std::uint8_t, std::uint64_t>(dim);
            m.support.resize_nnz(pos.size());
            std::copy(pos.begin(), pos.end(), m.support.index_data());
            std::fill_n(m.support.value_data(), pos.size(), std::uint8_t{1});
            for (auto* v : {&m.past, &m.all}) v->reserve(P);
            for (auto* v : {&m.coarse, &m.ranges}) v->reserve(P + 1);
        } catch (...) {
            failure = detail::text_or_out_of_memory([] { return detail::current_exception_text(); });
        }
    }
    detail::agree_or_throw(pc, dim, 0, failure, "reduce_scatter_balanced");

    // 1. ranges balancing the input entries of step 2
    const auto first = find_splitters(comm, std::span<const std::uint64_t>(pos), static_cast<int>(P), 0.1);
    detail::ranges_from_splitters(pc, pos, first.splitters, dim, m, m.coarse);
    // 2. the union of the supports, each position once, by those ranges
    index_value_vector<std::uint8_t, std::uint64_t> merged;
    reduce_scatter(comm, m.support, merged, std::bit_or<>{}, m.coarse);
    // 3. splitters over the distinct positions, as index boundaries
    const auto fine = find_splitters(comm, merged.indices(), static_cast<int>(P), tolerance);
    detail::ranges_from_splitters(pc, merged.indices(), fine.splitters, dim, m, m.ranges);
    // 4. the values
    return reduce_scatter(comm, in, out, op, m.ranges);
}

} // namespace detail

/// reduce_scatter with ranges chosen so that every rank owns about the same
/// number of result entries (within ±tolerance). Collective. Any argument
/// types: a wrong one fails to compile with a message that names the fix.
/// @param comm      an intracommunicator
/// @param in        this rank's vector (any representation), same dimension everywhere
/// @param out       index_value_vector or Eigen::SparseVector: this rank's range of the result
/// @param op        an associative_op; folded in rank order
/// @param tolerance allowed deviation of a rank's share, as a fraction
/// @return the ranges used (P + 1 boundaries)
/// @throws sparse_reduce::error on every rank, as reduce_scatter
template <class In, class Out, class Op>
std::vector<std::size_t> reduce_scatter_balanced(const boost::mpi::communicator& comm, const In& in, Out&& out,
                                                 const Op& op, double tolerance = 0.02)
{
    if constexpr (detail::checked_call<In, Out, Op, detail::value_rule::trivially_copyable, true>())
        return detail::reduce_scatter_balanced_checked(comm, in, out, op, tolerance);
    else
        return {};
}

} // namespace sparse_reduce
