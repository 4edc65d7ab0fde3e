#pragma once
// grouped allreduce after Chen and Lee (n.d.) (detail;
// collective/allreduce.hpp): on a 2D mesh of ranks, a reduce_scatter within
// groups (updating), recursive doubling across corresponding members
// (integration), an allgather back (broadcasting). split_allgather is one
// group of all ranks.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../../error.hpp"
#include "../../kernel/convert.hpp"
#include "../../policy.hpp"
#include "../../repr/index_value_vector.hpp"
#include "../../report.hpp"
#include "../../select/group_shape.hpp"
#include "../../select/tuning.hpp"
#include "../reduce_scatter.hpp"
#include "partial_ops.hpp"
#include "recursive_doubling.hpp"
#include "range_allgather.hpp"
#include "split_allgather.hpp"
#include "status.hpp"

namespace sparse_reduce::detail {

// The mesh a grouped plan sees (policy::grouped's comment).
inline mesh_shape mesh_of(MPI_Comm comm, int rows, int cols)
{
    int P = 1, topo = MPI_UNDEFINED;
    MPI_Comm_size(comm, &P);
    MPI_Topo_test(comm, &topo);
    if (topo == MPI_CART && rows == 0 && cols == 0) {
        int nd = 0;
        MPI_Cartdim_get(comm, &nd);
        if (nd < 1 || nd > 2)
            fail("grouped: the communicator is a ", nd, "-dimensional cartesian one; 1 or 2 needed");
        int dims[2] = {1, 1}, periods[2] = {1, 1}, coords[2] = {0, 0};
        MPI_Cart_get(comm, nd, dims + (2 - nd), periods + (2 - nd), coords + (2 - nd));
        return {dims[0], dims[1], periods[0] && periods[1]};
    }
    if (rows || cols) {
        if (rows < 1 || cols < 1 || static_cast<long long>(rows) * cols != P)
            fail("grouped: a ", rows, "x", cols, " mesh for ", P, " ranks");
        return {rows, cols, false};
    }
    int dims[2] = {0, 0};
    MPI_Dims_create(P, 2, dims);
    return {dims[0], dims[1], false};
}

// A grouped plan's communicators: `group` (its members, in member order)
// and `across` (the members of the same position in every group, in group
// order), and the block ranges of the members.
struct group_layout {
    group_shape shape;
    boost::mpi::communicator group, across;
    MPI_Comm group_pc = MPI_COMM_NULL, across_pc = MPI_COMM_NULL;
    std::vector<std::size_t> ranges;
    int member = 0;
};

// The groups of shape g; collective. A rank without a shape (g null: it
// failed before) takes part in the splits with no group. Nothing here can
// fail before the splits, so a rank that cannot make its layout (null
// returned, `failure` set) leaves no other waiting; the caller agrees on
// the failure.
inline std::shared_ptr<group_layout> make_group_layout(MPI_Comm pc, const mesh_shape& m, const group_shape* g,
                                                       std::size_t dimension, std::string& failure)
{
    int me = 0;
    MPI_Comm_rank(pc, &me);
    int gid = MPI_UNDEFINED, member = MPI_UNDEFINED;
    if (g) {
        const int row = me / m.cols, col = me % m.cols;
        gid = (row / g->rows) * (m.cols / g->cols) + col / g->cols;
        member = (row % g->rows) * g->cols + col % g->cols;
    }
    MPI_Comm group = MPI_COMM_NULL, across = MPI_COMM_NULL;
    MPI_Comm_split(pc, gid, member, &group);
    MPI_Comm_split(pc, member, gid, &across);
    if (!g) return nullptr;
    try {
        auto l = std::make_shared<group_layout>();
        l->shape = *g;
        l->member = member;
        // handed over before Boost.MPI takes them: one it cannot take is left to MPI_Finalize, never freed twice
        l->group = boost::mpi::communicator(std::exchange(group, MPI_COMM_NULL), boost::mpi::comm_take_ownership);
        l->across = boost::mpi::communicator(std::exchange(across, MPI_COMM_NULL), boost::mpi::comm_take_ownership);
        l->group_pc = MPI_Comm(l->group); // new communicators: nobody else's messages on them
        l->across_pc = MPI_Comm(l->across);
        l->ranges = block_ranges(dimension, g->size());
        return l;
    } catch (...) {
        for (MPI_Comm* c : {&group, &across})
            if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
        failure = text_or_out_of_memory([&] { return "making the groups failed on " + current_failure_text(me); });
        return nullptr;
    }
}

// One group of all ranks of pc (split_allgather): the group is pc itself,
// in rank order, and nothing is across, so no communicator is made (a call
// completes its messages, so pc's later calls never see them).
inline group_layout whole_group_layout(MPI_Comm pc, std::size_t dimension)
{
    int me = 0, P = 1;
    MPI_Comm_rank(pc, &me);
    MPI_Comm_size(pc, &P);
    group_layout l;
    l.shape = {1, P};
    l.member = me;
    l.group = boost::mpi::communicator(pc, boost::mpi::comm_attach);
    l.across = boost::mpi::communicator(MPI_COMM_SELF, boost::mpi::comm_attach);
    l.group_pc = pc;
    l.across_pc = MPI_COMM_SELF;
    l.ranges = block_ranges(dimension, P);
    return l;
}

// A grouped plan's state: the mesh, and the groups (none until the first
// call when the model chooses them; shared by copies of a plan).
struct grouped_state {
    mesh_shape mesh{};
    std::shared_ptr<group_layout> layout;
};

// The model's group shape (policy::grouped without one), from this call's
// mean density, and the groups; collective, once per plan. A rank that
// cannot choose or make them fails on every rank.
template <class T, class Policy, class In>
void choose_groups(MPI_Comm pc, std::size_t dimension, const Policy& policy, grouped_state& gs, const In& in,
                   const T& id, bool commutative)
{
    std::string tuning_error;
    const tuning* t = policy.tuned ? &*policy.tuned : nullptr;
    try {
        if (!t) t = &current_tuning(policy.tuning_file);
    } catch (const std::exception& e) {
        tuning_error = unprefixed(e.what());
    }
    bool any_bad = false;
    const double mean = mean_entries(pc, in, id, !tuning_error.empty(), &any_bad);
    if (any_bad)
        fail("grouped: the tuning could not be read on some rank" +
             (tuning_error.empty() ? std::string() : ": " + tuning_error));
    int me = 0;
    MPI_Comm_rank(pc, &me);
    std::string failure;
    std::optional<group_shape> g;
    try {
        const double v = sizeof(T);
        replication::params p;
        p.N_a = dimension ? mean / static_cast<double>(dimension) : 0;
        p.T_x = (t->machine.index_bytes + v) / v;         // a sparse entry against a dense datum
        p.T_m = t->machine.gamma / (t->machine.beta * v); // one merge against one datum's transfer
        g = choose_group_shape(gs.mesh, policy.bidirectional_links, p, !commutative);
    } catch (...) {
        failure = text_or_out_of_memory([&] { return "choosing the groups failed on " + current_failure_text(me); });
    }
    auto layout = make_group_layout(pc, gs.mesh, g ? &*g : nullptr, dimension, failure);
    agree_and_throw(pc, me, failure, 0);
    gs.layout = std::move(layout);
}

// One grouped (or split_allgather) call on this rank, as steps: updating
// within the group (range_scatter), integration across the groups in group
// order (doubling_run), broadcasting within the group (range_allgather),
// all on `tag`; step(true) runs it to its end, step(false) as far as it
// goes without waiting. A failed rank (st) goes on with nothing. A dense
// range is built in `place` (this member's range of the caller's dense
// output) where it can be. After the agreement on failures (the caller's:
// blocking or started), finish writes the result. `counted`: this rank's
// entries per member's range, when counted already (automatic's choice),
// else empty. Not movable: its steps refer to it.
template <class In, class Out, class Op>
class grouped_call {
    using T = value_type_of<In>;
    using RI = repr_traits<std::remove_cvref_t<In>>;
    using RO = repr_traits<std::remove_cvref_t<Out>>;

public:
    grouped_call(const group_layout& g, int me, std::size_t dimension, const In& in, Out& out, const Op& op,
                 wire::format fmt, std::size_t window, exchange_buffers& buffers,
                 std::span<const std::uint64_t> counted, int tag)
        : st_(me), g_(g), dimension_(dimension), out_(out), op_(op), id_(identity<T>(op)), fmt_(fmt), window_(window),
          buffers_(buffers), tag_(tag)
    {
        if constexpr (RO::kind == repr_kind::dense) try {
                dense_out_ = RO::output(out, dimension).data(); // none on a rank whose output is of the wrong size
            } catch (...) {
                st_.fail_here();
            }
        if (dense_out_) place_ = dense_out_ + g.ranges[static_cast<std::size_t>(g.member)];
        try {
            check_dimension(in, dimension, st_.rank);
            // groups of one: no updating or broadcasting, the input is the
            // replica, built in a dense output as recursive_doubling builds it
            // (read where it is until the first step folds it): no copy of it
            if (g.shape.size() == 1)
                mine_ = partial_of(in, dimension, op, place_ ? std::span<T>(place_, dimension) : std::span<T>(),
                                   g.across.size() > 1);
            else if constexpr (RI::kind == repr_kind::dense)
                dense_in_ = RI::read(in).data(); // encoded from the caller's array
            else
                mine_ = partial_of(in, dimension, op);
        } catch (...) {
            st_.fail_here();
        }
        if (g.shape.size() > 1)
            scatter_.emplace(g.group_pc, mine_, dense_in_, g.ranges, window, id_, fmt, op, rep_, st_, buffers, tag,
                             place_, counted);
    }
    grouped_call(const grouped_call&) = delete;
    grouped_call& operator=(const grouped_call&) = delete;

