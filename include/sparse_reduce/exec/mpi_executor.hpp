#pragma once
// The Boost.MPI executor: drives reduce_node state machines with nonblocking
// point-to-point messages on the library's private communicator. Receives,
// folds and sends overlap: while a node folds one window, the next message
// from each child is already being received and the previous output message
// is being sent. Several nodes can share one rank (the root of a forwarded
// tree is both an inner node and the receiver of the result) and are driven
// together, so neither waits on the other.

#include <cstddef>
#include <memory_resource>
#include <new>
#include <span>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../error.hpp"
#include "../mpi/tags.hpp"
#include "comm_state.hpp"
#include "node_binding.hpp"
#include "whole_transport.hpp"

namespace sparse_reduce::detail {

// mem: the request arrays (the call's arena, exec/call_arena.hpp).
// ready(failure): called once, when the arrays are made and before the
// first message; failure says why they could not be made (empty: they
// were). It may end the call on every rank (reduce_core::settle), and
// throws when failure is not empty.
template <class Node, class Ready>
void run_nodes(MPI_Comm comm, std::span<node_binding<Node>> nodes, std::pmr::memory_resource* mem, Ready&& ready)
{
    // Request slots: per node, one per child, then two for its send buffers.
    std::pmr::vector<std::size_t> base(mem);
    std::pmr::vector<MPI_Request> req(mem);
    std::pmr::vector<std::byte*> received_into(mem);
    std::size_t slots = 0;
    std::string failure;
    try {
        base.resize(nodes.size());
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            base[k] = slots;
            slots += nodes[k].node->child_count() + 2;
        }
        req.assign(slots, MPI_REQUEST_NULL);
        received_into.assign(slots, nullptr);
    } catch (const std::bad_alloc&) {
        failure = current_exception_text();
    }
    ready(failure);
    if (!failure.empty()) fail(failure); // (ready has thrown)
    for (;;) {
        bool all_done = true;
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            auto& [node, send_to, send_tag, recv_tag] = nodes[k];
            node->progress();
            for (std::size_t c = 0; c < node->child_count(); ++c)
                if (auto slot = node->receive_slot(c)) {
                    received_into[base[k] + c] = slot->data();
                    MPI_Irecv(slot->data(), static_cast<int>(slot->size()), MPI_BYTE, node->child_rank(c), recv_tag, comm,
                              &req[base[k] + c]);
                }
            while (auto out = node->take_outgoing())
                MPI_Isend(out->bytes.data(), static_cast<int>(out->bytes.size()), MPI_BYTE, send_to, send_tag, comm,
                          &req[base[k] + node->child_count() + static_cast<std::size_t>(out->buffer)]);
            all_done &= node->finished() && node->idle();
        }
        if (all_done) return;
        // Blocked: a node with work to do ahead does a piece of it between
        // tests, rather than waiting idle (reduce_node::work_ahead).
        bool ahead = false;
        for (auto& b : nodes) ahead = ahead || b.node->work_ahead();
        int index = MPI_UNDEFINED, flag = 0;
        MPI_Status status;
        if (ahead) {
            MPI_Testany(static_cast<int>(slots), req.data(), &index, &flag, &status);
            if (!flag || index == MPI_UNDEFINED) continue;
        } else {
            MPI_Waitany(static_cast<int>(slots), req.data(), &index, &status);
        }
        if (index == MPI_UNDEFINED) fail("internal error: reduction stalled with nothing in flight");
        std::size_t k = 0;
        while (k + 1 < nodes.size() && base[k + 1] <= static_cast<std::size_t>(index)) ++k;
        const std::size_t slot = static_cast<std::size_t>(index) - base[k];
        Node& node = *nodes[k].node;
        if (slot < node.child_count()) {
            int bytes = 0;
            MPI_Get_count(&status, MPI_BYTE, &bytes);
            drain_whole_pieces(comm, node.child_rank(slot), nodes[k].recv_tag, received_into[static_cast<std::size_t>(index)],
                               static_cast<std::size_t>(bytes));
            node.on_message(slot, static_cast<std::size_t>(bytes));
        } else {
            node.on_sent(static_cast<int>(slot - node.child_count()));
        }
    }
}

} // namespace sparse_reduce::detail
