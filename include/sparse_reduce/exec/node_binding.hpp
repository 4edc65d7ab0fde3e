#pragma once
// A node of a rank's program with the peer and tags its streams use: what
// an executor (Boost.MPI, or the simulator) needs to move its messages.
//
// node_binding keeps the node's type (the simulator reads its counters);
// node_ref reaches it through a table of its functions, so the MPI
// executor (exec/mpi_executor.hpp) is compiled once, not once per value
// type, operation and reader. The table is called per message, never per
// entry.

#include <cstddef>
#include <optional>
#include <span>

namespace sparse_reduce::detail {

template <class Node>
struct node_binding {
    Node* node;
    int send_to;  // peer rank for the node's output stream, if it sends
    int send_tag; // its tag
    int recv_tag; // the tag of the streams it receives
};

// A message a node has ready; its buffer stays untouched until on_sent(buffer).
struct outgoing_message {
    int buffer;
    std::span<const std::byte> bytes;
};

// A node's functions as the executor calls them (reduce_node's members).
struct node_ops {
    void (*progress)(void*);
    std::size_t (*child_count)(const void*);
    int (*child_rank)(const void*, std::size_t);
    std::optional<std::span<std::byte>> (*receive_slot)(void*, std::size_t);
    std::optional<outgoing_message> (*take_outgoing)(void*);
    void (*on_message)(void*, std::size_t child, std::size_t bytes);
    void (*on_sent)(void*, int buffer);
    bool (*done)(const void*); // finished and idle: nothing left to do or in flight
    bool (*work_ahead)(void*);
};

template <class Node>
const node_ops& node_ops_of()
{
    static constexpr node_ops ops = {
        [](void* n) { static_cast<Node*>(n)->progress(); },
        [](const void* n) { return static_cast<const Node*>(n)->child_count(); },
        [](const void* n, std::size_t c) { return static_cast<const Node*>(n)->child_rank(c); },
        [](void* n, std::size_t c) { return static_cast<Node*>(n)->receive_slot(c); },
        [](void* n) { return static_cast<Node*>(n)->take_outgoing(); },
        [](void* n, std::size_t c, std::size_t bytes) { static_cast<Node*>(n)->on_message(c, bytes); },
        [](void* n, int b) { static_cast<Node*>(n)->on_sent(b); },
        [](const void* n) {
            const Node* node = static_cast<const Node*>(n);
            return node->finished() && node->idle();
        },
        [](void* n) { return static_cast<Node*>(n)->work_ahead(); },
    };
    return ops;
}

struct node_ref {
    void* node;
    const node_ops* ops;
    int send_to, send_tag, recv_tag; // as node_binding's

    template <class Node>
    explicit node_ref(const node_binding<Node>& b)
        : node(b.node), ops(&node_ops_of<Node>()), send_to(b.send_to), send_tag(b.send_tag), recv_tag(b.recv_tag)
    {
    }
};

} // namespace sparse_reduce::detail