    bool step(bool may_wait)
    {
        if (stage_ == stage::updating) {
            if (scatter_) {
                if (!scatter_->step(may_wait)) return false;
                acc_ = std::move(scatter_->result());
                entries_ = scatter_->entries();
                scatter_.reset();
                mine_ = {}; // the input's copy, not kept beside the result
            } else {
                acc_ = std::move(mine_);
            }
            stage_ = stage::integrating;
            if (g_.across.size() > 1) {
                entries_ = no_count;
                const auto m = static_cast<std::size_t>(g_.member);
                across_.emplace(g_.across_pc, std::move(acc_), g_.ranges[m + 1] - g_.ranges[m], op_, fmt_, window_,
                                st_, buffers_, tag_);
            }
        }
        if (stage_ == stage::integrating) {
            if (across_) {
                if (!across_->step(may_wait)) return false;
                rep_.bytes_sent += across_->rep().bytes_sent;
                rep_.bytes_received += across_->rep().bytes_received;
                rep_.messages_sent += across_->rep().messages_sent;
                acc_ = std::move(across_->result());
                across_.reset();
            }
            stage_ = stage::broadcasting;
            if (g_.shape.size() > 1)
                gather_.emplace(g_.group_pc, acc_, g_.ranges, window_, id_, fmt_, RO::kind == repr_kind::dense,
                                dense_out_, acc_.is_dense && place_ && acc_.external == place_, entries_, idx_, val_,
                                rep_, st_, buffers_, tag_);
        }
        if (gather_ && !gather_->step(may_wait)) return false;
        gather_.reset();
        return true;
    }

