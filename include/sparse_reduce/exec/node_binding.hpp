#pragma once
// A node of a rank's program with the peer and tags its streams use: what
// an executor (Boost.MPI, or the simulator) needs to move its messages.

namespace sparse_reduce::detail {

template <class Node>
struct node_binding {
    Node* node;
    int send_to;  // peer rank for the node's output stream, if it sends
    int send_tag; // its tag
    int recv_tag; // the tag of the streams it receives
};

} // namespace sparse_reduce::detail
