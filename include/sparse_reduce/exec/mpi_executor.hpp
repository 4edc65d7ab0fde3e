#pragma once
// The MPI executor: drives reduce_node state machines with nonblocking
// point-to-point messages on the library's private communicator. Receives,
// folds and sends overlap: while a node folds one window, the next message
// from each child is already being received and the previous output message
// is being sent. Several nodes can share one rank (the root of a forwarded
// tree is both an inner node and the receiver of the result) and are driven
// together, so neither waits on the other.
//
// node_run is the executor as an object that its caller advances, a step
// (one completed request) at a time, or to the end (run). It reaches the
// nodes through node_ref (exec/node_binding.hpp), so it is compiled once
// whatever the nodes' value type, operation and reader.

#include <cstddef>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <mpi.h>

#include "call_arena.hpp"
#include "../error.hpp"
#include "node_binding.hpp"
#include "whole_transport.hpp"

namespace sparse_reduce::detail {

class node_run {
public:
    // nodes: this rank's nodes, which outlive the run; mem: the request
    // arrays (the call's arena, exec/call_arena.hpp). A rank that cannot
    // make them says why in failure() and must not advance: the caller
    // agrees on it with the other ranks first (reduce_core::settle).
    node_run(MPI_Comm comm, std::span<const node_ref> nodes, call_arena::lease* mem)
        : comm_(comm), nodes_(nodes), base_(mem), req_(mem), received_into_(mem)
    {
        try {
            base_.resize(nodes.size());
            for (std::size_t k = 0; k < nodes.size(); ++k) {
                base_[k] = slots_;
                // per node: one slot per child, then two for its send buffers
                slots_ += nodes[k].ops->child_count(nodes[k].node) + 2;
            }
            req_.assign(slots_, MPI_REQUEST_NULL);
            received_into_.assign(slots_, nullptr);
        } catch (const std::bad_alloc&) {
            failure_ = current_exception_text();
        }
    }
    node_run(const node_run&) = delete;
    node_run& operator=(const node_run&) = delete;

    const std::string& failure() const { return failure_; }

    // Every node's next step: what it has ready is posted, then one
    // completed request is handled, waited for unless a node has work to
    // do ahead. True once every node is done, nothing in flight.
    bool advance() { return step(true) == moved::done; }

    void run()
    {
        while (!advance()) {
        }
    }

    // Steps without ever waiting, until every node is done (true) or
    // nothing moves (false): a started call's test (collective/reduce_request.hpp).
    bool poll()
    {
        for (;;) {
            const moved m = step(false);
            if (m != moved::on) return m == moved::done;
        }
    }

private:
    enum class moved { done, on, idle }; // idle: nothing completed, no work ahead
    moved step(bool may_wait);

    MPI_Comm comm_;
    std::span<const node_ref> nodes_;
    arena_array<std::size_t> base_; // node k's first request slot
    arena_array<MPI_Request> req_;
    arena_array<std::byte*> received_into_;
    std::size_t slots_ = 0;
    std::string failure_;
};

inline node_run::moved node_run::step(bool may_wait)
{
    if (!failure_.empty()) fail(failure_); // (the caller's agreement has thrown already)
    bool all_done = true;
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
        const node_ref& b = nodes_[k];
        const node_ops& n = *b.ops;
        n.progress(b.node);
        const std::size_t children = n.child_count(b.node);
        for (std::size_t c = 0; c < children; ++c)
            if (auto slot = n.receive_slot(b.node, c)) {
                received_into_[base_[k] + c] = slot->data();
                MPI_Irecv(slot->data(), static_cast<int>(slot->size()), MPI_BYTE, n.child_rank(b.node, c), b.recv_tag,
                          comm_, &req_[base_[k] + c]);
            }
        while (auto out = n.take_outgoing(b.node))
            MPI_Isend(out->bytes.data(), static_cast<int>(out->bytes.size()), MPI_BYTE, b.send_to, b.send_tag, comm_,
                      &req_[base_[k] + children + static_cast<std::size_t>(out->buffer)]);
        all_done &= n.done(b.node);
    }
    if (all_done) return moved::done;
    // Blocked: a node with work to do ahead does a piece of it between
    // tests, rather than waiting idle (reduce_node::work_ahead).
    bool ahead = false;
    for (const node_ref& b : nodes_) ahead = ahead || b.ops->work_ahead(b.node);
    int index = MPI_UNDEFINED, flag = 0;
    MPI_Status status;
    if (ahead || !may_wait) {
        MPI_Testany(static_cast<int>(slots_), req_.data(), &index, &flag, &status);
        if (!flag) return ahead ? moved::on : moved::idle;
        if (index == MPI_UNDEFINED && ahead) return moved::on;
    } else {
        MPI_Waitany(static_cast<int>(slots_), req_.data(), &index, &status);
    }
    if (index == MPI_UNDEFINED) fail("internal error: reduction stalled with nothing in flight");
    std::size_t k = 0;
    while (k + 1 < nodes_.size() && base_[k + 1] <= static_cast<std::size_t>(index)) ++k;
    const std::size_t slot = static_cast<std::size_t>(index) - base_[k];
    const node_ref& b = nodes_[k];
    const std::size_t children = b.ops->child_count(b.node);
    if (slot < children) {
        int bytes = 0;
        MPI_Get_count(&status, MPI_BYTE, &bytes);
        drain_whole_pieces(comm_, b.ops->child_rank(b.node, slot), b.recv_tag,
                           received_into_[static_cast<std::size_t>(index)], static_cast<std::size_t>(bytes));
        b.ops->on_message(b.node, slot, static_cast<std::size_t>(bytes));
    } else {
        b.ops->on_sent(b.node, static_cast<int>(slot - children));
    }
    return moved::on;
}

} // namespace sparse_reduce::detail