    const call_status& status() const { return st_; }

    // Once every rank agreed that none failed: the result into out, and the
    // report (its algorithm's text the caller's).
    report finish()
    {
        if (g_.shape.size() == 1) {
            result_into(out_, acc_, op_);
        } else if constexpr (RO::kind != repr_kind::dense) {
            convert_into(out_, index_value_vector<T, std::uint64_t>(dimension_, idx_, val_), op_);
        }
        return rep_;
    }

private:
    enum class stage { updating, integrating, broadcasting };

    call_status st_; // first: the steps refer to it
    const group_layout& g_;
    std::size_t dimension_;
    Out& out_;
    const Op& op_;
    T id_;
    wire::format fmt_;
    std::size_t window_;
    exchange_buffers& buffers_;
    int tag_;
    T* dense_out_ = nullptr;
    T* place_ = nullptr;
    partial<T> mine_;
    const T* dense_in_ = nullptr;
    partial<T> acc_;
    std::size_t entries_ = no_count;
    std::vector<std::uint64_t> idx_;
    value_vector<T> val_;
    report rep_;
    stage stage_ = stage::updating;
    std::optional<range_scatter<T, Op>> scatter_;
    std::optional<doubling_run<T, Op>> across_;
    std::optional<range_allgather<T>> gather_;
};

// The parameters in the report's algorithm text: "wire=..., segment=...)".
inline std::string stream_params(wire::format fmt, std::size_t segment_bytes)
{
    return "wire=" + std::string(wire::to_string(fmt)) + ", segment=" + std::to_string(segment_bytes) + ")";
}

// One blocking grouped (or split_allgather) call; `counted`: this rank's
// entries per member's range, when counted already (automatic's choice),
// else empty.
template <class Policy, class In, class Out, class Op>
report grouped_allreduce(MPI_Comm pc, std::size_t dimension, const Policy& policy, grouped_state& gs, const In& in,
                         Out& out, const Op& op, exchange_buffers& buffers,
                         std::span<const std::uint64_t> counted = {})
{
    using T = value_type_of<In>;
    int me = 0;
    MPI_Comm_rank(pc, &me);
    const T id = identity<T>(op);
    constexpr bool commutative = is_commutative_v<Op, T>;
    if constexpr (!rle_value<T>)
        if (policy.wire == wire::rle) fail("the rle wire format needs float or double values");
    if constexpr (std::same_as<Policy, policy::grouped>)
        if (!gs.layout) choose_groups<T>(pc, dimension, policy, gs, in, id, commutative);
    const group_layout& g = *gs.layout;
    if (!commutative && !contiguous_in_rank_order(g.shape, gs.mesh)) // the same on every rank
        fail("grouped: groups of " + to_string(g.shape) + " on a " + to_string(gs.mesh) +
             " mesh are not runs of consecutive ranks, which a non-commutative operation needs "
             "(use 1 x b groups or whole rows)");
    const std::size_t window = window_of<T>(policy.segment_bytes);
    grouped_call<In, Out, Op> call(g, me, dimension, in, out, op, policy.wire, window, buffers, counted, doubling_tag);
    call.step(true);
    agree_and_throw(pc, me, call.status().failure, call.status().heard);
    report rep = call.finish();
    try { // a text that cannot be made is left empty: the call succeeded on every rank
        const std::string params = stream_params(policy.wire, window * sizeof(T));
        rep.algorithm = std::same_as<Policy, policy::split_allgather>
                            ? "split_allgather(" + params
                            : "grouped(mesh " + to_string(gs.mesh) + ", groups " + to_string(g.shape) + ", " + params;
    } catch (...) {
    }
    return rep;
}

} // namespace sparse_reduce::detail
