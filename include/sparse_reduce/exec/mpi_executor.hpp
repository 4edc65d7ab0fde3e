#pragma once
// The Boost.MPI executor: drives reduce_node state machines with nonblocking
// point-to-point messages on the library's private communicator. Receives,
// folds and sends overlap: while a node folds one window, the next message
// from each child is already being received and the previous output message
// is being sent. Several nodes can share one rank (the root of a forwarded
// tree is both an inner node and the receiver of the result) and are driven
// together, so neither waits on the other.

#include <cstddef>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <mpi.h>

#include "../error.hpp"
#include "../mpi/tags.hpp"
#include "comm_state.hpp"

namespace sparse_reduce::detail {

template <class Node>
struct node_binding {
    Node* node;
    int send_to;  // peer rank for the node's output stream, if it sends
    int send_tag; // its tag
    int recv_tag; // the tag of the streams it receives
};

template <class Node>
void run_nodes(MPI_Comm comm, std::vector<node_binding<Node>> nodes)
{
    // Request slots: per node, one per child, then two for its send buffers.
    std::vector<std::size_t> base(nodes.size());
    std::size_t slots = 0;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        base[k] = slots;
        slots += nodes[k].node->child_count() + 2;
    }
    std::vector<MPI_Request> req(slots, MPI_REQUEST_NULL);
    for (;;) {
        bool all_done = true;
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            auto& [node, send_to, send_tag, recv_tag] = nodes[k];
            node->progress();
            for (std::size_t c = 0; c < node->child_count(); ++c)
                if (auto slot = node->receive_slot(c))
                    MPI_Irecv(slot->data(), static_cast<int>(slot->size()), MPI_BYTE, node->child_rank(c), recv_tag, comm,
                              &req[base[k] + c]);
            while (auto out = node->take_outgoing())
                MPI_Isend(out->bytes.data(), static_cast<int>(out->bytes.size()), MPI_BYTE, send_to, send_tag, comm,
                          &req[base[k] + node->child_count() + static_cast<std::size_t>(out->buffer)]);
            all_done &= node->finished() && node->idle();
        }
        if (all_done) return;
        int index = MPI_UNDEFINED;
        MPI_Status status;
        MPI_Waitany(static_cast<int>(slots), req.data(), &index, &status);
        if (index == MPI_UNDEFINED) fail("internal error: reduction stalled with nothing in flight");
        std::size_t k = 0;
        while (k + 1 < nodes.size() && base[k + 1] <= static_cast<std::size_t>(index)) ++k;
        const std::size_t slot = static_cast<std::size_t>(index) - base[k];
        Node& node = *nodes[k].node;
        if (slot < node.child_count()) {
            int bytes = 0;
            MPI_Get_count(&status, MPI_BYTE, &bytes);
            node.on_message(slot, static_cast<std::size_t>(bytes));
        } else {
            node.on_sent(static_cast<int>(slot - node.child_count()));
        }
    }
}

} // namespace sparse_reduce::detail
